"""Finding and stopping processes under a cluster dir (with `sleep`, no JVMs)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from yarnctl.cluster import procs


def _started(p: subprocess.Popen[bytes]) -> None:
    # right after exec, /proc/<pid>/cmdline can still read empty (seen under gVisor)
    deadline = time.monotonic() + 2
    while not procs.cmdline(p.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def test_finds_and_kills_a_process_working_under_the_dir(tmp_path: Path) -> None:
    work = tmp_path / "nm-0" / "local" / "container_1"
    work.mkdir(parents=True)
    p = subprocess.Popen(["sleep", "60"], cwd=work, start_new_session=True)
    other = subprocess.Popen(["sleep", "60"], cwd=tmp_path, start_new_session=True)  # not under nm-*
    try:
        _started(p)
        found = procs.processes_under(tmp_path, ("nm-*",))
        assert p.pid in found and other.pid not in found
        assert procs.terminate([p.pid], grace_s=2) == []
        p.wait(timeout=5)
        assert not procs.alive(p.pid)
    finally:
        for q in (p, other):
            q.kill()
            q.wait()


def test_command_line_marker(tmp_path: Path) -> None:
    marker = f"-Dhadoop.log.dir={tmp_path}/logs"
    # one process that never forks, the marker in its argv (a shell's child shows the same argv until it execs)
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker], start_new_session=True)
    try:
        _started(p)
        assert procs.processes_under(tmp_path, (), (marker,)) == [p.pid]
        assert procs.processes_under(tmp_path, (), ("-Dnothing",)) == []
        procs.terminate([p.pid], grace_s=2)
        p.wait(timeout=5)
    finally:
        p.kill()
        p.wait()


def test_owned_rejects_dead_and_foreign_pids() -> None:
    p = subprocess.Popen(["sleep", "60"])
    _started(p)
    try:
        assert procs.owned(p.pid, "sleep")
        assert not procs.owned(p.pid, "/some/cluster")
    finally:
        p.kill()
        p.wait()
    assert not procs.owned(p.pid, "sleep")
    assert not procs.owned(None, "x")
