"""`yarnctl bench mr` end to end: the built-in mr-mix spec (8 real MapReduce jobs, 5 s apart) on a local
cluster under the stock CapacityScheduler, then under the shim running dress, and the comparison report."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from yarnctl.bench.mr import SUBMIT_MS
from yarnctl.cluster.procs import processes_under

pytestmark = pytest.mark.integration


def test_bench_mr_runs_eight_real_jobs_under_two_schedulers(tmp_path: Path) -> None:
    out, clusters = tmp_path / "out", tmp_path / "clusters"
    proc = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "bench", "mr", "--spec", "mr-mix",
                           "--scheduler", "native-capacity,dress", "--serve-arg=--tune-interval=1",
                           "--cluster-dir", str(clusters), "--out", str(out)],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "makespan (s)" in proc.stdout and "native-capacity" in proc.stdout
    runs = json.loads((out / "bench.json").read_text())["runs"]
    assert [r["label"] for r in runs] == ["native-capacity", "dress"]
    for run in runs:
        recs = run["records"]
        assert len(recs) == 8
        assert all(r["final_status"] == "SUCCEEDED" for r in recs), [(r["job_id"], r["final_status"]) for r in recs]
        assert all(r["start_source"] == "history" for r in recs)  # task start times came from the JobHistoryServer
        assert len({r["app_id"] for r in recs}) == 8
        assert (run["capacity_mb"], run["capacity_vcores"]) == (2 * 8192, 2 * 16)
        # each run's job history is kept, one .jhist per job (per-task attempts, starts, finishes, nodes)
        assert len(list((out / "work" / run["label"] / "history").glob("*.jhist"))) == 8
        # clients start ahead of their slots (io.yarnctl.bench.AtTime): each job's submission (its `main`)
        # starts on schedule, SUBMIT_MS before the slot. How long Hadoop's job set-up then takes to reach the
        # RM is the machine's: over the fidelity suite's 155 submissions median +0.2 s, worst +14.5 s, and
        # worse here under load (docs/bench.md); a client that never reached the RM would have no record
        for r in recs:
            first = (out / "work" / run["label"] / "clients" / f"{r['job_id']}.log").read_text().splitlines()[0]
            m = re.fullmatch(r"yarnctl-bench: main at (\d+) ms, planned (\d+)", first)
            assert m is not None, first
            main_ms, at_ms = int(m[1]), int(m[2])
            assert at_ms == r["planned_ms"] - SUBMIT_MS and 0 <= main_ms - at_ms <= 1000, (r["job_id"], first)
        lags = sorted((r["submit_ms"] - r["planned_ms"]) / 1000 for r in recs)
        assert all(-SUBMIT_MS / 1000 <= lag <= 60.0 for lag in lags), lags
    with (out / "jobs.csv").open() as f:
        jobs = list(csv.DictReader(f))
    assert len(jobs) == 16
    for j in jobs:
        assert 0 <= float(j["wait_s"]) < float(j["completion_s"]), j
    tasks = {(j["policy"], j["id"]): int(j["tasks"]) for j in jobs}
    assert tasks[("dress", "j01")] == 13 and tasks[("native-capacity", "j06")] == 3  # 12 maps + 1 reduce; wordcount 2 + 1
    with (out / "summary.csv").open() as f:
        summary = {r["policy"]: r for r in csv.DictReader(f)}
    assert all(s["failed"] == "0" and float(s["makespan_s"]) > 30 for s in summary.values())
    assert (out / "jobs.png").read_bytes()[:4] == b"\x89PNG"
    assert not processes_under(clusters, ("",), (str(clusters.resolve()),)), "a cluster was left running"
