"""The AM-share limit live: eight MapReduce jobs whose AMs alone would fill the cluster, under the shim with dress.

Two NodeManagers of 8 GB; every job asks for a 2 GB AM (as Hadoop's stock 1536 MB AM is once a
1024 MB minimum allocation rounds it up), so eight AMs take all 16 GB and no map could ever
start: DRESS admits every not-yet-classified job through its small-demand pool, and the simulator
deadlocks exactly so without the limit (tests/policies/test_am_limit.py). With it the engine
shows the policy only the AMs that keep AMs within half the cluster's memory, and every job ends.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from live import DEADLINE_MS

from yarnctl.cluster.local import LocalCluster, app_ids

pytestmark = pytest.mark.integration

AM_TRANSITION = re.compile(r" container_\S+_01_000001 Container Transitioned from \w+ to (\w+)")
ENDED = {"COMPLETED", "RELEASED", "KILLED", "EXPIRED"}
JOB = ["-Dyarn.app.mapreduce.am.resource.mb=2048", "-Dmapreduce.map.memory.mb=1024",
       "-Dmapreduce.map.java.opts=-Xmx256m", "-m", "2", "-r", "1", "-mt", "2000", "-rt", "500"]


def test_eight_2gb_ams_on_two_8gb_nodes_all_finish_under_dress(tmp_path: Path) -> None:
    lc = LocalCluster(tmp_path / "c")
    lc.up(policy="dress", nodes=2, nm_memory_mb=8192, nm_vcores=16, serve_args=["--tune-interval", "1"],
          deadline_ms=DEADLINE_MS)
    try:
        clients = [lc.start_client(JOB, "sleep") for _ in range(8)]
        outs = [c.communicate(timeout=900)[0] for c in clients]
        apps = [lc.wait_app(app_ids(out)[-1], timeout_s=120) for out in outs]
    finally:
        lc.down()
    assert [c.returncode for c in clients] == [0] * 8, [o[-2000:] for o, c in zip(outs, clients) if c.returncode]
    assert all(a.final_status == "SUCCEEDED" for a in apps), [(a.id, a.final_status) for a in apps]
    # an AM container is its attempt's first (..._01_000001): count them allocated and not yet ended in the
    # RM's log, whichever decided (Python, or the shim natively when Python missed its deadline)
    live = peak = 0
    for line in (tmp_path / "c" / "logs" / "resourcemanager.log").read_text(errors="replace").splitlines():
        m = AM_TRANSITION.search(line)
        if m:
            live += 1 if m.group(1) == "ALLOCATED" else -1 if m.group(1) in ENDED else 0
            peak = max(peak, live)
    print(f"most AMs at once: {peak}")
    assert 1 <= peak <= 4  # 4 x 2 GB is half of 16 GB
