"""Usage feedback [FEEDBACK] on real YARN: maps that ask for far more than they use.

The same SleepJob (16 maps of 1024 MB / 1 vcore that sleep 30 s, using a few percent of either)
runs twice on the session cluster (2 NodeManagers of 4096 MB / 4 vcores): behind `yarnctl serve
--policy fifo`, then behind `--policy feedback` with its control loop reading the NodeManagers'
container usage (JMX) every second. Under fifo at most 8 containers fit (4 vcores per node);
under feedback the node capacity the RM sees grows from the observed usage (the shim applies each
NodeResize) and more containers run at once. Both jobs must succeed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from live import Live

pytestmark = [pytest.mark.integration, pytest.mark.long]  # make test-long

JOB = ["-Dmapreduce.map.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx200m", "-m", "16", "-r", "1",
       "-mt", "30000", "-rt", "500"]


@pytest.fixture
def serve_policy(cluster: Live, tmp_path: Path) -> Iterator[object]:
    """Put `yarnctl serve --policy P ARGS` behind the shim; the fifo test server comes back after."""
    def start(policy: str, *extra: str) -> Path:
        log = tmp_path / f"{policy}.log"
        cluster.stop_serve()
        cluster.start_yarnctl_serve(["--no-status-file", "--no-state-file", *extra], log, policy=policy)
        cluster.wait_delegating()
        return log

    try:
        yield start
    finally:
        cluster.stop_serve()
        cluster.start_serve("fifo")


def _run_and_watch(cluster: Live) -> tuple[int, int, int]:
    """Run JOB; return (its exit code, most containers allocated at once, largest node memory the RM saw)."""
    most, biggest, stop = [0], [0], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            most[0] = max(most[0], cluster.rm.metrics().containers_allocated)
            biggest[0] = max([biggest[0], *(n.capacity.memory_mb for n in cluster.rm.nodes())])
            time.sleep(0.5)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    proc = cluster.start(JOB, "sleep")
    out, _ = proc.communicate(timeout=600)
    stop.set()
    t.join(timeout=10)
    assert proc.returncode == 0, out[-3000:]
    return proc.returncode, most[0], biggest[0]


def test_feedback_grows_node_capacity_from_usage_and_runs_more_containers_than_fifo(
        cluster: Live, serve_policy: object) -> None:
    serve_policy("fifo")  # type: ignore[operator]
    _, fifo_most, fifo_biggest = _run_and_watch(cluster)
    log = serve_policy("feedback", "--rm", cluster.info.rm_url, "--tune-interval", "1")  # type: ignore[operator]
    _, fb_most, fb_biggest = _run_and_watch(cluster)
    print(f"\nfifo: {fifo_most} containers at most, nodes of {fifo_biggest} MB; "
          f"feedback: {fb_most} containers at most, nodes up to {fb_biggest} MB")
    assert fifo_most <= 8 and fifo_biggest == 4096  # 2 nodes x 4 vcores; capacity as configured
    assert fb_biggest > 4096, "the RM never saw a node grow"
    assert fb_biggest <= 2 * 4096 + 128  # max_overcommit 2.0, plus the one-minimum-allocation (128 MB) sliver
    assert fb_most > fifo_most, (fb_most, fifo_most)
    assert "control loop" in log.read_text()
