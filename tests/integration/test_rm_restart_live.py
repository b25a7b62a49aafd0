"""Work-preserving ResourceManager restart with the shim: the RM is killed -9 while MapReduce jobs run.

A cluster of its own (recovery on, a file-system state store under the cluster dir): two SleepJobs
run, the RM dies mid-job and is started again on the same ports. The jobs must finish SUCCEEDED, no
container id may be handed out twice (across both RM lifetimes, in the RM's log and on the nodes),
and the new RM's shim must rebuild Python's state with a full sync and go on delegating to the same
`yarnctl serve`, which outlives the RM; the policy (H-MRF) goes on from its accounting, not from zero.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

import pytest
from live import DEADLINE_MS
from hmrfstatus import accumulated_vcore_seconds

from yarnctl.bridge.decisionlog import LogReader
from yarnctl.cluster import procs
from yarnctl.cluster.local import LocalCluster, app_ids
from yarnctl.rm import HttpSettings

pytestmark = pytest.mark.integration

ALLOCATED = re.compile(r" (container_\S+) Container Transitioned from NEW to ALLOCATED")
HEARTBEAT_THREAD = "Node Status Updater"  # NodeStatusUpdaterImpl's heartbeat loop
RECOVERED = re.compile(r"Recovering app: application_|Recovering container")
JOB = ["-Dmapreduce.map.memory.mb=512", "-Dmapreduce.reduce.memory.mb=512", "-Dmapreduce.map.java.opts=-Xmx256m",
       "-Dmapreduce.reduce.java.opts=-Xmx256m", "-Dyarn.app.mapreduce.am.resource.mb=768",
       "-m", "3", "-r", "1", "-mt", "15000", "-rt", "2000"]


def test_jobs_survive_an_rm_killed_mid_run_and_python_resyncs(tmp_path: Path) -> None:
    lc = LocalCluster(tmp_path / "c")
    info = lc.up(policy="hmrf", nodes=2, nm_memory_mb=4096, nm_vcores=8, recovery=True, deadline_ms=DEADLINE_MS)
    try:
        clients = [lc.start_client(JOB, "sleep") for _ in range(2)]
        rm = lc.rm(HttpSettings(read_timeout_s=10))
        # kill once both jobs run tasks (AM plus at least one map each: 2+ containers per app)
        deadline = time.monotonic() + 240
        while True:
            apps = [a for a in rm.apps() if a.state == "RUNNING"]
            if len(apps) == 2 and all(a.running_containers >= 2 for a in apps):
                break
            assert time.monotonic() < deadline, f"the jobs did not start: {[(a.id, a.state) for a in rm.apps()]}"
            time.sleep(0.5)
        rm.close()
        before = {a.id for a in apps}
        time.sleep(2)  # a status-file write (every second) with both jobs running
        accumulated_at_kill = accumulated_vcore_seconds(info.dir / "serve-status.json")
        killed_at_ms = int(time.time() * 1000)
        lc.restart_rm(kill=True)
        # every NM re-registered: each must still have its heartbeat thread (stock 2.7.7 lost it in 11 of 50
        # re-registrations, docs/cluster.md "NodeManagers")
        lost = [nm.name for nm in info.nodes if not procs.has_thread(nm.pid, info.java_home, HEARTBEAT_THREAD)]
        outs = [c.communicate(timeout=900)[0] for c in clients]
        finals = [lc.wait_app(app_ids(out)[-1], timeout_s=300) for out in outs]
        time.sleep(2)
        accumulated_after = accumulated_vcore_seconds(info.dir / "serve-status.json")
    finally:
        lc.down()

    assert not lost, f"no heartbeat thread left in {lost} after re-registering with the restarted RM"
    assert [c.returncode for c in clients] == [0, 0], [o[-3000:] for o, c in zip(outs, clients) if c.returncode]
    assert {a.id for a in finals} == before
    assert all(a.final_status == "SUCCEEDED" for a in finals), [(a.id, a.final_status) for a in finals]

    # no container id allocated twice, across both RM lifetimes (the RM appends to one log)
    rm_log = (tmp_path / "c" / "logs" / "resourcemanager.log").read_text(errors="replace")
    allocated = Counter(ALLOCATED.findall(rm_log))
    assert allocated and max(allocated.values()) == 1, [c for c, n in allocated.items() if n > 1]
    assert RECOVERED.search(rm_log), "the restarted RM recovered nothing from its state store"
    # ... nor launched on two nodes: each container's log dir lives on the node that ran it
    on_nodes = Counter(p.name for nm in (tmp_path / "c").glob("nm-*") for p in (nm / "logs").glob("application_*/container_*"))
    assert on_nodes and max(on_nodes.values()) == 1, [c for c, n in on_nodes.items() if n > 1]
    new_epoch = [c for c in allocated if c.startswith("container_e")]
    assert new_epoch, "no container was allocated after the restart (new containers carry the RM's epoch)"

    # the same yarnctl serve decided before and after: the new shim's first call is full state,
    # and Python's answers placed containers after it
    records = list(LogReader(tmp_path / "c" / "decisions.jsonl"))
    before_kill = [r for r in records if r["t"] < killed_at_ms]
    # the old RM may still heartbeat between that timestamp and its death (a CI run logged its last
    # delta after it): the restarted RM's shim numbers its calls afresh, so they start where seq goes back
    first_new = next((i for i, r in enumerate(records)
                      if i and r["t"] > killed_at_ms and r["seq"] <= records[i - 1]["seq"]), None)
    assert first_new is not None, "no call from the restarted RM's shim reached Python"
    after = records[first_new:]
    assert any((r["resp"] or {}).get("a") for r in before_kill), "Python placed nothing before the kill"
    first_after = after[0]["req"]
    assert first_after["full"] is True, "the restarted RM's shim did not start with a full sync"
    placed_after = sum(n for r in after for _app, _p, n, *_ in (r["resp"] or {}).get("a", []))
    assert placed_after >= 2, f"Python placed {placed_after} containers after the restart"
    # H-MRF's accounting (the accumulated resources ü_i, [H-MRF] Sec. 5) survived the full sync: it only grows
    assert 0 < accumulated_at_kill < accumulated_after, (accumulated_at_kill, accumulated_after)
    print(f"containers allocated {len(allocated)} ({len(new_epoch)} after the restart), recovered "
          f"{rm_log.count('Recovering container')}, decision records {len(before_kill)} before the kill and "
          f"{len(after)} after, Python placed {placed_after} after; H-MRF vcore-seconds {accumulated_at_kill:.0f} at "
          f"the kill, {accumulated_after:.0f} at the end")
