"""ResourceManager HA with the shim: two RMs elect the active one on a real ZooKeeper 3.4.6; the active dies mid-job.

A cluster of its own (`up(ha=True)`): ZooKeeper, rm1 and rm2 (ZKRMStateStore, work-preserving), each RM
with its own `yarnctl serve --policy hmrf`, both servers sharing one policy-state file. A SleepJob runs;
the active RM is killed -9 (`failover`). The job must finish SUCCEEDED; the standby's policy server must
have decided nothing before the takeover and decide after it, starting with a full sync and from the
H-MRF accounting its peer saved; `status` and both servers' control loops must follow the new active (the old
active's server within 30 s of the job's end: it names the RM it follows at its next status write).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from live import DEADLINE_MS
from hmrfstatus import accumulated_vcore_seconds

from yarnctl.bridge.decisionlog import LogReader
from yarnctl.cluster.local import LocalCluster, app_ids
from yarnctl.cluster.start import serve_files
from yarnctl.rm import HttpSettings

pytestmark = pytest.mark.integration

JOB = ["-Dmapreduce.map.memory.mb=512", "-Dmapreduce.reduce.memory.mb=512", "-Dmapreduce.map.java.opts=-Xmx256m",
       "-Dmapreduce.reduce.java.opts=-Xmx256m", "-Dyarn.app.mapreduce.am.resource.mb=768",
       "-m", "4", "-r", "1", "-mt", "15000", "-rt", "2000"]


def test_a_job_survives_the_active_rm_killed_and_the_standbys_server_takes_over(tmp_path: Path) -> None:
    lc = LocalCluster(tmp_path / "c")
    info = lc.up(policy="hmrf", nodes=2, nm_memory_mb=4096, nm_vcores=8, ha=True, deadline_ms=DEADLINE_MS)
    try:
        old = lc.active_rm()
        new_expected = "rm2" if old == "rm1" else "rm1"
        old_files, new_files = serve_files(info.dir, old), serve_files(info.dir, new_expected)
        client = lc.start_client(JOB, "sleep")
        rm = lc.rm(HttpSettings(read_timeout_s=10))
        deadline = time.monotonic() + 240
        while True:  # kill once the job runs tasks (its AM plus at least one map)
            apps = [a for a in rm.apps() if a.state == "RUNNING"]
            if apps and apps[0].running_containers >= 2:
                break
            assert time.monotonic() < deadline, f"the job did not start: {[(a.id, a.state) for a in rm.apps()]}"
            time.sleep(0.5)
        rm.close()
        time.sleep(11)  # one save of the active's H-MRF accounting (every 10 s) with the job in it
        standby_before = list(LogReader(new_files["decisions"])) if new_files["decisions"].exists() else []
        accumulated_at_kill = accumulated_vcore_seconds(old_files["status"])
        killed_at_ms = int(time.time() * 1000)
        new, info = lc.failover()
        out = client.communicate(timeout=900)[0]
        final = lc.wait_app(app_ids(out)[-1], timeout_s=300)
        time.sleep(2)  # one more status-file write by the new active's server
        status = lc.status()
        serve_log = (info.dir / "logs" / f"serve-{new}.log" if new == "rm2" else info.dir / "logs" / "serve.log")
        took_over = serve_log.read_text(errors="replace")
        accumulated_after = accumulated_vcore_seconds(new_files["status"])
        new_daemon = info.rm2 if new == "rm2" else info.rm
        new_url = new_daemon.url if new_daemon is not None else ""
        deadline = time.monotonic() + 30
        while True:  # the old active's server names the RM it follows at its next status write (ticks of 5 s)
            old_status = json.loads(old_files["status"].read_text())
            if old_status["control_loop"]["rm"] == new_url or time.monotonic() > deadline:
                break
            time.sleep(1)
    finally:
        lc.down()

    assert client.returncode == 0, out[-3000:]
    assert final.final_status == "SUCCEEDED", (final.id, final.state, final.final_status)
    assert new == new_expected
    assert standby_before == [], f"the standby's policy server decided {len(standby_before)} times before the takeover"

    records = list(LogReader(new_files["decisions"]))
    assert records and all(r["t"] > killed_at_ms for r in records)
    assert records[0]["req"]["full"] is True, "the new active's shim did not start with a full sync"
    placed = sum(n for r in records for _app, _p, n, *_ in (r["resp"] or {}).get("a", []))
    assert placed >= 1, f"the new active's policy server placed {placed} containers"

    # status and the control loops follow the new active
    assert status["ha_states"] == {new: "ACTIVE", old: "STANDBY"}, status["ha_states"]
    new_rm = info.rm2 if new == "rm2" else info.rm
    assert new_rm is not None
    new_serve = info.serve2 if new == "rm2" else info.serve
    assert new_serve is not None and status["serve_status"]["port"] == new_serve.ports["py4j"]
    assert status["serve_status"]["control_loop"]["rm"] == new_rm.url
    assert old_status["control_loop"]["rm"] == new_rm.url

    # H-MRF's accounting went on from what the old active saved, not from zero
    assert "took over the state another policy server saved" in took_over
    assert accumulated_at_kill > 0 and accumulated_after > accumulated_at_kill, (accumulated_at_kill, accumulated_after)
    print(f"{old} killed, {new} active; job {final.id} {final.final_status}; {new}'s server: {len(records)} decision "
          f"records, {placed} containers placed; H-MRF vcore-seconds {accumulated_at_kill:.0f} at the kill, "
          f"{accumulated_after:.0f} at the end")
