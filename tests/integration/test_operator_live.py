"""The operator's questions live, on one real Hadoop 2.7.7 cluster: what if (`yarnctl whatif`), then a hot swap.

The cluster: the shim on FifoScheduler calling `yarnctl serve --policy fifo` at every NodeManager
heartbeat with room, two 4 GB NodeManagers, the JobHistoryServer.

`yarnctl whatif`: a first SleepJob runs to the end, so the history knows a job of that name (its map
and reduce times, and its AM's teardown). Then two SleepJobs of 8 maps (8 s) and one reduce (5 s)
each, the second submitted once the first's AM answers; once the first has finished two maps (the
second waits behind it), `yarnctl whatif --policy dress --json` predicts both jobs' remaining
completion times under fifo (the serving policy) and dress, from the policy server's state and the
AMs' task reports. Asserted: both policies predicted for both jobs; fifo's prediction for each job
within PREDICTION_ERROR of its actual remaining time (RM finish time minus the moment whatif read
the cluster, its JSON's `at`) once its map estimate's own over-estimate is taken out (the estimate
less the median run time of the maps not done at the prediction, from the job history: the JVM
start-up bias docs/whatif.md measures), and the first job's map estimate within ESTIMATE_S of the
median of the maps whatif saw done (the first so many to finish, timed by the job history).
The errors are printed, and written up in docs/whatif.md.

The hot swap: with two SleepJobs running (15 s maps), `yarnctl policy set dress --shadow 8s --wait
--max-latency-ms` (half this cluster's deadline, as the default is half the shim's default) checks
DRESS in shadow for 8 s (its decisions logged beside fifo's, not applied) and lets it take
over; DRESS then decides for a while and `yarnctl policy rollback` returns to fifo. The
ResourceManager is never restarted. Asserted: both jobs SUCCEEDED; the shim's fallback counters
(timeouts, errors, unreachable, refused, breaker) did not move from before the swap to after the
rollback, i.e. every heartbeat of the swap was answered by Python within this cluster's deadline;
every call from the shadow phase's start to the rollback took Python (waiting for the service lock,
which a swap takes to install, included) under half that deadline, and their median under the shim's
default 10 ms (wall times on a starved machine: a swap holding heartbeats up for tens of ms would
pass here, one holding them for 125 ms or more would not); the decision log shows the shadow phase
(fifo's calls carrying DRESS's shadow decisions), the active phase (calls decided by dress) and the
rollback, in that order.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from live import DEADLINE_MS

from yarnctl.cli.whatif import predicted_s
from yarnctl.cluster.local import LocalCluster, app_ids
from yarnctl.errors import YarnctlError
from yarnctl.rm import HistoryServer

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MEMORY = ["-Dmapreduce.map.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx256m",
          "-Dmapreduce.reduce.memory.mb=1024", "-Dmapreduce.reduce.java.opts=-Xmx256m"]
MAP_SLEEP_S = 8.0
FIRST = [*MEMORY, "-m", "2", "-r", "1", "-mt", str(int(MAP_SLEEP_S * 1000)), "-rt", "5000"]
JOB = [*MEMORY, "-m", "8", "-r", "1", "-mt", str(int(MAP_SLEEP_S * 1000)), "-rt", "5000"]
PREDICTION_ERROR = 0.35  # |predicted - actual| / actual, per job
ESTIMATE_S = 2.0  # the first job's map estimate against the median of the maps it saw done, as the history times them
# long maps: few JVMs start during the swap. On these 2 vCPUs, running the whole cluster, a burst of JVM
# starts delays the policy server past the shim's 10 ms deadline now and then whatever it does (with
# 5 s maps: one native heartbeat before a swap, two during, one after, in one of four runs; with 15 s
# maps, one in three runs and in CI: a heartbeat sent as two containers started reached Python's decide
# 26 ms later, no lock waited for, 0.6 ms to decide). So the shim gets the shared cluster's generous
# DEADLINE_MS, and Python's own time per call is read from the decision log (wall time too: bounded loosely)
DEFAULT_DEADLINE_MS = 10  # the shim's yarnctl.shim.deadline-ms default (ShimConfig)
SLEEP = ["-Dmapreduce.map.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx256m", "-m", "6", "-r", "1",
         "-mt", "15000", "-rt", "1000"]
FALLBACKS = ("fallback", "fallback_timeout", "fallback_error", "fallback_unreachable", "fallback_refused",
             "fallback_breaker_open")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    lc = LocalCluster(tmp_path_factory.mktemp("operator") / "c")
    lc.up(policy="fifo", nodes=2, deadline_ms=DEADLINE_MS)
    try:
        yield lc
    finally:
        lc.down()


def _maps_done(lc: LocalCluster, app_id: str) -> int:
    with closing(lc.rm()) as rm:
        try:
            return sum(t.type == "MAP" and t.state == "SUCCEEDED" for t in rm.am_tasks(app_id))
        except YarnctlError:
            return 0  # its AM is not up yet


def _am_up(lc: LocalCluster, app_id: str) -> bool:
    with closing(lc.rm()) as rm:
        try:
            rm.am_tasks(app_id)
        except YarnctlError:
            return False
    return True


def _running(lc: LocalCluster, n: int, besides: set[str], timeout_s: float = 120) -> list[str]:
    """The ids of the RUNNING apps not in `besides`, in id order, once there are at least `n`."""
    deadline = time.monotonic() + timeout_s
    with closing(lc.rm()) as rm:
        while time.monotonic() < deadline:
            apps = sorted(a.id for a in rm.apps(states=("RUNNING",)) if a.id not in besides)
            if len(apps) >= n:
                return apps
            time.sleep(0.5)
    raise AssertionError(f"fewer than {n} new RUNNING apps after {timeout_s:.0f} s")


def test_whatif_predicts_the_running_jobs_completion(cluster: LocalCluster) -> None:
    first = cluster.start_client(FIRST, "sleep")
    out, _ = first.communicate(timeout=300)
    assert first.returncode == 0, out[-2000:]
    # the second job is submitted once the first's AM answers: submitted together, the second's AM came up
    # first in one CI run, took the room and was in its reduce at the prediction (44% off on a 10.8 s horizon)
    with closing(cluster.rm()) as rm:
        before = {a.id for a in rm.apps()}  # the first SleepJob's app may still read RUNNING as its AM ends
    jobs = [cluster.start_client(JOB, "sleep")]
    (head,) = _running(cluster, 1, before)
    deadline = time.monotonic() + 180
    while not _am_up(cluster, head):
        assert time.monotonic() < deadline, "the first job's AM did not answer in 180 s"
        time.sleep(0.5)
    jobs.append(cluster.start_client(JOB, "sleep"))
    apps = _running(cluster, 2, before)
    assert apps[0] == head
    # both AMs up, the first job two maps in: fifo still gives it the cluster, the second waits
    deadline = time.monotonic() + 180
    while not (_maps_done(cluster, apps[0]) >= 2 and _am_up(cluster, apps[1])):
        assert time.monotonic() < deadline, "in 180 s: not two maps of the first job done and the second's AM up"
        time.sleep(0.5)

    done = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "whatif", "--policy", "dress", "--json",
                           "--serve-status", str(cluster.active_status_file())],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    t_at = doc["at"]  # the moment of the prediction: when whatif read the cluster
    text = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "whatif", "--policy", "dress", "--jobs",
                           "--serve-status", str(cluster.active_status_file())],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    print(f"\n$ yarnctl whatif --policy dress --jobs\n{text.stdout}{text.stderr}")
    assert doc["serving"] == "fifo" and set(doc["results"]) == {"fifo", "dress"}
    plans = {p["app"]: p for p in doc["plans"]}
    assert set(plans) == set(apps)
    for p in plans.values():
        assert p["map_s"]["source"] in ("finished tasks", "job history")
        assert p["reduce_s"]["source"] in ("job history", "finished tasks")
    assert plans[apps[0]]["maps"][0] >= 2
    fifo, dress = predicted_s(doc, "fifo"), predicted_s(doc, "dress")
    assert all(fifo[a] is not None and dress[a] is not None for a in apps)

    for job in jobs:
        out, _ = job.communicate(timeout=400)
        assert job.returncode == 0, out[-2000:]
    actual: dict[str, float] = {}
    late: dict[str, float] = {}  # predicted - actual: > 0 when the prediction said later than it came
    for a in apps:
        actual[a] = cluster.wait_app(a, timeout_s=60).finished_time_ms / 1000 - t_at
        late[a] = fifo[a] - actual[a]  # type: ignore[operator]
        print(f"{a}: predicted {fifo[a]:.1f} s under fifo ({dress[a]:.1f} s under dress), actual {actual[a]:.2f} s, "
              f"error {abs(late[a]) / actual[a]:.0%} ({late[a]:+.1f} s)")
    # the estimate from finished tasks does not model JVM start-up contention: the first job's first maps start in
    # one burst and run long, so the maps after them are over-estimated by part of that burst's start-up (runs 8-21
    # in docs/whatif.md: the first job 4.2-9.9 s late; in run 19 the maps seen took 13.4-15.0 s, the one after them
    # 10.5 s, for 8 s of sleep). That over-estimate is measured apart from the product, from the job history after
    # the fact, and taken out of how late the prediction came: what is left is the simulation's own error
    info = cluster.info()
    assert info.history is not None
    # the maps whatif saw done are the first so many to finish: compared by the history's times, not by which were done
    # at some moment of the test's (in one CI run 4 were done when the test asked, 7 when whatif read the AM)
    with closing(HistoryServer(info.history.url)) as jhs:
        maps = {a: sorted((t for t in jhs.job_tasks(a) if t.type == "MAP" and t.state == "SUCCEEDED"),
                          key=lambda t: (t.finish_time_ms, t.id)) for a in apps}
    seen = plans[apps[0]]["maps"][0]
    done = [t.elapsed_ms / 1000 for t in maps[apps[0]][:seen]]
    assert len(done) == seen, f"the history has {len(maps[apps[0]])} maps of the first job, whatif saw {seen} done"
    estimate = plans[apps[0]]["map_s"]
    assert estimate["source"] == "finished tasks", estimate
    assert abs(estimate["seconds"] - statistics.median(done)) <= ESTIMATE_S, (estimate, done)
    over: dict[str, float] = {}  # how much each job's map estimate over-shot its maps not done at the prediction
    for a in apps:
        after = [t.elapsed_ms / 1000 for t in maps[a][plans[a]["maps"][0]:]]
        over[a] = max(0.0, plans[a]["map_s"]["seconds"] - statistics.median(after)) if after else 0.0
        print(f"{a}: maps estimated {plans[a]['map_s']['seconds']:.1f} s ({plans[a]['map_s']['source']}), the "
              f"{len(after)} not done then took {statistics.median(after) if after else 0:.1f} s at the median: "
              f"over-estimated by {over[a]:.1f} s")
    # the rest within PREDICTION_ERROR, early or late (a prediction too early: a reduce taken for nearly done, runs 1,
    # 3 and 7)
    assert all(abs(late[a] - over[a]) <= PREDICTION_ERROR * actual[a] for a in apps), (late, over, actual)


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
    swapped = _policy(cluster, "set", "dress", "--shadow", "8s", "--max-latency-ms", str(DEADLINE_MS / 2),
                      "--wait", "180")
    print(f"\n$ yarnctl policy set dress --shadow 8s --max-latency-ms {DEADLINE_MS / 2} --wait   "
          f"({time.monotonic() - t0:.1f} s)\n{swapped.stdout}")
    assert swapped.returncode == 0, swapped.stdout + swapped.stderr
    assert "dress active, replacing fifo" in swapped.stdout

    deadline = time.monotonic() + 90  # let dress decide a few heartbeats with room
    while sum(r.get("policy") == "dress" and "seq" in r for r in _log(cluster)) < 3:
        assert time.monotonic() < deadline, "dress decided fewer than 3 calls in 90 s"
        time.sleep(0.5)
    back = _policy(cluster, "rollback")
    print(f"$ yarnctl policy rollback\n{back.stdout}")
    assert back.returncode == 0 and "fifo active again (from dress)" in back.stdout
    shown = _policy(cluster, "show")
    print(f"$ yarnctl policy show\n{shown.stdout}")
    after = _fallbacks(cluster)
    t_after_ms = time.time() * 1000
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
    assert shadowed and {s["policy"] for s in shadowed} == {"dress"}
    assert all("error" not in s for s in shadowed)
    assert {r["policy"] for r in recs[i_active:i_back] if "seq" in r} == {"dress"}
    assert {r["policy"] for r in recs[i_back:] if "seq" in r} <= {"fifo"}
    # Python's part of each call of the swap, the wait for the service lock included (a swap takes it to install)
    swap_calls = [r for r in recs[i_shadow:] if "seq" in r and r["t"] <= t_after_ms]
    own_ms = [(r["us"] + r.get("waited_us", 0)) / 1000 for r in swap_calls]
    late_ms = [r["t"] - r["req"]["t"] for r in swap_calls if isinstance(r["req"], dict) and "t" in r["req"]]
    assert swap_calls
    print(f"{len(swap_calls)} calls in the swap: Python's time at most {max(own_ms):.2f} ms, sent to answered at "
          f"most {max(late_ms, default=0)} ms")
    assert max(own_ms) < DEADLINE_MS / 2 and statistics.median(own_ms) < DEFAULT_DEADLINE_MS
    print(f"decision log: {len(in_shadow)} calls in shadow ({len(shadowed)} shadowed, "
          f"{sum(not s['same'] for s in shadowed)} decided otherwise by dress), "
          f"{sum('seq' in r for r in recs[i_active:i_back])} decided by dress, then fifo again")
