"""`yarnctl whatif`'s workload: the live state and AM task reports turned into placed jobs, and simulated."""

from __future__ import annotations

from typing import Any

import pytest

from yarnctl.bridge.livestate import state_doc
from yarnctl.cli.whatif import parse_horizon
from yarnctl.errors import ConfigError
from yarnctl.model import Resources
from yarnctl.rm.models import HistoryJob, TaskReport
from yarnctl.sim.runner import simulate
from yarnctl.whatif.build import DEFAULT_TASK_S, Estimate, Past, build, estimate, left, past, reduce_left
from yarnctl.whatif.live import LiveApp, LiveAsk, LiveContainer, LiveNode, LiveState, TaskTimes, parse_state

GB = Resources(1024, 1)
NODES = (LiveNode("n1", "/r", Resources(4096, 4)), LiveNode("n2", "/r", Resources(4096, 4)))
MR = LiveApp("app_1", "default", "u", "MAPREDUCE", "Sleep job")


def _task(i: int, kind: str, state: str, elapsed_s: float = 0.0, progress: float = 0.0) -> TaskReport:
    return TaskReport(f"task_{kind}_{i}", kind, state, 0, 0, int(elapsed_s * 1000), progress)


def _state(*apps: LiveApp, containers: tuple[LiveContainer, ...], asks: tuple[LiveAsk, ...] = ()) -> LiveState:
    return LiveState("fifo", {}, 0.0, GB, NODES, apps, containers, asks)


def _mr_state() -> tuple[LiveState, dict[str, tuple[TaskReport, ...]]]:
    containers = (LiveContainer("app_1", "n1", 0, Resources(1536, 1), 30.0, True),
                  LiveContainer("app_1", "n1", 20, GB, 4.0, False),
                  LiveContainer("app_1", "n2", 20, GB, 2.0, False))
    tasks = (_task(0, "MAP", "SUCCEEDED", 10.0), _task(1, "MAP", "SUCCEEDED", 12.0),
             _task(2, "MAP", "RUNNING", 4.0, 40.0), _task(3, "MAP", "RUNNING", 2.0, 20.0),
             *[_task(4 + i, "MAP", "SCHEDULED") for i in range(3)], _task(0, "REDUCE", "SCHEDULED"))
    return _state(MR, containers=containers, asks=(LiveAsk("app_1", 20, GB, 3),)), {"app_1": tasks}


def test_estimates_come_from_finished_tasks_then_history_then_progress_then_a_default() -> None:
    assert estimate(TaskTimes((10.0, 12.0, 30.0), (), 0), 99.0) == Estimate(12.0, "finished tasks")
    assert estimate(TaskTimes((), ((3.0, 0.5),), 1), 20.0) == Estimate(20.0, "job history")
    assert estimate(TaskTimes((), ((3.0, 0.5), (1.0, 0.01)), 1), None) == Estimate(6.0, "progress")
    assert estimate(TaskTimes((), ((1.0, 0.01),), 1), None) == Estimate(DEFAULT_TASK_S, "default")
    assert left(4.0, Estimate(11.0, "x")) == 7.0 and left(20.0, Estimate(10.0, "x")) == 1.0
    # a reduce shuffling (however long it waited for maps) has all its merge and reduce left; then its progress
    assert reduce_left(0.2, 6.0) == 6.0 and reduce_left(2 / 3, 6.0) == pytest.approx(3.0)
    assert reduce_left(1.0, 6.0) == 0.1


def test_a_running_mapreduce_job_becomes_placed_containers_and_the_tasks_left() -> None:
    state, tasks = _mr_state()
    old = HistoryJob("job_0", "Sleep job", "u", "default", "SUCCEEDED", 50_000, 2, 1, 11000, 3000, 1500, 500)
    history = {"Sleep job": past(old, (TaskReport("t", "REDUCE", "SUCCEEDED", 40_000, 46_500),))}
    assert history["Sleep job"] == Past(11.0, 5.0, 3.5, 3.5)
    start = build(state, tasks, history)
    (plan,) = start.plans
    assert plan.maps == (2, 2, 3) and plan.reduces == (0, 0, 1)
    assert plan.map_s == Estimate(11.0, "finished tasks") and plan.reduce_s == Estimate(5.0, "job history")
    (job,) = start.workload.jobs
    maps, reduces = job.stages
    assert maps.durations == (7.0, 9.0, 11.0, 11.0, 11.0)  # the oldest container has the longest-running task
    assert reduces.durations == (5.0,) and reduces.after == 0
    assert [(p.node, p.stage) for p in job.placed] == [("n1", None), ("n1", 0), ("n2", 0)]
    assert maps.done_before == 2  # the AM's slow start and ramp-up count the maps done live
    assert job.am == Resources(1536, 1) and job.teardown_s == 3.5


