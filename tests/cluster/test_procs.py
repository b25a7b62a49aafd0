"""Finding and stopping processes under a cluster dir (with `sleep`, no JVMs)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from yarnctl.cluster import procs
from yarnctl.errors import ClusterError


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


@pytest.mark.parametrize("crash", [True, False], ids=["kill", "terminate"])
def test_a_process_that_outlives_its_signals_is_named_not_waited_past(
        crash: bool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Signals that never arrive stand in for a process SIGKILL cannot end (uninterruptible I/O): a restart must not go on."""
    monkeypatch.setattr(procs, "_signal", lambda pid, sig, groups: None)
    p = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        _started(p)
        with pytest.raises(ClusterError, match=rf"still running 0.3 s after SIGKILL: pid {p.pid} \(state S\)"):
            procs.stop([p.pid], crash=crash, wait_s=0.3)
        assert procs.alive(p.pid) and "SIGKILL" not in caplog.text  # raised, not said twice
        if not crash:  # `down` goes on past it, and says so
            assert procs.terminate([p.pid], grace_s=0.1, kill_wait_s=0.2) == [p.pid]
            assert f"still running 0.2 s after SIGKILL: pid {p.pid} (state S)" in caplog.text
    finally:
        p.kill()
        p.wait()


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


def _fake_jdk(tmp_path: Path, body: str) -> str:
    """A JAVA_HOME whose bin/jstack is the shell `body` (a stand-in: what matters is how the output is read)."""
    jstack = tmp_path / "jdk" / "bin" / "jstack"
    jstack.parent.mkdir(parents=True)
    jstack.write_text(f"#!/bin/sh\n{body}\n")
    jstack.chmod(0o755)
    return str(tmp_path / "jdk")


def test_has_thread_reads_thread_names_and_says_when_there_is_no_dump(tmp_path: Path) -> None:
    home = _fake_jdk(tmp_path, """printf '"Node Status Updater" #82 prio=5\\n'""")
    assert procs.has_thread(123, home, "Node Status Updater", within_s=0)
    assert not procs.has_thread(123, home, "Node Status", within_s=0)  # a whole name, quoted as jstack prints it
    broken = _fake_jdk(tmp_path / "b", "echo 'Unable to open socket file' >&2; exit 1")
    with pytest.raises(ClusterError, match="no thread dump of pid 123: Unable to open socket file"):
        procs.has_thread(123, broken, "Node Status Updater", within_s=0)
