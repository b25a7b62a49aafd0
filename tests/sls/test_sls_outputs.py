"""Reading SLS outputs. The fixture is a trimmed copy of a real run (`yarnctl sls`, shim + fifo, sls-short
trace): jobruntime.csv as written, the RM log lines about allocations and app summaries, the last CSV row
of each count of three samplers, the last counter rows, four realtimetrack.json records."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.errors import ClusterError
from yarnctl.sls import outputs

RUN = Path(__file__).parent / "fixtures" / "fifo-run"


def _histogram_rows(samples: list[float], every: int = 1) -> list[tuple[int, float]]:
    """(count, mean of the last 60) as a CSV reporter writes them, only after every `every`-th sample."""
    rows = []
    for c in range(1, len(samples) + 1):
        if c % every == 0 or c == len(samples):
            window = samples[max(0, c - 60):c]
            rows.append((c, sum(window) / len(window)))
    return rows


CASES = [
    ("below-window", [float(x) for x in range(10, 40)], 1),
    ("beyond-window", [1000.0 + (x * 37) % 101 for x in range(150)], 1),
    ("cumulative-means", [5e5 / (1 + x / 10) for x in range(130)], 1),
]


@pytest.mark.parametrize("name,samples,every", CASES, ids=[c[0] for c in CASES])
def test_sample_means_recovers_every_sample(name: str, samples: list[float], every: int) -> None:
    got = outputs.sample_means(_histogram_rows(samples, every))
    assert got == pytest.approx(samples, rel=1e-9, abs=1e-6)


def test_sample_means_spreads_a_missed_row_over_its_samples() -> None:
    samples = [10.0, 20.0, 30.0, 50.0]
    rows = [(1, 10.0), (2, 15.0), (4, 27.5)]  # the reporter missed count 3
    assert outputs.sample_means(rows) == [10.0, 20.0, 40.0, 40.0]
    assert sum(outputs.sample_means(rows)) == sum(samples)


def test_rm_log_gives_am_and_task_allocations_per_app() -> None:
    allocs, summaries = outputs.read_rm_log(RUN / "sls.log")
    assert len(allocs.am_ms) == 8 and allocs.total == 55  # 8 AMs + 47 tasks of the trace
    assert sorted(len(v) for v in allocs.tasks_ms.values()) == [2, 2, 2, 4, 5, 8, 11, 13]
    first = "application_1795344572962_0001"
    assert allocs.am_ms[first] < min(allocs.tasks_ms[first])
    assert len(summaries) == 8
    s = summaries[first]
    assert (s.user, s.queue, s.final_status) == ("alice", "default", "SUCCEEDED")
    assert s.finish_ms > s.start_ms and s.memory_seconds > 0


def test_op_cost_is_the_last_cumulative_mean() -> None:
    nu = outputs.op_cost(RUN / "output" / "metrics", "handle.NODE_UPDATE", window=100_000)
    assert nu.calls == 252 and nu.exact
    assert nu.mean_ms == pytest.approx(0.92698, abs=1e-4)
    assert not outputs.op_cost(RUN / "output" / "metrics", "handle.NODE_UPDATE", window=100).exact
    missing = outputs.op_cost(RUN / "output" / "metrics", "handle.NODE_REMOVED", window=100)
    assert (missing.calls, missing.mean_ms) == (0, None)


def test_realtimetrack_without_its_closing_bracket_is_read() -> None:
    track = outputs.read_realtimetrack(RUN / "output" / "realtimetrack.json")
    assert len(track) == 4
    assert outputs.peak_running_containers(track) == 16  # 4 nodes x 4 one-vcore containers


def test_jobruntime_rows() -> None:
    rows = outputs.read_jobruntime(RUN / "output" / "jobruntime.csv")
    assert len(rows) == 8
    assert all(r.sim_end_ms > r.sim_start_ms >= r.trace_start_ms for r in rows)


@pytest.mark.parametrize("name,text", [("wrong-header", "a,b\n1,2\n"), ("not-a-number", (
    "JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time\napp,x,1,2,3\n"))],
    ids=["wrong-header", "not-a-number"])
def test_malformed_jobruntime_is_one_error(tmp_path: Path, name: str, text: str) -> None:
    p = tmp_path / "jobruntime.csv"
    p.write_text(text)
    with pytest.raises(ClusterError, match="not an SLS jobruntime.csv"):
        outputs.read_jobruntime(p)


def test_rm_log_counts_containers_live_at_once(tmp_path: Path) -> None:
    ts = "2026-11-25 04:49:36,062 INFO rmcontainer.RMContainerImpl: container_1_0001_01_00000"
    log = tmp_path / "sls.log"
    log.write_text("".join(f"{ts}{i} Container Transitioned from {a} to {b}\n" for i, a, b in [
        (1, "NEW", "ALLOCATED"), (2, "NEW", "ALLOCATED"), (1, "ALLOCATED", "ACQUIRED"), (1, "ACQUIRED", "RUNNING"),
        (3, "NEW", "ALLOCATED"), (2, "ALLOCATED", "RELEASED"), (1, "RUNNING", "COMPLETED"), (4, "NEW", "ALLOCATED")]))
    allocs, _ = outputs.read_rm_log(log)
    assert (allocs.total, allocs.peak_live) == (4, 3)


def test_an_empty_track_has_no_peak(tmp_path: Path) -> None:
    # SLS 2.7.7 leaves `[]` when its track writer's first tick hits the queue set SLSRunner has not set yet
    p = tmp_path / "realtimetrack.json"
    p.write_text("[]")
    assert outputs.read_realtimetrack(p) == []
    assert outputs.peak_running_containers([]) is None