def test_the_prediction_is_the_simulated_remaining_completion() -> None:
    state, tasks = _mr_state()
    start = build(state, tasks, {})
    (result, _), = simulate(start.workload, ["fifo"])
    (j,) = result.jobs
    # 2 GB left on n1 and 3 GB on n2 at once: all three maps start within a heartbeat and end by 11-12 s;
    # the reduce (estimated from its progress: none, so the default) follows
    assert 11.0 + DEFAULT_TASK_S <= j.completion_s <= 14.0 + DEFAULT_TASK_S  # type: ignore[operator]


def test_other_apps_hold_their_containers_and_waiting_ones_are_left_out() -> None:
    ds = LiveApp("app_2", "default", "u", "YARN", "shell")
    waiting = LiveApp("app_3", "default", "u", "MAPREDUCE", "later")
    containers = (LiveContainer("app_2", "n1", 0, Resources(2048, 1), 5.0, True),
                  LiveContainer("app_2", "n2", 1, GB, 5.0, False))
    start = build(_state(ds, waiting, containers=containers, asks=(LiveAsk("app_3", 0, GB, 1),)), {}, {})
    assert start.held == ("app_2",) and start.waiting == ("app_3",) and not start.workload.jobs
    # what app_2 holds makes its nodes smaller for the whole horizon
    assert [n.capacity for n in start.workload.cluster.nodes] == [Resources(2048, 3), Resources(3072, 3)]


def test_a_job_with_nothing_left_is_finishing() -> None:
    state = _state(MR, containers=(LiveContainer("app_1", "n1", 0, GB, 9.0, True),))
    start = build(state, {"app_1": (_task(0, "MAP", "SUCCEEDED", 5.0), _task(0, "REDUCE", "SUCCEEDED", 3.0))}, {})
    assert start.finishing == ("app_1",) and not start.workload.jobs


def test_the_servers_state_document_round_trips() -> None:
    from yarnctl.model import App, Ask, Container, Node
    from yarnctl.state import ClusterState

    cs = ClusterState(GB)
    cs.put_node("n1", "/r", Resources(4096, 4), Resources(4096, 4))
    cs.add_app(App("app_1", name="Sleep job"))
    cs.launch(Container("c1", "app_1", "n1", 0, Resources(1536, 1), 10.0, is_am=True))
    cs.set_any_asks("app_1", (Ask("app_1", 20, GB, 3),))
    doc: dict[str, Any] = state_doc(cs.snapshot(25.0), "fifo", {"x": 1}, 1000.0)
    state = parse_state(doc, 1004.0)  # read 4 s after the server's last call: the container ran on meanwhile
    assert state.age_s == 4.0
    assert state.containers == (LiveContainer("app_1", "n1", 0, Resources(1536, 1), 19.0, True),)
    assert state.asks == (LiveAsk("app_1", 20, GB, 3),) and state.params == {"x": 1}
    assert state.nodes == (LiveNode("n1", "/r", Resources(4096, 4)),)
    with pytest.raises(ConfigError, match="the policy server's state is not what this yarnctl reads"):
        parse_state({**doc, "nodes": [["n1"]]}, 1004.0)
    with pytest.raises(ConfigError, match="the policy server's state is not what this yarnctl reads"):
        parse_state(None, 1004.0)
    _ = Node  # the model the mirror keeps


@pytest.mark.parametrize("text, seconds", [("1h", 3600.0), ("30m", 1800.0), ("600s", 600.0), ("90", 90.0)])
def test_parse_horizon(text: str, seconds: float) -> None:
    assert parse_horizon(text) == seconds


@pytest.mark.parametrize("text", ["", "0h", "soon", "-1m"])
def test_parse_horizon_refuses(text: str) -> None:
    with pytest.raises(ConfigError, match="--horizon"):
        parse_horizon(text)


def test_whatif_without_a_server_or_with_a_bad_horizon_is_one_line(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Any) -> None:
    from yarnctl.cli.main import main

    assert main(["whatif", "--horizon", "soon"]) == 2
    assert capsys.readouterr().err.strip() == "error: --horizon 'soon': expected a time such as 1h, 30m or 600s"
    assert main(["whatif", "--policy", "dress", "--serve-status", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no running yarnctl serve" in err
    assert main(["whatif", "--policy", "dress", "--param", "fair.x=1"]) == 2
    assert "not among --policy dress" in capsys.readouterr().err
    assert main(["whatif", "--policy", "nope", "--serve-status", str(tmp_path / "none.json")]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err  # named before any server is looked for
