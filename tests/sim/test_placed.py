"""A simulation that starts from a live cluster: jobs whose AM and running tasks already hold containers (JobSpec.placed)."""

from __future__ import annotations

import pytest

from yarnctl.engine import Engine
from yarnctl.model import Resources
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster, SimRun
from yarnctl.sim.workload.types import (ClusterSpec, JobSpec, NodeSpec, Placed, StageSpec, Startup, Workload)

NODE = Resources(4096, 4)


def _workload(*jobs: JobSpec, startup: Startup = Startup()) -> Workload:
    nodes = tuple(NodeSpec(f"n{i}", "/r", NODE, NODE) for i in (1, 2))
    return Workload("live", "", "test", ClusterSpec(nodes, startup=startup), jobs)


def _job(placed: tuple[Placed, ...], maps: tuple[float, ...], reduces: tuple[float, ...] = (),
         job_id: str = "j1") -> JobSpec:
    stages = [StageSpec("map", "map", 20, Resources(1024, 1), maps)]
    if reduces:
        stages.append(StageSpec("reduce", "reduce", 10, Resources(1024, 1), reduces, after=0, slowstart=0.05))
    return JobSpec(job_id, 0.0, "u", "default", "mapreduce", job_id, (), Resources(1024, 1), tuple(stages),
                   placed=placed)


def _run(w: Workload, policy: str = "fifo") -> tuple[SimCluster, SimRun]:
    sim = SimCluster(w, Engine(make_policy(policy)))
    return sim, sim.run()


def test_placed_containers_hold_their_nodes_from_the_start_and_run_their_remaining_work() -> None:
    # AM on n1, two maps running (3 s and 5 s left), two maps still to run (10 s each)
    placed = (Placed("n1", None), Placed("n1", 0), Placed("n2", 0))
    sim = SimCluster(_workload(_job(placed, (3.0, 5.0, 10.0, 10.0))), Engine(make_policy("fifo")))
    run = sim.run()
    ends = sorted(r.end_s for r in run.containers if not r.is_am)
    assert ends[:2] == [pytest.approx(3.0), pytest.approx(5.0)]
    # the two pending maps start at the first heartbeats with room (within a second) and run 10 s
    assert all(10.0 <= e <= 11.0 for e in ends[2:])
    (job,) = run.jobs
    assert job.finish_s == pytest.approx(max(ends))


def test_placed_tasks_pay_no_start_up_but_new_ones_do() -> None:
    placed = (Placed("n1", None), Placed("n1", 0))
    w = _workload(_job(placed, (2.0, 4.0)), startup=Startup(am_s=5.0, launch_s=3.0))
    _, run = _run(w)
    ends = sorted(r.end_s for r in run.containers if not r.is_am)
    assert ends[0] == pytest.approx(2.0)  # no AM start-up, no launch: its remaining 2 s from t = 0
    assert 7.0 <= ends[1] <= 8.0  # a new map: a heartbeat, 3 s launch, 4 s of work


def test_a_running_reduce_waits_for_the_maps_left() -> None:
    placed = (Placed("n1", None), Placed("n1", 0), Placed("n2", 1))
    _, run = _run(_workload(_job(placed, (4.0,), (2.0,))))
    reduce_end = max(r.end_s for r in run.containers if not r.is_am)
    assert reduce_end == pytest.approx(6.0, abs=0.5)  # its 2 s once the last map is done at 4 s


def test_a_running_reduce_pays_no_start_up_when_the_maps_end() -> None:
    placed = (Placed("n1", None), Placed("n1", 0), Placed("n2", 1))
    _, run = _run(_workload(_job(placed, (1.0,), (2.0,)), startup=Startup(am_s=5.0, launch_s=3.0)))
    reduce_end = max(r.end_s for r in run.containers if not r.is_am)
    assert reduce_end == pytest.approx(3.0)  # its JVM started before the simulation did: its 2 s from the map's end


def test_more_placed_tasks_than_the_stage_has_is_an_error() -> None:
    placed = (Placed("n1", None), Placed("n1", 0), Placed("n2", 0))
    with pytest.raises(ValueError, match="more placed tasks in stage 0 than it has"):
        _run(_workload(_job(placed, (1.0,))))


def test_a_teardown_ends_the_job_that_long_after_its_last_task_with_the_am_held() -> None:
    import dataclasses

    job = dataclasses.replace(_job((Placed("n1", None), Placed("n1", 0)), (2.0,)), teardown_s=3.5)
    _, run = _run(_workload(job))
    (record,) = run.jobs
    am = next(r for r in run.containers if r.is_am)
    assert record.finish_s == pytest.approx(5.5) and am.end_s == pytest.approx(5.5)
