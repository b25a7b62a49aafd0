"""The start-up cost measured from job histories (yarnctl/bench/jvmcost.py), on hand-worked histories; the kept
rounds' lines that docs/fidelity.md quotes are checked in tests/bench/test_fidelity_kept.py."""

from __future__ import annotations

import pytest

from yarnctl.bench import jvmcost
from yarnctl.bench.fidelity import RealRun
from yarnctl.bench.jhist import JobHistory, TaskAttempt
from yarnctl.bench.spec import load_spec


def _map(job: int, n: int, start_s: float, finish_s: float, status: str = "SUCCEEDED") -> TaskAttempt:
    return TaskAttempt(f"attempt_1_{job:04d}_m_{n:06d}_0", f"task_1_{job:04d}_m_{n:06d}", "MAP", int(start_s * 1000),
                       int(finish_s * 1000), status, "localhost", f"container_1_{job:04d}_01_{n + 2:06d}")


def _run(histories: dict[str, tuple[float, float, tuple[TaskAttempt, ...]]]) -> RealRun:
    """fid-big's spec (10 s maps), one history per job: (AM started, job inited, attempts)."""
    spec = load_spec("fid-big")
    records, hist = [], {}
    for i, (job_id, (am_s, inited_s, attempts)) in enumerate(histories.items()):
        records.append({"job_id": job_id, "app_id": f"application_1_{i + 1:04d}", "final_status": "SUCCEEDED"})
        hist[f"job_1_{i + 1:04d}"] = JobHistory(f"job_1_{i + 1:04d}", "Sleep job", "root", "default", 0,
                                                int(am_s * 1000), int(inited_s * 1000), 90_000, "SUCCEEDED", attempts)
    return RealRun("fid-big", "native-fifo", spec, tuple(records), hist)


def _hand_worked() -> RealRun:
    """The histories the first two tests work by hand (fid-big's 10 s maps)."""
    a, b, c, d = _map(1, 0, 4, 16), _map(1, 1, 5, 18), _map(1, 2, 20, 32), _map(1, 4, 40, 56)
    failed, z = _map(1, 3, 4, 30, "FAILED"), _map(2, 0, 20.5, 30.5)
    return _run({"b1": (1, 3, (a, b, c, d, failed)), "b2": (4.5, 6, (z,)), "b3": (4.2, 4.2, ()), "b4": (44, 45, ())})


def test_a_maps_overhead_is_its_attempt_less_its_sleep_and_counts_the_starts_beside_its_first_moments() -> None:
    """Hand-worked on fid-big's 10 s maps. b1's AM sets up 1-3 s; its maps a (4-16 s: 2 s of start-up), b (5-18 s:
    3 s), c (20-32 s: 2 s) and d (40-56 s: 6 s) are measured, their median start-up 2.5 s; its failed attempt
    (4-30 s) and b2's map z, no longer than its sleep (20.5-30.5 s), are not, but started JVMs: each counts as
    starting for 2.5 s or until it finished. b2's AM sets up 4.5-6 s; b3's history has no set-up (JOB_INITED not
    after AM_STARTED); b4's AM sets up 44-45 s, inside d's own start-up but after its first 2.5 s."""
    run = _hand_worked()
    # a's first 2.5 s [4, 6.5) meet b [5, 8), b2's AM [4.5, 6) and the failed attempt [4, 6.5); b's [5, 7.5) the
    # same three; c's [20, 22.5) meet z [20.5, 23); d's [40, 42.5) meet nothing: b4's AM at 44 is beside d only
    # because d was slow, and counting it would make slowness look like a crowd
    assert sorted(jvmcost.overheads(run)) == [(0, 6.0), (1, 2.0), (3, 2.0), (3, 3.0)]


def test_an_ams_set_up_counts_the_starts_beside_its_first_moments() -> None:
    """The first test's histories. The AMs' set-ups: b1 1-3 s, b2 4.5-6 s, b4 44-45 s (b3 has none), their median 1.5 s.
    b1's first 1.5 s [1, 2.5) meet nothing; b2's [4.5, 6) meet the start-ups of a [4, 6) and b [5, 8) and the
    failed attempt's [4, 6.5); b4's [44, 45.5) meet d's start-up [40, 46)."""
    run = _hand_worked()
    assert sorted(jvmcost.am_setups(run)) == [(0, 2.0), (1, 1.0), (3, 1.5)]
    line = jvmcost.measure_am([run])
    assert line is not None and (line.kind, line.measured, line.most_overlapping) == ("am", 3, 3)
    assert "an AM's set-up (AM_STARTED to JOB_INITED) took" in jvmcost.describe(line) and "(3 AMs," in jvmcost.describe(line)


def test_the_line_is_least_squares_through_the_maps() -> None:
    cost = jvmcost.fit_line([(1, 2.0), (3, 2.0), (3, 3.0)], "map")
    assert cost is not None
    assert (cost.kind, cost.measured, cost.most_overlapping) == ("map", 3, 3)
    assert (cost.alone_s, cost.per_overlap_s) == (pytest.approx(1.75), pytest.approx(0.25))
    assert cost.rms_s == pytest.approx((2 * 0.5**2 / 3) ** 0.5)  # the pair at 3 lies 0.5 s either side of 2.5
    assert "1.8 s + 0.25 s per start beside it" in jvmcost.describe(cost)
    falling = jvmcost.fit_line([(0, 3.0), (2, 2.0)], "map")
    assert falling is not None and "took 3.0 s - 0.50 s per start" in jvmcost.describe(falling)


def test_no_line_without_two_different_overlaps_and_only_sleep_jobs_are_measured() -> None:
    assert jvmcost.fit_line([(3, 5.0), (3, 6.0)], "map") is None
    assert jvmcost.fit_line([], "am") is None
    run = _run({"b1": (1, 3, (_map(1, 0, 4, 16),))})
    assert jvmcost.measure([run]) is None  # one map: one overlap count
    spec = load_spec("fid-examples")  # e2 is a wordcount: its maps' work is unknown, so no overhead is read
    wc = RealRun("fid-examples", "native-fifo", spec,
                 ({"job_id": "e2", "app_id": "application_1_0001", "final_status": "SUCCEEDED"},),
                 {"job_1_0001": JobHistory("job_1_0001", "word count", "root", "default", 0, 1000, 3000, 9000,
                                           "SUCCEEDED", (_map(1, 0, 4, 16),))})
    assert jvmcost.overheads(wc) == []
    assert jvmcost.am_setups(wc) == []  # its AM set up 1-3 s, but no measured map says how long a task's start lasts
