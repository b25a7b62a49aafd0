"""From SLS outputs to `simulate`'s report, on the trimmed real run in fixtures/fifo-run (shim + fifo, sls-short)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from yarnctl.errors import WorkloadError
from yarnctl.sim.report import PolicyResult
from yarnctl.sls import TRACES, report
from yarnctl.sls.conf import SlsConf
from yarnctl.sls.outputs import JobRuntime
from yarnctl.sls.run import SlsRunFiles, SlsRunInfo

RUN = Path(__file__).parent / "fixtures" / "fifo-run"
SHORT = TRACES / "sls-short.json"


def _info() -> SlsRunInfo:
    files = SlsRunFiles(RUN, RUN / "conf", RUN / "output", RUN / "sls.log", None, RUN / "serve-status.json")
    conf = SlsConf("io.yarnctl.shim.YarnctlScheduler", {}, 0)
    return SlsRunInfo("fifo", conf.scheduler_class, "fifo", files, 68.0, conf)


def test_shipped_trace_is_short_and_valid() -> None:
    jobs = report.read_trace(SHORT)
    assert [j.id for j in jobs] == [f"job{i:02d}" for i in range(1, 9)]
    assert sum(j.tasks for j in jobs) == 47
    assert max(j.end_ms for j in jobs) <= 60_000  # SLS runs in wall-clock time: keep CI short


def test_result_of_a_real_run() -> None:
    r = report.sls_result(_info(), report.read_trace(SHORT), 4 * 4096, 4 * 4)
    assert (len(r.jobs), r.failed, r.unfinished) == (8, 0, 0)
    job01 = r.jobs[0]
    assert (job01.id, job01.tasks, job01.submit_s) == ("job01", 13, 0.0)
    assert job01.wait_s == pytest.approx(3.1, abs=0.05)    # first map allocated 3.1 s after submit
    assert job01.completion_s == pytest.approx(34.0, abs=0.01)  # jobruntime.csv: 0 -> 34003 ms
    assert r.makespan_s == pytest.approx(64.0, abs=0.01)
    assert 0.5 < r.utilization["memory"] < 1.0
    st = r.stats
    assert (st["containers"], st["node_updates"], st["peak_running_containers"]) == (55, 252, 16)
    assert st["node_update_ms"] == pytest.approx(0.927, abs=1e-3)
    assert st["containers_per_sched_s"] == pytest.approx(55 / (252 * st["node_update_ms"] / 1000))
    assert (st["policy_ok"], st["policy_errors"], st["containers_by_policy"]) == (109, 0, 55)
    assert st["timing_exact"] == 1.0


def test_jobs_with_the_same_trace_times_are_told_apart_by_task_count() -> None:
    jobs = [report.TraceJob("a", 0, 10, "u", "q", 3), report.TraceJob("b", 0, 10, "u", "q", 1)]
    rows = [JobRuntime("application_1_0001", 0, 10, 1, 9), JobRuntime("application_1_0002", 0, 10, 2, 8)]
    got = report.match_jobs(jobs, rows, {"application_1_0001": [1], "application_1_0002": [1, 2, 3]})
    assert (got["a"].app_id, got["b"].app_id) == ("application_1_0002", "application_1_0001")


def _result(name: str, ms: float, per_s: float) -> PolicyResult:
    return PolicyResult(name, None, None, None, None, None, {}, {}, (), 0, 0,
                        {"node_update_ms": ms, "containers_per_sched_s": per_s})


def test_overhead_is_relative_to_native_fifo() -> None:
    got = report.overhead([_result("native-fifo", 0.25, 800.0), _result("fifo", 1.0, 200.0),
                           _result("native-fair", 0.5, 400.0)])
    assert got == {"fifo": {"handle_time_ratio": 4.0, "throughput_ratio": 0.25}}
    assert report.overhead([_result("fifo", 1.0, 200.0)]) == {}


def _job(**over: object) -> dict[str, object]:
    task = {"container.host": "/r/n1", "container.start.ms": 0, "container.end.ms": 1000,
            "container.priority": 20, "container.type": "map"}
    job: dict[str, object] = {"am.type": "mapreduce", "job.start.ms": 0, "job.end.ms": 1000,
                              "job.queue.name": "default", "job.id": "j1", "job.tasks": [task]}
    for k, v in over.items():
        if k.startswith("task:"):
            task[k[5:]] = v
        else:
            job[k] = v
    return {k: v for k, v in job.items() if v is not None}


BAD = [
    ("no-am-type", json.dumps(_job(**{"am.type": None})), r"job\[0\]\.am\.type: missing"),
    ("not-mapreduce", json.dumps(_job(**{"am.type": "spark"})), "only 'mapreduce'"),
    ("no-queue", json.dumps(_job(**{"job.queue.name": None})), r"job\.queue\.name: missing"),
    ("host-without-rack", json.dumps(_job(**{"task:container.host": "n1"})), "expected /rack/host"),
    ("no-tasks", json.dumps(_job(**{"job.tasks": []})), "non-empty list"),
    ("malformed-json", '{"am.type": "mapreduce",', "malformed JSON"),
    ("empty", "", "no jobs"),
]


@pytest.mark.parametrize("name,text,message", BAD, ids=[b[0] for b in BAD])
def test_traces_sls_would_crash_on_are_refused(tmp_path: Path, name: str, text: str, message: str) -> None:
    p = tmp_path / "t.json"
    p.write_text(text)
    with pytest.raises(WorkloadError, match=message):
        report.read_trace(p)


def test_a_run_stopped_at_its_timeout_reports_unfinished_jobs_and_its_costs() -> None:
    """fixtures/dress-timeout: a real dress run SLS could not finish (docs/sls.md, known limits), stopped at 100 s."""
    d = Path(__file__).parent / "fixtures" / "dress-timeout"
    files = SlsRunFiles(d, d / "conf", d / "output", d / "sls.log", None, None)
    conf = SlsConf("io.yarnctl.shim.YarnctlScheduler", {}, 0)
    r = report.sls_result(SlsRunInfo("dress", conf.scheduler_class, "dress", files, 100.0, conf, timed_out=True),
                          report.read_trace(SHORT), 4 * 4096, 4 * 4)
    assert (r.failed, r.unfinished, r.makespan_s) == (8, 8, None)
    assert r.stats["timed_out"] == 1.0 and r.stats["node_updates"] > 0 and r.stats["node_update_ms"] > 0
    assert r.stats["containers"] == 8  # the eight AM containers, no task ever


def test_an_empty_track_takes_the_peak_from_the_rm_log(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "output" / "realtimetrack.json").write_text("[]")  # SLS's track writer died at its first tick
    files = SlsRunFiles(run, run / "conf", run / "output", run / "sls.log", None, run / "serve-status.json")
    info = _info()
    r = report.sls_result(SlsRunInfo("fifo", info.scheduler_class, "fifo", files, 68.0, info.conf),
                          report.read_trace(SHORT), 4 * 4096, 4 * 4)
    assert r.stats["track_rows"] == 0
    # the trimmed fixture log keeps no completions, so every allocation still counts as live: not 0
    assert r.stats["peak_running_containers"] == 55
