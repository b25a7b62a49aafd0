"""Queues as operators configure them, live: the shim on CapacityScheduler (`--shim-on capacity`) with ACLs on.

One real Hadoop 2.7.7 cluster for the module, policy fifo, two 4 GB NodeManagers, and this
capacity-scheduler.xml: `a` 70% (up to 100%), `b` 30% (up to 50%: 4 GB), `c` STOPPED; nobody may
submit at the root, anyone to `a` and `c`, only alice and carol to `b` (`yarn.acl.enable` true).
Every submission goes through Hadoop's own clients; what they print is CapacityScheduler's own
wording. Each user submits once: on file:// a second job of one user finds the staging directory its
first created, owned by the real (root) user, and MapReduce's ownership check refuses it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live import DEADLINE_MS

from yarnctl.cluster.conf import set_values
from yarnctl.cluster.local import LocalCluster, app_ids

pytestmark = pytest.mark.integration

CS = "yarn.scheduler.capacity."
TREE = {CS + "root.queues": "a,b,c", CS + "root.a.capacity": "70", CS + "root.b.capacity": "30",
        CS + "root.b.maximum-capacity": "50", CS + "root.c.capacity": "0", CS + "root.c.state": "STOPPED",
        CS + "maximum-am-resource-percent": "0.5",
        CS + "root.acl_submit_applications": " ", CS + "root.acl_administer_queue": " ",
        CS + "root.a.acl_submit_applications": "*", CS + "root.b.acl_submit_applications": "alice,carol",
        CS + "root.c.acl_submit_applications": "*"}
QUEUE_CLI = "org.apache.hadoop.yarn.client.cli.QueueCLI"
MAPRED_QUEUE = "org.apache.hadoop.mapred.JobQueueClient"
RMADMIN = "org.apache.hadoop.yarn.client.cli.RMAdminCLI"
APPLICATION = "org.apache.hadoop.yarn.client.cli.ApplicationCLI"  # `yarn application`: the title goes first
MEMORY = ["-Dyarn.app.mapreduce.am.resource.mb=1024", "-Dmapreduce.map.memory.mb=1024",
          "-Dmapreduce.reduce.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx256m",
          "-Dmapreduce.reduce.java.opts=-Xmx256m"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    lc = LocalCluster(tmp_path_factory.mktemp("queues") / "c")
    lc.up(policy="fifo", nodes=2, shim_on="capacity", capacity_site=TREE, yarn_site={"yarn.acl.enable": "true"},
          deadline_ms=DEADLINE_MS)
    try:
        yield lc
    finally:
        lc.down()


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Stock CapacityScheduler on the same tree: what the shim's messages must equal."""
    lc = LocalCluster(tmp_path_factory.mktemp("queues-stock") / "c")
    lc.up(native="capacity", nodes=1, capacity_site=TREE, yarn_site={"yarn.acl.enable": "true"})
    try:
        yield lc
    finally:
        lc.down()


def _run(lc: LocalCluster, main: str, args: list[str], user: str = "root",
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**lc.client_env(), "HADOOP_USER_NAME": user}
    return subprocess.run(lc.client_command(args, main), env=env, cwd=lc.info().dir, text=True,
                          capture_output=True, timeout=timeout)


def _get(lc: LocalCluster, path: str) -> Any:
    with urllib.request.urlopen(lc.info().rm_url + path, timeout=30) as r:
        return json.loads(r.read())


def _queues(lc: LocalCluster) -> dict[str, dict[str, Any]]:
    """The leaves of /ws/v1/cluster/scheduler by name."""
    root = _get(lc, "/ws/v1/cluster/scheduler")["scheduler"]["schedulerInfo"]
    return {q["queueName"]: q for q in root["queues"]["queue"]}


def _queue_metrics(lc: LocalCluster, leaf: str) -> dict[str, Any]:
    [bean] = _get(lc, f"/jmx?qry=Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1={leaf}")["beans"]
    return bean  # type: ignore[no-any-return]


def _requests(lc: LocalCluster) -> list[dict[str, Any]]:
    time.sleep(1.5)  # the decision log flushes every second
    log = lc.info().decision_log
    assert log is not None
    return [json.loads(line)["req"] for line in log.read_text().splitlines() if line.strip()]


