"""Hot swap live: fifo → dress → rollback while MapReduce jobs run, on one real Hadoop 2.7.7 cluster.

The shim on FifoScheduler calls `yarnctl serve --policy fifo` at every NodeManager heartbeat with
room. With two SleepJobs running, `yarnctl policy set dress --shadow 10 --wait` checks DRESS in
shadow for ten heartbeats (its decisions logged beside fifo's, not applied) and lets it take over;
DRESS then decides for a while and `yarnctl policy rollback` returns to fifo. The ResourceManager is
never restarted. Asserted: both jobs SUCCEEDED; the shim's fallback counters (timeouts, errors,
unreachable, refused, breaker) did not move from before the swap to after the rollback, i.e. every
heartbeat of the swap was answered by Python within the deadline; the decision log shows the shadow
phase (fifo's calls carrying DRESS's shadow decisions), the active phase (calls decided by dress)
and the rollback, in that order.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from yarnctl.cluster.local import LocalCluster, app_ids

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SLEEP = ["-Dmapreduce.map.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx256m", "-m", "12", "-r", "1",
         "-mt", "5000", "-rt", "1000"]
FALLBACKS = ("fallback", "fallback_timeout", "fallback_error", "fallback_unreachable", "fallback_refused",
             "fallback_breaker_open")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    lc = LocalCluster(tmp_path_factory.mktemp("swap") / "c")
    lc.up(policy="fifo", nodes=2)
    try:
        yield lc
    finally:
        lc.down()


def _policy(lc: LocalCluster, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "policy", *argv, "--serve-status",
                           str(lc.active_status_file())], capture_output=True, text=True, timeout=300, cwd=ROOT)


def _fallbacks(lc: LocalCluster) -> dict[str, int]:
    with closing(lc.rm()) as rm:
        shim = rm.shim_metrics()
    assert shim is not None
    counts = dataclasses.asdict(shim)
    return {k: counts[k] for k in FALLBACKS} | {"delegated": counts["delegated"]}


def _log(lc: LocalCluster) -> list[dict[str, Any]]:
    path = lc.info().decision_log
    assert path is not None
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _running_containers(lc: LocalCluster, at_least: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    with closing(lc.rm()) as rm:
        while sum(a.running_containers for a in rm.apps(states=("RUNNING",))) < at_least:
            assert time.monotonic() < deadline, f"fewer than {at_least} containers running after {timeout_s:.0f} s"
            time.sleep(0.5)


def test_swap_fifo_to_dress_and_back_while_jobs_run(cluster: LocalCluster) -> None:
    jobs = [cluster.start_client(SLEEP, "sleep") for _ in range(2)]
    _running_containers(cluster, 4)
    before = _fallbacks(cluster)

    t0 = time.monotonic()
    swapped = _policy(cluster, "set", "dress", "--shadow", "10", "--wait", "180")
    print(f"\n$ yarnctl policy set dress --shadow 10 --wait   ({time.monotonic() - t0:.1f} s)\n{swapped.stdout}")
    assert swapped.returncode == 0, swapped.stdout + swapped.stderr
    assert "dress active, replacing fifo" in swapped.stdout

    deadline = time.monotonic() + 60  # let dress decide a few heartbeats with room
    while sum(r.get("policy") == "dress" and "seq" in r for r in _log(cluster)) < 5:
        assert time.monotonic() < deadline, "dress decided fewer than 5 calls in 60 s"
        time.sleep(0.5)
    back = _policy(cluster, "rollback")
    print(f"$ yarnctl policy rollback\n{back.stdout}")
    assert back.returncode == 0 and "fifo active again (from dress)" in back.stdout
    shown = _policy(cluster, "show")
    print(f"$ yarnctl policy show\n{shown.stdout}")
    after = _fallbacks(cluster)
    print(f"shim before the swap {before}\nshim after the rollback {after}")

    for job in jobs:
        out, _ = job.communicate(timeout=400)
        assert job.returncode == 0, out[-3000:]
        assert cluster.wait_app(app_ids(out)[-1], timeout_s=60).final_status == "SUCCEEDED"
    assert after["delegated"] > before["delegated"]
    assert {k: after[k] - before[k] for k in FALLBACKS} == dict.fromkeys(FALLBACKS, 0)

    recs = _log(cluster)
    events = [(i, r["event"]) for i, r in enumerate(recs) if "event" in r]
    assert [e for _, e in events] == ["shadow", "active", "rolled-back"]
    (i_shadow, _), (i_active, _), (i_back, _) = events
    in_shadow = [r for r in recs[i_shadow:i_active] if "seq" in r]
    assert in_shadow and {r["policy"] for r in in_shadow} == {"fifo"}
    shadowed = [r["shadow"] for r in in_shadow if "shadow" in r]
    assert len(shadowed) >= 10 and {s["policy"] for s in shadowed} == {"dress"}
    assert all("error" not in s for s in shadowed)
    assert {r["policy"] for r in recs[i_active:i_back] if "seq" in r} == {"dress"}
    assert {r["policy"] for r in recs[i_back:] if "seq" in r} <= {"fifo"}
    print(f"decision log: {len(in_shadow)} calls in shadow ({len(shadowed)} shadowed, "
          f"{sum(not s['same'] for s in shadowed)} decided otherwise by dress), "
          f"{sum('seq' in r for r in recs[i_active:i_back])} decided by dress, then fifo again")
