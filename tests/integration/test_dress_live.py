"""DRESS [DRESS] on real YARN against the stock CapacityScheduler, same submission schedule.

Two clusters are started in turn (2 NodeManagers of 8 GB / 16 vcores each, so a small job's AM,
map and reduce stay under θ = 10% of the cluster): one with the shim and `yarnctl serve --policy
dress --tune-interval 1`, one with `--native capacity`. On each, two large SleepJobs (16 maps of
1 GB, filling the cluster twice over) start first; once they hold the cluster, two small ones
(one 384 MB map) are submitted. DRESS's reserve ratio δ must move (serve's log, status file and
/metrics) and the small jobs must wait less than under Capacity: the wait is submission to first
task start (the JobHistoryServer's record), the part of a job's life the scheduler decides. Their
elapsed time is printed, not asserted: on a 2-core machine it also holds the JVMs' start-up, which
is slower while the large jobs' maps run (DRESS starts small jobs then) than after (Capacity does),
and CI once saw 55.0 s under DRESS against 52.4 s under Capacity.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live import DEADLINE_MS

from yarnctl.bench.collect import AppRecord, record
from yarnctl.cluster.local import LocalCluster, app_ids
from yarnctl.rm import HistoryServer

pytestmark = pytest.mark.integration

LARGE = ["-Dmapreduce.map.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx256m", "-m", "16", "-r", "1",
         "-mt", "15000", "-rt", "500"]
SMALL = ["-m", "1", "-r", "1", "-mt", "1000", "-rt", "500"]
NM = {"nodes": 2, "nm_memory_mb": 8192, "nm_vcores": 16}


def _client(lc: LocalCluster, args: list[str]) -> subprocess.Popen[str]:
    return lc.start_client(args, "sleep")


def _schedule(lc: LocalCluster) -> tuple[list[AppRecord], list[AppRecord]]:
    """Two large jobs, then (once they hold the cluster) two small ones; each one's record (RM and history)."""
    rm = lc.rm()
    history = lc.info().history
    assert history is not None
    jhs = HistoryServer(history.url)
    large = [_client(lc, LARGE) for _ in range(2)]
    deadline = time.monotonic() + 120
    while sum(a.running_containers for a in rm.apps(states=["RUNNING"])) < 12:
        assert time.monotonic() < deadline, "the large jobs never filled the cluster"
        time.sleep(0.5)
    small = [_client(lc, SMALL) for _ in range(2)]
    records: list[list[AppRecord]] = []
    for procs in (large, small):
        got = []
        for p in procs:
            out, _ = p.communicate(timeout=400)
            assert p.returncode == 0, out[-3000:]
            app = lc.wait_app(app_ids(out)[-1], timeout_s=60)
            got.append(record(app.id, "sleep", app, rm, jhs))
        records.append(got)
    jhs.close()
    return records[0], records[1]


@pytest.fixture
def cluster_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    for sub in ("dress", "capacity"):
        if (tmp_path / sub).exists():
            LocalCluster(tmp_path / sub).down()


def _elapsed_s(apps: list[AppRecord]) -> float:
    return sum(a.finish_ms - a.submit_ms for a in apps) / len(apps) / 1000


def _wait_s(apps: list[AppRecord]) -> float:
    """Mean time from submission to the first task's start (the JobHistoryServer's task records)."""
    assert all(a.start_source == "history" for a in apps), [a.start_source for a in apps]
    return sum(a.first_task_ms - a.submit_ms for a in apps) / len(apps) / 1000


def test_small_jobs_wait_less_under_dress_than_capacity(cluster_dir: Path) -> None:
    lc = LocalCluster(cluster_dir / "dress")
    info = lc.up(policy="dress", serve_args=["--tune-interval", "1", "--metrics-port", "0"],  # type: ignore[arg-type]
                 deadline_ms=DEADLINE_MS, **NM)
    try:
        dress_large, dress_small = _schedule(lc)
        serve_log = (info.dir / "logs" / "serve.log").read_text()
        status: dict[str, Any] = json.loads(info.status_file.read_text()) if info.status_file else {}
        mport = int(re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", serve_log).group(1))  # type: ignore[union-attr]
        with urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=10) as r:
            metrics = r.read().decode()
    finally:
        lc.down()
    changes = re.findall(r"dress: δ (\S+) -> (\S+) at t=", serve_log)
    assert changes, "δ never moved"
    assert {float(new) for _, new in changes} != {0.1}
    assert re.search(r"dress: application_\S+ is sd", serve_log) and re.search(r"application_\S+ is ld", serve_log)
    assert "dress_reserve_ratio" in status["tuning"]
    assert re.search(r'^yarnctl_dress_reserve_ratio \S+$', metrics, re.M)
    assert re.search(r'^yarnctl_dress_pending_bytes\{category="sd"\} \S+$', metrics, re.M)

    cap = LocalCluster(cluster_dir / "capacity")
    cap.up(native="capacity", **NM)  # type: ignore[arg-type]
    try:
        cap_large, cap_small = _schedule(cap)
    finally:
        cap.down()
    for apps in (dress_large, dress_small, cap_large, cap_small):
        assert all(a.final_status == "SUCCEEDED" for a in apps), [(a.app_id, a.final_status) for a in apps]
    print(f"small jobs wait: dress {_wait_s(dress_small):.1f} s, capacity {_wait_s(cap_small):.1f} s; "
          f"small jobs elapsed: dress {_elapsed_s(dress_small):.1f} s, capacity {_elapsed_s(cap_small):.1f} s; "
          f"large jobs elapsed: dress {_elapsed_s(dress_large):.1f} s, capacity {_elapsed_s(cap_large):.1f} s; "
          f"δ changes {len(changes)}: {changes[:8]}")
    assert _wait_s(dress_small) < _wait_s(cap_small)
