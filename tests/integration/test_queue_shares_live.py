"""Queue shares under contention, live: the shim on CapacityScheduler running the `capacity` policy keeps each
of two saturated queues at its configured share, measured from the RM's REST API, and the simulator agrees.

`yarnctl bench mr` on a smaller copy of the built-in `queue-share` spec (the documented run, docs/bench.md,
takes four minutes; with 20 s maps instead of 30 s queue a held 63.5% in one run, because CapacityScheduler's
one off-switch container per node heartbeat refills a's eleven containers more slowly after each wave): two 8 GB NodeManagers, queues a 70% / b 30% (both up to 100%), one SleepJob of 1 GB
maps per queue submitted together, each asking for more than its queue holds. The RM is sampled once a
second; the busy period is while both queues have pending asks (their QueueMetrics PendingMB).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from live import spec_copy

pytestmark = [pytest.mark.integration, pytest.mark.long]  # make test-long


def test_capacity_keeps_two_saturated_queues_at_70_30_and_the_simulator_agrees(tmp_path: Path) -> None:
    # two waves of 30 s maps per queue instead of four
    spec = spec_copy("queue-share", tmp_path / "queue-share-short.yaml", args={"a1": {"-m": "24"}, "b1": {"-m": "10"}})
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "bench", "mr", "--spec", str(spec),
                           "--scheduler", "capacity", "--cluster-dir", str(tmp_path / "cluster"), "--out", str(out),
                           "--no-plots"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "queue shares of memory while every queue had demand" in proc.stdout, proc.stdout[-2000:]
    (run,) = json.loads((out / "bench.json").read_text())["runs"]
    assert all(r["final_status"] == "SUCCEEDED" for r in run["records"])
    assert len(run["queue_samples"]) > 60  # once a second from the first client's start to the last job's end
    rows = {r["queue"]: r for r in run["queue_shares"]}
    assert set(rows) == {"a", "b"}
    assert rows["a"]["real_busy_s"] > 30 and rows["a"]["simulated_busy_s"] > 30, rows
    held = rows["a"]["real"] + rows["b"]["real"]
    for q, configured in (("a", 0.70), ("b", 0.30)):
        row = rows[q]
        assert row["configured"] == pytest.approx(configured)
        # how the scheduler split what it allocated: within 10% of 70/30 (relative: b's 30% allows 27-33%)
        assert row["real"] / held == pytest.approx(configured, rel=0.10), rows
        # and the simulator within 10% of the real cluster
        assert row["simulated"] == pytest.approx(row["real"], rel=0.10), rows
    # of the whole cluster: b within 10% of its 30%; a 63.5-66.8% of its 70% in four runs of this short
    # version (4.6-9.3% under: CapacityScheduler's one off-switch container per node heartbeat refills a's
    # eleven containers after each wave of maps more slowly than b's five), 66.5% in the documented run, so
    # its bound here is 15%
    assert rows["b"]["real"] == pytest.approx(0.30, rel=0.10), rows
    assert rows["a"]["real"] == pytest.approx(0.70, rel=0.15), rows
