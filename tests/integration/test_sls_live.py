"""`yarnctl sls` end to end: Hadoop 2.7.7's Scheduler Load Simulator (hadoop-sls from Maven Central) replays
the shipped sls-short trace under the stock FifoScheduler and under the shim with Python fifo (about 65 s
each: SLS runs in wall-clock time), and the report carries real jobs, handle times and the overhead ratio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_sls_runs_the_short_trace_native_and_shim(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "sls", "--trace", "sls-short",
                           "--scheduler", "native-fifo,fifo", "--out", str(out), "--no-plots", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    results = doc["results"]
    assert list(results) == ["native-fifo", "fifo"]
    for name, r in results.items():
        assert (len(r["jobs"]), r["failed"], r["unfinished"]) == (8, 0, 0), (name, r["jobs"])
        assert all(j["state"] == "succeeded" and 0 <= j["wait_s"] < j["completion_s"] for j in r["jobs"]), name
        st = r["stats"]
        assert st["containers"] == 8 + 47, name      # one AM container per job + every task of the trace
        assert st["node_updates"] > 100, name        # 4 nodes heartbeating every second for about a minute
        assert 0 < st["node_update_ms"] < 100, name  # SLS's own timer, mean over the whole run
        assert st["containers_per_sched_s"] > 0 and st["timing_exact"] == 1.0, name
        assert st["peak_running_containers"] == 16, name  # 4 nodes x 4 vcores, one-vcore containers
    shim = results["fifo"]["stats"]
    assert shim["policy_ok"] > 0 and shim["policy_errors"] == 0
    assert shim["containers_by_policy"] == shim["containers"]  # Python placed every container, no fallback
    ratio = doc["overhead"]["fifo"]
    assert ratio["handle_time_ratio"] == pytest.approx(shim["node_update_ms"] / results["native-fifo"]["stats"]["node_update_ms"])
    assert ratio["handle_time_ratio"] > 0 and ratio["throughput_ratio"] > 0
    saved = json.loads((out / "sls.json").read_text())
    assert [r["label"] for r in saved["runs"]] == ["native-fifo", "fifo"]
    assert (out / "jobs.csv").read_text().count("\n") == 1 + 16
    left = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
    assert not left, f"SLS or yarnctl serve left running: {left}"
