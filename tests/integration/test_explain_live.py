"""`yarnctl explain` live: two apps kept waiting for two reasons, each named by the policy server.

One real Hadoop 2.7.7 cluster for the module: the shim on CapacityScheduler with `dress`, two 4 GB
NodeManagers, queues `a` (75%, up to 100%) and `b` (25%, up to 25%: 2 GB). DRESS's reserve ratio is
held at δ = 0.75 (`dress.initial_reserve`, a control-loop tick only every 600 s, so no job is
classified and every one counts in the small-demand pool of 6 GB). Submitted in turn:
1. a SleepJob in `b` (AM and a map fill b's 2 GB, three maps left): `queue-max`;
2. a SleepJob in `a` (AM and three maps fill the pool to 6 GB, five maps left while 2 GB are free):
   `dress-reserve`.
Each reason must show in `yarnctl explain APP` within a few seconds of the app holding what it will
hold (the server explains twice a second; the shim calls at every 1 s node heartbeat with room).
An ask larger than any node cannot be made live: Hadoop 2.7 caps the maximum allocation at the
largest node, and the AM fails before it asks (`too-large` is tested on snapshots and in the simulator).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from live import DEADLINE_MS

from yarnctl.cluster.local import LocalCluster
from yarnctl.rm import AppInfo

pytestmark = pytest.mark.integration

CS = "yarn.scheduler.capacity."
TREE = {CS + "root.queues": "a,b", CS + "root.a.capacity": "75", CS + "root.a.maximum-capacity": "100",
        CS + "root.b.capacity": "25", CS + "root.b.maximum-capacity": "25", CS + "maximum-am-resource-percent": "0.5"}
SERVE = ["--tune-interval", "600", "--param", "dress.initial_reserve=0.75", "--param", "dress.measure=memory"]
# (the AM's command-opts stay the cluster's: they carry JDK 17's --add-opens)
MEMORY = ["-Dyarn.app.mapreduce.am.resource.mb=1024", "-Dmapreduce.map.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx256m"]
LONG_MAPS = ["-m", "4", "-r", "0", "-mt", "600000"]
MANY_MAPS = ["-m", "8", "-r", "0", "-mt", "600000"]
WITHIN_S = 6.0  # two heartbeats (1 s each), the explain interval (0.5 s), the status file (1 s) and REST polls


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    lc = LocalCluster(tmp_path_factory.mktemp("explain") / "c")
    lc.up(policy="dress", nodes=2, shim_on="capacity", capacity_site=TREE, serve_args=SERVE, deadline_ms=DEADLINE_MS)
    try:
        yield lc
    finally:
        lc.down()


def _explain(lc: LocalCluster, app: str) -> tuple[int, dict[str, Any]]:
    status = lc.active_status_file()
    assert status is not None
    done = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "explain", app, "--serve-status", str(status),
                           "--json"], capture_output=True, text=True, timeout=60)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}


def _app(lc: LocalCluster, queue: str, known: tuple[str, ...] = (), timeout_s: float = 120) -> AppInfo:
    """The new live app in `queue` (not one of `known`), once the RM has it RUNNING."""
    deadline = time.monotonic() + timeout_s
    with closing(lc.rm()) as rm:
        while time.monotonic() < deadline:
            for a in rm.apps(states=("RUNNING",)):
                if a.queue == queue and a.id not in known:
                    return a
            time.sleep(0.5)
    raise AssertionError(f"no new RUNNING app in queue {queue} after {timeout_s:.0f} s")


def _holding(lc: LocalCluster, app_id: str, mb: int, timeout_s: float = 180) -> float:
    """When (monotonic) the RM first shows `app_id` holding `mb` and still asking."""
    deadline = time.monotonic() + timeout_s
    with closing(lc.rm()) as rm:
        while time.monotonic() < deadline:
            a = rm.app(app_id)
            if a.allocated.memory_mb >= mb and a.pending.memory_mb > 0:
                return time.monotonic()
            time.sleep(0.25)
    raise AssertionError(f"{app_id} never held {mb} MB with more asked in {timeout_s:.0f} s")


def _reason(lc: LocalCluster, app_id: str, code: str, since: float) -> tuple[float, dict[str, Any]]:
    """Seconds from `since` until `yarnctl explain` names `code` as the app's latest reason, and that reason."""
    deadline = time.monotonic() + 60
    last: dict[str, Any] = {}
    while time.monotonic() < deadline:
        rc, doc = _explain(lc, app_id)
        last = doc
        if rc == 0 and doc["waiting"] and doc["waiting"][-1]["code"] == code:
            return time.monotonic() - since, doc["waiting"][-1]
        time.sleep(0.25)
    raise AssertionError(f"{app_id}: no {code} in `yarnctl explain` after 60 s; last: {last}")


def test_two_apps_wait_for_two_reasons_and_explain_names_each(cluster: LocalCluster) -> None:
    in_b = cluster.start_client([*MEMORY, "-Dmapreduce.job.queuename=b", *LONG_MAPS], "sleep")
    full = _app(cluster, "b")
    t_full = _holding(cluster, full.id, 2048)
    late, why = _reason(cluster, full.id, "queue-max", t_full)
    print(f"\nqueue-max after {late:.1f} s: {why['text']}")
    assert late <= WITHIN_S and (why["values"]["queue"], why["values"]["room_mb"]) == ("b", 0)

    in_a = cluster.start_client([*MEMORY, "-Dmapreduce.job.queuename=a", *MANY_MAPS], "sleep")
    held = _app(cluster, "a")
    t_held = _holding(cluster, held.id, 4096)
    late, why = _reason(cluster, held.id, "dress-reserve", t_held)
    print(f"dress-reserve after {late:.1f} s: {why['text']}")
    assert late <= WITHIN_S and why["values"]["delta"] == 0.75 and why["values"]["category"] == "SD"
    assert why["values"]["used"] == pytest.approx(0.75)

    # the status file (what `yarnctl status` lists) says the same; the first still waits for its reason
    status = json.loads(Path(str(cluster.active_status_file())).read_text())
    latest = {app: rs[-1]["code"] for app, rs in status["waiting"].items()}
    assert latest == {full.id: "queue-max", held.id: "dress-reserve"}
    for client in (in_b, in_a):
        client.kill()