def _last_queue(lc: LocalCluster, app: str, want: str, timeout_s: float = 20) -> str | None:
    """The queue the last logged request gave APP, polled until it is WANT or the time is up."""
    # the move reaches Python with the next heartbeat, and the log a flush later: a busy CI machine needs more than one
    deadline = time.monotonic() + timeout_s
    while True:
        rows = [row[1] for r in _requests(lc) for row in r.get("apps", []) if row[0] == app]
        if (rows and rows[-1] == want) or time.monotonic() > deadline:
            return rows[-1] if rows else None


@pytest.mark.parametrize("queue, user, message", [
    ("nosuch", "root", r"Application application_\d+_\d+ submitted by user root to unknown queue: nosuch"),
    ("root", "root", r"Application application_\d+_\d+ submitted by user root to non-leaf queue: root"),
    ("c", "root", r"Queue root\.c is STOPPED\. Cannot accept submission of application: application_\d+_\d+"),
    ("b", "bob", r"User bob cannot submit applications to queue root\.b"),
], ids=["unknown-queue", "parent-queue", "stopped-queue", "no-submit-acl"])
def test_a_submission_capacity_scheduler_refuses_fails_with_its_own_message(
        cluster: LocalCluster, stock: LocalCluster, queue: str, user: str, message: str) -> None:
    said = []
    for lc in (cluster, stock):
        p = _run(lc, "sleep", [f"-Dmapreduce.job.queuename={queue}", *MEMORY, "-m", "1", "-r", "0", "-mt", "100"],
                 user=user, timeout=120)
        m = re.search(message, p.stderr)
        assert p.returncode != 0 and m, p.stderr[-2000:]
        said.append(re.sub(r"application_\d+_\d+", "APP", p.stderr[m.start():].splitlines()[0]))
    assert said[0] == said[1]  # word for word what stock CapacityScheduler says


def test_yarn_queue_status_shows_what_stock_capacity_scheduler_shows(cluster: LocalCluster,
                                                                      stock: LocalCluster) -> None:
    shown = [[line for line in _run(lc, QUEUE_CLI, ["-status", q]).stdout.splitlines() if " : " in line]
             for lc in (cluster, stock) for q in ("a", "b", "c")]
    assert shown[:3] == shown[3:] and len(shown[0]) >= 6, shown  # name, state, capacities, labels
    assert "\tMaximum Capacity : 50.0%" in shown[1] and "\tState : STOPPED" in shown[2]


def test_a_job_stays_within_its_queue_and_every_view_shows_the_tree(cluster: LocalCluster) -> None:
    # alice's job in b wants an AM, six maps and a reduce of 1 GB: 8 GB, twice b's maximum
    client = subprocess.Popen(
        cluster.client_command(["-Dmapreduce.job.queuename=b", *MEMORY, "-m", "6", "-r", "1", "-mt", "3000",
                                "-rt", "500"], "sleep"),
        env={**cluster.client_env(), "HADOOP_USER_NAME": "alice"}, cwd=cluster.info().dir, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = 0
    while client.poll() is None:
        peak = max(peak, _queues(cluster)["b"]["resourcesUsed"]["memory"])
        time.sleep(0.5)
    out = client.communicate()[0]
    assert client.returncode == 0, out[-3000:]
    app = cluster.wait_app(app_ids(out)[-1], timeout_s=60)
    assert app.final_status == "SUCCEEDED" and app.queue == "b"
    print(f"b's peak usage: {peak} MB of its 4096")
    assert 2048 <= peak <= 4096

    # Python got the tree and placed the job's containers
    reqs = _requests(cluster)
    trees = [r["queues"] for r in reqs if "queues" in r]
    assert trees and ["b", "root.b", "root", 1, 1, 0.3, 0.5, 0.3, 0.5, 100, 1.0, 4096] == trees[-1][2][:12]
    status = json.loads((cluster.info().dir / "serve-status.json").read_text())
    assert status["assigned"] >= 8
    deadline = time.monotonic() + 60
    while (m := _queue_metrics(cluster, "b"))["AllocatedMB"] or m["AppsRunning"]:  # the AM's container ends last
        assert time.monotonic() < deadline, m
        time.sleep(0.5)
    assert (m["AppsCompleted"], m["AppsRunning"], m["AllocatedMB"]) == (1, 0, 0)
    assert m["AggregateContainersAllocated"] >= 8

    # and a job in the other leaf
    small = _run(cluster, "sleep", ["-Dmapreduce.job.queuename=a", *MEMORY, "-m", "1", "-r", "0", "-mt", "500"])
    assert small.returncode == 0, small.stderr[-2000:]
    assert cluster.wait_app(app_ids(small.stderr)[-1], timeout_s=60).queue == "a"
    deadline = time.monotonic() + 60
    while _queue_metrics(cluster, "a")["AppsCompleted"] < 1:
        assert time.monotonic() < deadline, _queue_metrics(cluster, "a")
        time.sleep(0.5)

    q = _run(cluster, QUEUE_CLI, ["-status", "b"])
    assert q.returncode == 0 and "Maximum Capacity : 50.0%" in q.stdout and "State : RUNNING" in q.stdout, q.stdout
    listing = _run(cluster, MAPRED_QUEUE, ["-list"]).stdout
    assert re.search(r"Queue Name : c \nQueue State : stopped", listing), listing
    tree = _queues(cluster)
    assert sorted(tree) == ["a", "b", "c"] and tree["c"]["state"] == "STOPPED"
    assert (tree["a"]["capacity"], tree["b"]["maxCapacity"]) == (70.0, 50.0)
    screen = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "status", "--rm", cluster.info().rm_url],
                            text=True, capture_output=True, timeout=60).stdout
    assert re.search(r"^\s+b\s+30%\s+\S+\s+50%", screen, re.M), screen  # `yarnctl status`: under root, 30% up to 50%


