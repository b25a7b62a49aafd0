"""OPERA [OPERA] on real YARN: opportunistic containers from idle memory, killed on a spike.

On the session cluster (2 NodeManagers of 4096 MB / 4 vcores) behind `yarnctl serve --policy opera`
with its control loop reading the NodeManagers' container usage every second and relief NEUTRAL:
a first SleepJob of 3 s maps teaches the classifier that this job's maps are short; a second one
(16 maps of 1024 MB that sleep 30 s, using a fraction of it) then gets opportunistic containers
(the node is rescaled past its configured size, so more than the 8 containers fifo fits run at
once); a distributed-shell container started first that 25 s later suddenly holds 3 GB (the NodeManagers do not check
physical memory) pushes a node into contention and the monitor kills opportunistic containers.
MapReduce re-runs the killed maps and both jobs succeed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from live import Live

pytestmark = pytest.mark.integration

SHORT = ["-m", "6", "-r", "1", "-mt", "3000", "-rt", "500"]
LONG = ["-Dmapreduce.map.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx200m", "-m", "16", "-r", "1",
        "-mt", "45000", "-rt", "500"]
# placed first, as a normal container, while the cluster has room; 25 s later (the long job's maps running
# opportunistically by then) it suddenly holds 3 GB for 40 s
SPIKE = ["-shell_command", "sleep 25; python3 -c 'import time; b = bytearray(3072 << 20); time.sleep(40)'",
         "-container_memory", "512", "-num_containers", "1"]


@pytest.fixture
def opera(cluster: Live, tmp_path: Path) -> Iterator[Path]:
    """`yarnctl serve --policy opera` (NEUTRAL relief) with a 1 s control loop; the fifo test server after."""
    log = tmp_path / "opera.log"
    cluster.stop_serve()
    cluster.start_yarnctl_serve(["--no-status-file", "--no-state-file", "--rm", cluster.info.rm_url,
                                 "--tune-interval", "1", "--param", "opera.relief=neutral",
                                 "--decision-log", str(tmp_path / "opera.jsonl")], log, policy="opera")
    cluster.wait_delegating()
    try:
        yield log
    finally:
        cluster.stop_serve()
        cluster.start_serve("fifo")


def test_opera_lends_idle_room_and_kills_opportunistic_containers_on_a_spike(cluster: Live, opera: Path) -> None:
    _, taught = cluster.run(SHORT, "sleep")
    assert taught.final_status == "SUCCEEDED"
    time.sleep(3)  # a few ticks: the classifier learns the finished maps
    before = cluster.shim()
    most, stop = [0], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            most[0] = max(most[0], cluster.rm.metrics().containers_allocated)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()
    spike = cluster.start(SPIKE, "dshell")
    time.sleep(5)  # the spike's AM and container take their room before the long job fills the nodes
    job = cluster.start(LONG, "sleep")
    out, _ = job.communicate(timeout=600)
    spike_out, _ = spike.communicate(timeout=300)
    grew = most[0]
    stop.set()
    after = cluster.shim()
    print(f"\nopera: {grew} containers at once at most, resized {after.resized - before.resized}"
          f" times, killed {after.killed - before.killed}")
    assert job.returncode == 0, out[-3000:]
    assert spike.returncode == 0, spike_out[-3000:]
    assert grew > 8, "no opportunistic container: the node was never offered more than its 8 fifo slots"
    assert after.resized > before.resized
    assert after.killed > before.killed, f"the spike killed nothing; serve log:\n{opera.read_text()[-3000:]}"
