"""Every recorded RM/NM response (tests/rm/record_fixtures.py, a real Hadoop 2.7.7 local cluster running
`pi 2 10` on application_1795326552648_0001) parses into the typed models with the recorded values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rmfakes import FakeTransport, fixture, fixture_doc, ok
from yarnctl.model import Resources
from yarnctl.rm import (
    AppNotFound,
    HistoryServer,
    NodeManager,
    ResourceManager,
    ResourceRequestInfo,
    UsageStat,
)

RM, NM, JHS = "http://rm:8088", "http://nm:8042", "http://jhs:19888"
APP = "application_1795326552648_0001"
AM = "container_1795326552648_0001_01_000001"


def rm_with(path: str, name: str) -> ResourceManager:
    return ResourceManager([RM], transport=FakeTransport({(RM, path): ok(fixture(name))}))


def nm_with(path: str, name: str) -> NodeManager:
    return NodeManager(NM, transport=FakeTransport({(NM, path): ok(fixture(name))}))


def jhs_with(path: str, name: str) -> HistoryServer:
    return HistoryServer(JHS, transport=FakeTransport({(JHS, path): ok(fixture(name))}))


CASES: list[tuple[str, Callable[[], Any], dict[str, Any]]] = [
    ("cluster_info", lambda: rm_with("/info", "cluster_info").cluster_info(),
     {"id": 1795326552648, "state": "STARTED", "ha_state": "ACTIVE", "rm_version": "2.7.7",
      "hadoop_version": "2.7.7", "ha_zookeeper_state": "ResourceManager HA is not enabled."}),
    ("metrics-running", lambda: rm_with("/metrics", "cluster_metrics_running").metrics(),
     {"apps_submitted": 1, "apps_running": 1, "allocated": Resources(1280, 3), "available": Resources(6912, 5),
      "total": Resources(8192, 8), "containers_allocated": 3, "active_nodes": 2, "lost_nodes": 0}),
    # recorded right after the app turned FINISHED: the RM's queue metrics still count it and its AM
    ("metrics-at-finish", lambda: rm_with("/metrics", "cluster_metrics").metrics(),
     {"apps_completed": 0, "apps_running": 1, "allocated": Resources(512, 1), "total": Resources(8192, 8)}),
    ("scheduler-fifo-running", lambda: rm_with("/scheduler", "scheduler_running").scheduler().fifo,
     {"capacity": 1.0, "qstate": "RUNNING", "min_queue_memory_mb": 128, "max_queue_memory_mb": 4096,
      "num_nodes": 2, "total_node_mb": 8192, "used_node_mb": 1280, "num_containers": 3}),
    ("app-running", lambda: rm_with(f"/apps/{APP}", "app_running").app(APP),
     {"id": APP, "state": "RUNNING", "final_status": "UNDEFINED", "user": "root", "name": "QuasiMonteCarlo",
      "queue": "default", "application_type": "MAPREDUCE", "application_tags": (), "progress": 5.0,
      "allocated": Resources(1280, 3), "running_containers": 3, "memory_seconds": 1466, "vcore_seconds": 2,
      "started_time_ms": 1795326565641, "finished_time_ms": 0, "elapsed_time_ms": 4678,
      "am_host_http_address": "localhost:45249"}),
    ("app-finished", lambda: rm_with(f"/apps/{APP}", "app_finished").app(APP),
     {"state": "FINISHED", "final_status": "SUCCEEDED", "progress": 100.0, "finished_time_ms": 1795326577767,
      "memory_seconds": 9517, "vcore_seconds": 18, "elapsed_time_ms": 12126}),
    ("attempts", lambda: rm_with("/appattempts", "app_attempts").app_attempts(APP)[0],
     {"id": 1, "start_time_ms": 1795326565660, "container_id": AM, "node_id": "localhost:50291",
      "node_http_address": "localhost:45249", "blacklisted_nodes": ()}),
    ("nm-info", lambda: nm_with("/node/info", "nm_info").info(),
     {"id": "localhost:50291", "healthy": True, "total_pmem_mb": 4096, "total_vcores": 4,
      "vmem_check_enabled": True, "pmem_check_enabled": False, "nm_version": "2.7.7"}),
    ("nm-container-am", lambda: nm_with("/containers", "nm_containers").containers()[0],
     {"id": AM, "state": "RUNNING", "exit_code": -1000, "user": "root", "needed": Resources(512, 1),
      "node_id": "localhost:50291"}),
    # recorded from the JobHistoryServer of another local cluster (same Hadoop 2.7.7 jars)
    ("history-info", lambda: jhs_with("/ws/v1/history/info", "history_info").info(),
     {"started_on_ms": 1795331651170, "hadoop_version": "2.7.7",
      "hadoop_build_version": "2.7.7 from c1aad84bd27cd79c3d1a7dd58202a8c3ee1ed3ac by stevel source checksum "
                              "792e15d20b12c74bd6f19a1fb886490",
      "hadoop_version_built_on": "2018-07-19T20:34Z"}),
    ("shim-bean", lambda: rm_with("/jmx", "rm_jmx_shim").shim_metrics(),
     {"heartbeats": 11, "delegated": 11, "fallback": 0, "full_syncs": 1, "breaker_open": False,
      "last_latency_micros": 935, "deadline_millis": 10}),
]


@pytest.mark.parametrize("name,call,expected", CASES, ids=[c[0] for c in CASES])
def test_fixture_parses_to_recorded_values(name: str, call: Callable[[], Any], expected: dict[str, Any]) -> None:
    got = call()
    assert {k: getattr(got, k) for k in expected} == expected


def test_check_fixture_values_against_raw_json() -> None:
    # guards the table above against drifting from a re-recording: the raw numbers must agree
    app = fixture_doc("app_running")["app"]
    assert (app["id"], app["memorySeconds"], app["allocatedMB"]) == (APP, 1466, 1280)


def test_running_app_pending_requests_are_typed_rows() -> None:
    app = rm_with("/apps", "apps_running").apps()[0]
    assert app.resource_requests == (
        ResourceRequestInfo(0, Resources(512, 1), 0, "*", True),
        ResourceRequestInfo(20, Resources(384, 1), 2, "localhost", True),
        ResourceRequestInfo(20, Resources(384, 1), 0, "*", True),
    )
    assert app.pending == Resources(0, 0)  # ANY rows: the recorded moment had nothing outstanding at ANY


def test_finished_app_keeps_all_five_ask_rows_with_reduce_priority() -> None:
    app = rm_with("/apps", "apps_finished").apps(states=["FINISHED"])[0]
    assert [(r.priority, r.resource_name) for r in app.resource_requests] == [
        (0, "*"), (20, "localhost"), (20, "/default-rack"), (20, "*"), (10, "*")]


@pytest.mark.parametrize("name,expected", [
    ("nodes_running", {"localhost:42265": ("RUNNING", 2, Resources(768, 2), Resources(4096, 4)),
                       "localhost:50291": ("RUNNING", 1, Resources(512, 1), Resources(4096, 4))}),
    ("nodes_idle", {"localhost:42265": ("RUNNING", 0, Resources(0, 0), Resources(4096, 4)),
                    "localhost:50291": ("RUNNING", 0, Resources(0, 0), Resources(4096, 4))}),
], ids=["running", "idle"])
def test_nodes(name: str, expected: dict[str, tuple[str, int, Resources, Resources]]) -> None:
    nodes = rm_with("/nodes", name).nodes(states=["RUNNING"])
    assert {n.id: (n.state, n.num_containers, n.used, n.capacity) for n in nodes} == expected
    assert all(n.rack == "/default-rack" and n.host == "localhost" for n in nodes)


def test_nodes_states_filter_is_sent() -> None:
    t = FakeTransport({(RM, "/nodes"): ok(fixture("nodes_idle"))})
    seen: list[dict[str, str]] = []
    real = t.get
    t.get = lambda url, params: (seen.append(dict(params)), real(url, params))[1]  # type: ignore[method-assign]
    ResourceManager([RM], transport=t).nodes(states=["RUNNING", "UNHEALTHY"])
    assert seen == [{"states": "RUNNING,UNHEALTHY"}]


def test_apps_filters_become_hadoop_query_parameters() -> None:
    seen: list[dict[str, str]] = []

    def answer(url: str, params: Any) -> Any:
        seen.append(dict(params))
        return ok(fixture("apps_finished"))

    rm = ResourceManager([RM], transport=FakeTransport({(RM, "/apps"): answer}))
    rm.apps(state="RUNNING", states=["RUNNING", "ACCEPTED"], final_status="UNDEFINED", user="root",
            queue="default", limit=5, started_begin_ms=1, started_end_ms=2, finished_begin_ms=3, finished_end_ms=4,
            application_types=["MAPREDUCE", "YARN"], application_tags=["a", "b"])
    assert seen == [{"state": "RUNNING", "states": "RUNNING,ACCEPTED", "finalStatus": "UNDEFINED", "user": "root",
                     "queue": "default", "limit": "5", "startedTimeBegin": "1", "startedTimeEnd": "2",
                     "finishedTimeBegin": "3", "finishedTimeEnd": "4", "applicationTypes": "MAPREDUCE,YARN",
                     "applicationTags": "a,b"}]


def test_unknown_app_is_app_not_found_naming_the_id() -> None:
    rec = fixture_doc("app_not_found")
    assert rec["status"] == 404
    import json
    from yarnctl.rm import Reply
    rm = ResourceManager([RM], transport=FakeTransport(
        {(RM, "/apps/application_1000000000000_9999"): Reply("", 404, json.dumps(rec["body"]))}))
    with pytest.raises(AppNotFound) as e:
        rm.app("application_1000000000000_9999")
    assert e.value.app_id == "application_1000000000000_9999"
    assert "application_1000000000000_9999" in str(e.value) and "HTTP 404" in str(e.value)


def test_rm_jmx_beans() -> None:
    beans = {b.short_name: b for b in rm_with("/jmx", "rm_jmx").jmx()}
    assert beans["ClusterMetrics"].attributes["NumActiveNMs"] == 2
    assert "JvmMetrics" in beans and "RMNMInfo" in beans


def test_shim_metrics_absent_without_shim() -> None:
    empty = ResourceManager([RM], transport=FakeTransport({(RM, "/jmx"): ok('{"beans": []}')}))
    assert empty.shim_metrics() is None


def test_nm_container_usage_beans() -> None:
    usage = {u.container_id: u for u in nm_with("/jmx", "nm_jmx").container_usage()}
    am = usage[AM]
    assert (am.pid, am.pmem_limit_mb, am.vmem_limit_mb, am.vcore_limit) == (545, 512, 512000, 1)
    assert am.pmem_mb == UsageStat(10, 195.7, pytest.approx(33.6024139), 104.0, 213.0, 104.0, 213.0)
    assert am.cpu_percent is not None and am.cpu_percent.max == 109.0
    assert am.milli_vcores is not None and (am.milli_vcores.samples, am.milli_vcores.max) == (9, 2180.0)
    # a container whose record the NM has not published yet: present, no stats
    late = usage["container_1795326552648_0001_01_000004"]
    assert (late.pmem_mb, late.cpu_percent, late.milli_vcores, late.pid) == (None, None, None, None)


def test_history_tasks_of_a_finished_sleep_job() -> None:
    """A SleepJob of 2 maps and 1 reduce, as the JobHistoryServer reports it (what `yarnctl bench` reads)."""
    job = "job_1795342470864_0001"
    tasks = jhs_with(f"/ws/v1/history/mapreduce/jobs/{job}/tasks", "history_tasks").job_tasks(
        "application_1795342470864_0001")
    assert sorted(t.type for t in tasks) == ["MAP", "MAP", "REDUCE"]
    assert all(t.state == "SUCCEEDED" and 0 < t.start_time_ms < t.finish_time_ms for t in tasks)
    reduce = next(t for t in tasks if t.type == "REDUCE")
    assert (reduce.id, reduce.start_time_ms) == ("task_1795342470864_0001_r_000000", 1795342492782)


def test_history_counters_of_a_hibench_wordcount_give_its_map_locality() -> None:
    """HiBench's micro/wordcount on the local HDFS cluster (groups trimmed): 7 maps data-local, 1 rack-local."""
    from yarnctl.bench.collect import JOB_COUNTER, maps_local

    job = "job_1795787843434_0002"
    counters = jhs_with(f"/ws/v1/history/mapreduce/jobs/{job}/counters", "history_job_counters").job_counters(
        "application_1795787843434_0002")
    assert list(counters) == ["org.apache.hadoop.mapreduce.FileSystemCounter", JOB_COUNTER, "Shuffle Errors"]
    assert counters[JOB_COUNTER]["TOTAL_LAUNCHED_MAPS"] == 8
    assert maps_local(counters) == (7, 1, 0)  # OTHER_LOCAL_MAPS absent: none off-switch
    assert maps_local({JOB_COUNTER: {"TOTAL_LAUNCHED_MAPS": 2}}) == ()  # a job that counted no locality