def _write_tree(lc: LocalCluster, values: dict[str, str]) -> None:
    f = Path(lc.info().conf_dir) / "capacity-scheduler.xml"
    f.write_text(set_values(f.read_text(), values))


def test_refresh_queues_applies_a_good_tree_and_keeps_the_old_one_for_a_bad_one(cluster: LocalCluster) -> None:
    seen = len(_requests(cluster))
    _write_tree(cluster, {CS + "root.c.state": "RUNNING"})
    ok = _run(cluster, RMADMIN, ["-refreshQueues"])
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert _queues(cluster)["c"]["state"] == "RUNNING"
    time.sleep(2.5)  # a heartbeat or two
    fresh = [r for r in _requests(cluster)[seen:] if "queues" in r]
    assert fresh and fresh[0]["full"] and fresh[0]["queues"][3][:5] == ["c", "root.c", "root", 1, 1]

    _write_tree(cluster, {CS + "root.a.capacity": "60"})  # 60 + 30 + 0
    bad = _run(cluster, RMADMIN, ["-refreshQueues"])
    _write_tree(cluster, {CS + "root.a.capacity": "70"})
    assert bad.returncode != 0 and "Failed to re-init queues" in bad.stderr, bad.stderr[-2000:]
    tree = _queues(cluster)
    assert (tree["a"]["capacity"], tree["c"]["state"]) == (70.0, "RUNNING")


def test_moving_then_killing_an_app_moves_then_releases_its_queue_usage(cluster: LocalCluster) -> None:
    client = subprocess.Popen(
        cluster.client_command(["-Dmapreduce.job.queuename=b", *MEMORY, "-m", "1", "-r", "0", "-mt", "120000"],
                               "sleep"),
        env={**cluster.client_env(), "HADOOP_USER_NAME": "carol"}, cwd=cluster.info().dir, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while _queues(cluster)["b"]["resourcesUsed"]["memory"] < 2048:  # the AM and the map run
            assert time.monotonic() < deadline, "the job never ran in b"
            time.sleep(0.5)
        [app] = [a["id"] for a in _get(cluster, "/ws/v1/cluster/apps?states=RUNNING")["apps"]["app"]]
        moved = _run(cluster, APPLICATION, ["application", "-movetoqueue", app, "-queue", "a"])
        assert moved.returncode == 0, moved.stderr[-2000:]
        tree = _queues(cluster)
        assert tree["b"]["resourcesUsed"]["memory"] == 0 and tree["a"]["resourcesUsed"]["memory"] >= 2048
        assert _last_queue(cluster, app, "a") == "a"

        killed = _run(cluster, APPLICATION, ["application", "-kill", app])
        assert killed.returncode == 0, killed.stderr[-2000:]
        deadline = time.monotonic() + 60
        while _queues(cluster)["a"]["resourcesUsed"]["memory"] > 0:
            assert time.monotonic() < deadline, "the killed app's containers were never released"
            time.sleep(0.5)
        assert _queue_metrics(cluster, "a")["AllocatedMB"] == 0
        assert _queue_metrics(cluster, "b")["AllocatedMB"] == 0
    finally:
        client.kill()
        client.communicate()
