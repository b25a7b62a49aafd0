"""The rm/ clients against a real local Hadoop 2.7.7 cluster (own tmp dir, always stopped)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from yarnctl.cluster import LocalCluster, app_ids
from yarnctl.rm import AppNotFound, HttpSettings, NodeManager, ResourceManager

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
    cluster.wait_app(app_id, timeout_s=60)

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
