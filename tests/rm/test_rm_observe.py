"""ClusterObserver and ControlLoop on the recorded RM/NM responses, and through a real HTTP server that dies."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fixturerm import FixtureRM
from rmfakes import FakeTransport, fixture, ok

from yarnctl.model import Observation, Resources
from yarnctl.rm import HttpSettings, NodeManager, ResourceManager, RMUnreachable
from yarnctl.rm.observe import ClusterObserver, ControlLoop, LoopState, Reading, app_of

RM = "http://rm:8088"
NM = "http://localhost:45249"  # the node of nodes_running.json whose containers nm_containers/nm_jmx recorded
OTHER_NM = "http://localhost:57729"

RM_TABLE: dict[tuple[str, str], Any] = {
    (RM, "/ws/v1/cluster/nodes"): ok(fixture("nodes_running")),
    (RM, "/ws/v1/cluster/apps"): ok(fixture("apps_running")),
    (RM, "/jmx"): ok(fixture("rm_jmx_shim")),
}


def observer(nm_table: dict[tuple[str, str], Any] | None = None, usage: bool = True) -> ClusterObserver:
    nm_fake = FakeTransport(nm_table if nm_table is not None else {
        (NM, "/ws/v1/node/containers"): ok(fixture("nm_containers")),
        (NM, "/jmx"): ok(fixture("nm_jmx")),
        (OTHER_NM, "/ws/v1/node/containers"): ok('{"containers": null}'),
        (OTHER_NM, "/jmx"): ok('{"beans": []}'),
    })
    rm = ResourceManager([RM], transport=FakeTransport(RM_TABLE), sleep=lambda s: None)
    return ClusterObserver(rm, usage=usage, clock=lambda: 1000.0,
                           node_manager=lambda url: NodeManager(url, transport=nm_fake, sleep=lambda s: None))


def test_reading_carries_nodes_apps_usage_and_shim() -> None:
    reading = observer().read()
    obs = reading.observation
    assert obs.at_s == 1000.0
    assert sorted(obs.nodes) == ["localhost:42265", "localhost:50291"]
    nodes = json.loads(fixture("nodes_running"))["nodes"]["node"]
    used = sum(n["usedMemoryMB"] for n in nodes)
    assert obs.allocated.memory_mb == used
    assert obs.capacity.memory_mb == used + sum(n["availMemoryMB"] for n in nodes)
    app = json.loads(fixture("apps_running"))["apps"]["app"][0]
    usage = obs.apps[app["id"]]
    assert (usage.memory_seconds, usage.vcore_seconds) == (app["memorySeconds"], app["vcoreSeconds"])
    assert usage.allocated == Resources(app["allocatedMB"], app["allocatedVCores"])
    any_rows = [r for r in app["resourceRequests"] if r["resourceName"] == "*"]
    assert usage.pending_containers == sum(r["numContainers"] for r in any_rows)
    assert usage.queue == app["queue"] and usage.user == app["user"]
    # both RUNNING containers of nm_containers.json have beans in nm_jmx.json, but 000004's has no
    # sample yet (recorded just after launch): only 000001 is measured
    assert obs.usage_measured
    assert list(obs.containers) == ["container_1795326552648_0001_01_000001"]
    c = obs.containers["container_1795326552648_0001_01_000001"]
    assert (c.node_id, c.app_id) == ("localhost:50291", app["id"])
    assert c.memory_mb == pytest.approx(195.7)  # PMemUsageMBsAvgMBs
    assert c.vcores == pytest.approx(0.23555555)  # PCpuUsagePercentAvgPercents / 100
    assert reading.shim is not None and reading.shim.delegated > 0
    assert reading.nm_failures == 0


def test_finished_containers_beans_are_ignored() -> None:
    doc = json.loads(fixture("nm_containers"))
    for c in doc["containers"]["container"]:
        c["state"] = "DONE"
    obs = observer({(NM, "/ws/v1/node/containers"): ok(json.dumps(doc)), (NM, "/jmx"): ok(fixture("nm_jmx")),
                    (OTHER_NM, "/ws/v1/node/containers"): ok('{"containers": null}'),
                    (OTHER_NM, "/jmx"): ok('{"beans": []}')}).read().observation
    assert obs.containers == {} and obs.usage_measured


def test_an_unreachable_nodemanager_is_counted_not_fatal() -> None:
    reading = observer({(NM, "/ws/v1/node/containers"): ok(fixture("nm_containers")),
                        (NM, "/jmx"): ok(fixture("nm_jmx"))}).read()  # OTHER_NM refuses
    assert reading.nm_failures == 1
    assert len(reading.observation.containers) == 1 and reading.observation.usage_measured


def test_usage_off_reads_no_nodemanager() -> None:
    reading = observer({}, usage=False).read()  # every NM call would fail
    assert reading.nm_failures == 0
    assert not reading.observation.usage_measured and reading.observation.containers == {}


@pytest.mark.parametrize("cid, app", [
    ("container_1795326552648_0001_01_000004", "application_1795326552648_0001"),
    ("container_e17_1410901177871_0012_01_000005", "application_1410901177871_0012"),
    ("garbage", "garbage"),
])
def test_app_of_container_ids(cid: str, app: str) -> None:
    assert app_of(cid) == app


@pytest.fixture
def fixture_rm() -> Iterator[FixtureRM]:
    rm = FixtureRM()
    yield rm
    rm.stop()


def test_rm_outage_keeps_the_last_observation_marks_it_stale_and_recovers(
        fixture_rm: FixtureRM, caplog: pytest.LogCaptureFixture) -> None:
    fed: list[Observation] = []
    now = [5000.0]
    rm = ResourceManager([f"http://127.0.0.1:{fixture_rm.port}"],
                         settings=HttpSettings(connect_timeout_s=0.5, read_timeout_s=2.0, retries=0))
    loop = ControlLoop(ClusterObserver(rm, usage=False, clock=lambda: now[0]), fed.append, 5.0, clock=lambda: now[0])
    first = loop.poll()
    assert not first.stale and first.ok_at == 5000.0 and len(fed) == 1

    fixture_rm.stop()
    caplog.set_level(logging.INFO, logger="yarnctl.rm.observe")
    for _ in range(3):
        now[0] += 5
        st = loop.poll()
    assert st.stale and st.failures == 3 and st.polls == 4
    assert "127.0.0.1" in st.error
    assert st.reading is first.reading  # the last good observation is kept
    assert st.age_s(now[0]) == 15.0
    assert len(fed) == 1  # nothing stale is fed to the policy
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings  # once per outage, not once per poll
    assert "cannot read the cluster" in warnings[0] and "stale" in warnings[0]

    back = FixtureRM(fixture_rm.port)
    try:
        now[0] += 5
        st = loop.poll()
    finally:
        back.stop()
    assert not st.stale and st.error == "" and st.ok_at == now[0] and len(fed) == 2
    assert any("readable again after 3 failed poll(s)" in r.getMessage() for r in caplog.records)


def test_a_failing_feed_is_counted_and_the_loop_goes_on() -> None:
    def feed(obs: Observation) -> None:
        raise ValueError("policy bug")

    loop = ControlLoop(observer(usage=False), feed, 5.0)
    st = loop.poll()
    assert st.feed_errors == 1 and not st.stale and st.reading is not None


def test_an_unexpected_error_in_the_observer_is_survived() -> None:
    class Broken(ClusterObserver):
        def read(self) -> Any:
            raise KeyError("bug")

    loop = ControlLoop(Broken(ResourceManager([RM], transport=FakeTransport({}))), lambda o: None, 5.0)
    st = loop.poll()
    assert st.stale and st.failures == 1 and "bug" in st.error


def test_the_thread_polls_and_stops() -> None:
    fed: list[Observation] = []
    got = threading.Event()

    def feed(obs: Observation) -> None:
        fed.append(obs)
        if len(fed) >= 2:
            got.set()

    loop = ControlLoop(observer(usage=False), feed, 0.05)
    loop.start()
    try:
        assert got.wait(10), "the control loop did not poll twice in 10 s"
    finally:
        loop.stop()
    n = len(fed)
    assert loop.state.polls >= 2
    assert not loop._thread or not loop._thread.is_alive()
    assert len(fed) == n


def test_all_rms_down_is_rm_unreachable() -> None:
    rm = ResourceManager([RM], transport=FakeTransport({}), sleep=lambda s: None)
    with pytest.raises(RMUnreachable):
        ClusterObserver(rm).read()


def test_an_rm_not_up_yet_is_waited_for_quietly_then_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    rm = ResourceManager([RM], transport=FakeTransport({}), sleep=lambda s: None)
    loop = ControlLoop(ClusterObserver(rm), lambda o: None, 5.0, clock=lambda: now[0])
    caplog.set_level(logging.INFO, logger="yarnctl.rm.observe")
    loop.poll()
    now[0] += 61
    loop.poll()
    mine = [r for r in caplog.records if r.name == "yarnctl.rm.observe"]
    levels = [(r.levelno, r.getMessage().split(":")[1].strip()) for r in mine]
    assert levels == [(logging.INFO, "waiting for the cluster"), (logging.WARNING, "cannot read the cluster")]
    assert "no observation yet" in mine[-1].getMessage()


def test_a_poll_that_hangs_makes_the_state_stale_once_it_is_overdue() -> None:
    """A slow RM: the poll is still running (a stand-in source that blocks until released), so it has not failed,
    but the last good reading ages past an interval and OVERDUE_S and the state says stale (metrics and status
    read it)."""
    release, reading_started = threading.Event(), threading.Event()
    now = [1000.0]
    calls = [0]

    class Slow:
        where = "a slow RM"

        def read(self) -> Reading:
            calls[0] += 1
            if calls[0] > 1:
                reading_started.set()
                release.wait(10)
            return Reading(Observation.build(now[0], [], [], []), None)

        def close(self) -> None:
            pass

    loop = ControlLoop(Slow(), lambda obs: None, 5.0, clock=lambda: now[0])
    st = LoopState(interval_s=5.0)
    assert st.stale_at(now[0])  # nothing read yet
    first = loop.poll()
    assert not first.stale_at(now[0] + 14.9)  # an interval and OVERDUE_S
    t = threading.Thread(target=loop.poll)
    t.start()
    try:
        assert reading_started.wait(5)
        now[0] += 15.5  # past an interval and OVERDUE_S: the next poll is overdue, and has not failed
        assert not loop.state.stale and loop.state.stale_at(now[0])
    finally:
        release.set()
        t.join(5)
    assert not loop.state.stale_at(now[0])  # it answered: fresh again
