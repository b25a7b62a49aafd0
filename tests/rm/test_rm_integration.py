"""The rm/ clients against a real local Hadoop 2.7.7 cluster (own tmp dir, always stopped)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from yarnctl.cluster import LocalCluster, app_ids
from yarnctl.rm import AppNotFound, ContainerUsage, HistoryServer, HttpSettings, NodeManager, ResourceManager

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    c = LocalCluster(Path(tmp_path_factory.mktemp("rmcluster")) / "cluster")
    try:
        c.up(nodes=2, native="fifo")
        yield c
    finally:
        c.down()


def test_client_reads_a_running_cluster(cluster: LocalCluster) -> None:
    info = cluster.info()
    rm = ResourceManager([info.rm_url], settings=HttpSettings(read_timeout_s=5))
    assert rm.cluster_info().ha_state == "ACTIVE"
    nodes = rm.nodes(states=["RUNNING"])
    assert len(nodes) == 2 and all(n.state == "RUNNING" and n.capacity.memory_mb == 4096 for n in nodes)

    seen_nm_containers: list[str] = []
    seen_running: list[str] = []
    stop = threading.Event()

    def watch() -> None:  # what a control loop does while a job runs
        nms = [NodeManager("http://" + n.http_address) for n in nodes]
        while not stop.is_set():
            seen_running.extend(a.id for a in rm.apps(states=["RUNNING"]))
            for nm in nms:
                seen_nm_containers.extend(c.id for c in nm.containers())
            time.sleep(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        # pi writes its QuasiMonteCarlo_* scratch dir into the client's cwd
        cp = cluster.run(["pi", "2", "10"], timeout=180, cwd=cluster.dir.parent)
    finally:
        stop.set()
        watcher.join()
    assert cp.returncode == 0, cp.stderr[-2000:]
    app_id = app_ids(cp.stderr)[-1]
    assert cluster.wait_app(app_id, timeout_s=60).final_status == "SUCCEEDED"

    assert app_id in seen_running
    assert any(c.startswith("container_" + app_id.removeprefix("application_")) for c in seen_nm_containers)
    app = rm.app(app_id)
    assert (app.state, app.final_status, app.application_type) == ("FINISHED", "SUCCEEDED", "MAPREDUCE")
    assert app.memory_seconds > 0 and app.vcore_seconds > 0 and app.resource_requests
    assert [a.id for a in rm.apps(final_status="SUCCEEDED")] == [app_id]
    attempts = rm.app_attempts(app_id)
    assert len(attempts) == 1 and attempts[0].container_id.endswith("_01_000001")
    assert rm.metrics().apps_submitted == 1
    assert rm.scheduler().fifo is not None
    assert any(b.short_name == "ClusterMetrics" for b in rm.jmx())
    with pytest.raises(AppNotFound):
        rm.app(app_id[:-1] + "9")
    nm = NodeManager("http://" + nodes[0].http_address)
    assert nm.info().id in {n.id for n in nodes}
    assert info.history is not None
    assert HistoryServer(info.history.url).info().hadoop_version == "2.7.7"


def test_running_containers_report_their_usage(cluster: LocalCluster) -> None:
    # hadoop-conf runs the NM container monitor; the NM's /jmx refreshes a bean at most every
    # 10 s (the metrics period), so the map sleeps long enough to be seen while it runs
    nms = [NodeManager(url) for url in cluster.info().nm_urls]
    job = subprocess.Popen(cluster.client_command(["-m", "1", "-r", "0", "-mt", "25000"], "sleep"),
                           cwd=cluster.dir.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        usage = _running_usage(nms, deadline=time.monotonic() + 90)
    finally:
        _, err = job.communicate(timeout=180)
    assert job.returncode == 0, err[-2000:]
    assert usage, "no running container reported its usage"
    for u in usage:
        assert u.pid and u.pmem_mb and u.pmem_mb.samples > 0 and u.pmem_mb.max > 0
        assert u.cpu_percent is not None and u.milli_vcores is not None
        assert u.pmem_limit_mb > 0 and u.vmem_limit_mb == 1000 * u.pmem_limit_mb  # vmem-pmem-ratio 1000


def _running_usage(nms: list[NodeManager], deadline: float) -> list[ContainerUsage]:
    """The usage beans with stats of containers that are RUNNING, once some AM and some task have them."""
    while time.monotonic() < deadline:
        found: list[ContainerUsage] = []
        for nm in nms:
            running = {c.id for c in nm.containers() if c.state == "RUNNING"}
            found += [u for u in nm.container_usage() if u.container_id in running and u.pmem_mb is not None]
        if {u.container_id.endswith("_000001") for u in found} == {True, False}:
            return found
        time.sleep(1)
    return []
