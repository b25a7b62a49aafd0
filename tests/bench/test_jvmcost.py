"""The start-up cost measured from job histories (yarnctl/bench/jvmcost.py): hand-worked histories, and the kept
Xeon round of the fidelity suite (docs/fidelity/runs-2026-12-01-xeon.tar.gz), whose line docs/fidelity.md quotes."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from yarnctl.bench import jvmcost
from yarnctl.bench.fidelity import RealRun, load_runs
from yarnctl.bench.jhist import JobHistory, TaskAttempt
from yarnctl.bench.spec import load_spec

XEON = Path(__file__).parents[2] / "docs" / "fidelity" / "runs-2026-12-01-xeon.tar.gz"


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


def test_a_maps_overhead_is_its_attempt_less_its_sleep_and_counts_the_starts_it_overlaps() -> None:
    """Hand-worked: b1's AM sets up 1-3 s; its maps a (4-16 s: 2 s of start-up), b (5-18 s: 3 s) and c
    (20-32 s: 2 s, alone); b2's AM sets up 4.5-6 s, beside a and b; a failed attempt is not measured."""
    a, b, c = _map(1, 0, 4, 16), _map(1, 1, 5, 18), _map(1, 2, 20, 32)
    run = _run({"b1": (1, 3, (a, b, c, _map(1, 3, 4, 30, "FAILED"))), "b2": (4.5, 6, ())})
    # a [4, 6) overlaps b [5, 8) and b2's AM [4.5, 6); b overlaps a and the AM; c overlaps nothing
    assert sorted(jvmcost.overheads(run)) == [(0, 2.0), (2, 2.0), (2, 3.0)]
    cost = jvmcost.fit_line([(0, 2.0), (2, 2.0), (2, 3.0)])
    assert cost is not None
    assert (cost.maps, cost.alone_s, cost.per_overlap_s, cost.most_overlapping) == (3, pytest.approx(2.0),
                                                                                    pytest.approx(0.25), 2)
    assert cost.rms_s == pytest.approx((2 * 0.5**2 / 3) ** 0.5)  # the pair at 2 lies 0.5 s either side of 2.5
    assert "2.0 s + 0.25 s per start overlapping it" in jvmcost.describe(cost)


def test_no_line_without_two_different_overlaps_and_only_sleep_jobs_are_measured() -> None:
    assert jvmcost.fit_line([(3, 5.0), (3, 6.0)]) is None
    assert jvmcost.fit_line([]) is None
    run = _run({"b1": (1, 3, (_map(1, 0, 4, 16),))})
    assert jvmcost.measure([run]) is None  # one map: one overlap count
    spec = load_spec("fid-examples")  # e2 is a wordcount: its maps' work is unknown, so no overhead is read
    wc = RealRun("fid-examples", "native-fifo", spec,
                 ({"job_id": "e2", "app_id": "application_1_0001", "final_status": "SUCCEEDED"},),
                 {"job_1_0001": JobHistory("job_1_0001", "word count", "root", "default", 0, 1000, 3000, 9000,
                                           "SUCCEEDED", (_map(1, 0, 4, 16),))})
    assert jvmcost.overheads(wc) == []


def test_the_xeon_rounds_maps_start_as_docs_fidelity_quotes(tmp_path: Path) -> None:
    with tarfile.open(XEON) as tar:
        tar.extractall(tmp_path, filter="data")
    runs = [r for mix in ("fid-wide", "fid-mixed", "fid-reduce", "fid-big", "fid-examples")
            for r in load_runs(tmp_path / mix / "bench.json", mix)]
    cost = jvmcost.measure(runs)
    assert cost is not None
    assert (cost.maps, cost.most_overlapping) == (770, 19)
    assert (round(cost.alone_s, 1), round(cost.per_overlap_s, 2), round(cost.rms_s, 1)) == (2.2, 0.67, 2.1)
