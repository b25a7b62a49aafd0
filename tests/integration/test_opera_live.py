"""OPERA [OPERA] on real YARN: opportunistic containers from idle memory, killed on a spike.

On the session cluster (2 NodeManagers of 4096 MB / 4 vcores) behind `yarnctl serve --policy opera`
with its control loop reading the NodeManagers' container usage every second and relief NEUTRAL:
a first SleepJob of 3 s maps teaches the classifier that this job's maps are short; a second one
(16 maps of 1024 MB that sleep 45 s, using a fraction of it) then gets opportunistic containers
(the node is rescaled past its configured size, so more than the 8 containers fifo fits run at
once); a distributed-shell container started first that, once more than 8 containers run (the test
then creates the file it waits for), suddenly holds 3 GB (the NodeManagers do not check physical
memory) pushes a node into contention and the monitor kills opportunistic containers.
MapReduce re-runs the killed maps and both jobs succeed.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from live import Live, wait_until

from yarnctl.errors import YarnctlError

pytestmark = pytest.mark.integration

SHORT = ["-m", "6", "-r", "1", "-mt", "3000", "-rt", "500"]
LONG = ["-Dmapreduce.map.memory.mb=1024", "-Dmapreduce.map.java.opts=-Xmx200m", "-m", "16", "-r", "1",
        "-mt", "45000", "-rt", "500"]


def spike_shell(go: Path) -> list[str]:
    """A container placed first, as a normal one, while the cluster has room; once `go` exists (the long job's maps
    running opportunistically: a fixed 25 s can come before them when their AM starts slowly) it suddenly holds 3 GB for 40 s."""
    return ["-shell_command", f"until [ -e {shlex.quote(str(go))} ]; do sleep 1; done; "
            "python3 -c 'import time; b = bytearray(3072 << 20); time.sleep(40)'",
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


def test_opera_lends_idle_room_and_kills_opportunistic_containers_on_a_spike(cluster: Live, opera: Path,
                                                                            tmp_path: Path) -> None:
    _, taught = cluster.run(SHORT, "sleep")
    assert taught.final_status == "SUCCEEDED"
    time.sleep(3)  # a few ticks: the classifier learns the finished maps
    before = cluster.shim()
    most, stop, go = [0], threading.Event(), tmp_path / "go"
    t_go = time.monotonic() + 180  # the spike starts anyway then: the assertions below say what did not happen

    def watch() -> None:
        try:
            with closing(cluster.lc.rm()) as rm:  # its own session: the test thread uses cluster.rm meanwhile
                while not stop.is_set():
                    try:
                        most[0] = max(most[0], rm.metrics().containers_allocated)
                    except YarnctlError:
                        pass  # a slow answer on a starved machine: the next poll
                    if not go.exists() and (most[0] > 8 or time.monotonic() > t_go):
                        time.sleep(3)  # a few more opportunistic maps start their JVMs first
                        go.touch()
                    time.sleep(0.5)
        finally:
            go.touch()  # the spike never waits on a watcher that is gone

    threading.Thread(target=watch, daemon=True).start()
    spike = cluster.start(spike_shell(go), "dshell")
    try:
        # the spike's AM and container take their room before the long job fills the nodes (nothing else runs:
        # the short job is over); a client and AM start in 5-30 s on a loaded machine
        wait_until("the spike's AM and container", lambda: _allocated(cluster) >= 2, 180)
        job = cluster.start(LONG, "sleep")
        out, _ = job.communicate(timeout=600)
        go.touch()  # the job is over: the spike waits no longer
        spike_out, _ = spike.communicate(timeout=300)
    finally:
        stop.set()
        go.touch()
        if spike.poll() is None:
            spike.kill()
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


def _allocated(cluster: Live) -> int:
    """The containers the RM has allocated now (0 when it answers slowly: the next poll)."""
    try:
        return cluster.rm.metrics().containers_allocated
    except YarnctlError:
        return 0
