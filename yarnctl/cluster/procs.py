"""Start daemons in their own sessions, stop process groups, and find stray container processes."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from yarnctl.errors import ClusterError

log = logging.getLogger(__name__)
# a user's CLASSPATH or JAVA_TOOL_OPTIONS would leak into every JVM started (and the latter prints a
# line on each JVM's stderr); a user's HADOOP_CONF_DIR would point a JVM at another cluster
_NOT_FOR_HADOOP = ("CLASSPATH", "HADOOP_CONF_DIR", "JAVA_TOOL_OPTIONS")


def java_env(**extra: str) -> dict[str, str]:
    """This process's environment for a Hadoop JVM: without CLASSPATH, HADOOP_CONF_DIR and JAVA_TOOL_OPTIONS, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_FOR_HADOOP}
    env.update(extra)
    return env


def spawn(cmd: Sequence[str], env: Mapping[str, str], out_file: Path, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start `cmd` detached in a new session (so it outlives the CLI), stdout+stderr appended to `out_file`."""
    out_file.parent.mkdir(parents=True, exist_ok=True)
    with open(out_file, "ab") as out:
        return subprocess.Popen(list(cmd), env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=cwd)


def alive(pid: int | None) -> bool:
    """True when `pid` exists and is not a zombie."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def cmdline(pid: int) -> str:
    """The process's command line, NULs as spaces; "" when unreadable."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def owned(pid: int | None, marker: str) -> bool:
    """True when `pid` is alive and its command line contains `marker` (guards against recycled pids)."""
    return bool(pid) and alive(pid) and marker in cmdline(pid)  # type: ignore[arg-type]


def processes_under(root: Path, cwd_prefixes: Sequence[str] = ("",), cmd_markers: Sequence[str] = (),
                    exclude: Iterable[int] = ()) -> list[int]:
    """Pids working under `root`/<prefix> (any prefix) or whose command line has any of `cmd_markers`.

    Used to find what NodeManagers launched: containers run in <nm dir>/local/usercache/... and
    carry their log dir on the command line, in their own sessions (setsid), so they survive a
    killed NodeManager. This process and its ancestors are never returned.
    """
    root_s = str(root.resolve())
    dirs = [f"{root_s}/{p}".rstrip("/") for p in cwd_prefixes]
    skip = set(exclude) | _ancestors(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in skip or not alive(pid):
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            cwd = ""
        cmd = cmdline(pid)
        if any(cwd == d or cwd.startswith(d + "/") or (d.endswith("*") and cwd.startswith(d[:-1])) for d in dirs) \
                or any(m in cmd for m in cmd_markers):
            found.append(pid)
    return sorted(found)


def terminate(pids: Sequence[int], *, grace_s: float = 10.0, groups: bool = True,
              others: Sequence[int] = (), kill_wait_s: float = 5.0, warn: bool = True) -> list[int]:
    """SIGTERM each pid (its process group when it leads one), wait up to `grace_s`, then SIGKILL.

    `others` are signalled at the same time, one by one (never as groups). Returns the pids that
    needed SIGKILL; one still running `kill_wait_s` after it is logged.
    """
    targets = [p for p in pids if alive(p)]
    singles = [p for p in others if alive(p) and p not in targets]
    for pid in targets:
        _signal(pid, signal.SIGTERM, groups)
    for pid in singles:
        _signal(pid, signal.SIGTERM, False)
    targets += singles
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(alive(p) for p in targets):
        time.sleep(0.1)
    killed = [p for p in targets if alive(p)]
    for pid in killed:
        _signal(pid, signal.SIGKILL, groups and pid not in singles)
    left = _survivors(killed, kill_wait_s)
    if left and warn:  # not raised: `down` goes on stopping the rest, and the caller that needs it gone checks
        log.warning("%s", _still_running(left, kill_wait_s))
    return killed


def kill(pids: Sequence[int], wait_s: float = 10.0) -> None:
    """SIGKILL each pid and its process group when it leads one (a crash, no shutdown hooks); wait for them to go."""
    for pid in pids:
        _signal(pid, signal.SIGKILL, True)
    left = _survivors(pids, wait_s)
    if left:  # it would keep its ports and files, and what starts in its place fail on them, saying something else
        raise ClusterError(_still_running(left, wait_s))


def stop(pids: Sequence[int], *, crash: bool, wait_s: float = 10.0) -> None:
    """`kill` (a crash) or `terminate` each pid, for a caller that starts another in its place; ClusterError if one still runs."""
    if crash:
        kill(pids, wait_s)
        return
    terminate(pids, grace_s=wait_s, kill_wait_s=min(wait_s, 5.0), warn=False)  # raised below instead
    left = [p for p in pids if alive(p)]
    if left:
        raise ClusterError(_still_running(left, min(wait_s, 5.0)))


def _survivors(pids: Sequence[int], wait_s: float) -> list[int]:
    """The SIGKILLed `pids` still running after waiting up to `wait_s` for them to go."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def _still_running(pids: Sequence[int], wait_s: float) -> str:
    return (f"still running {wait_s:g} s after SIGKILL: "
            + ", ".join(f"pid {p} ({_state(p)})" for p in pids))


def _state(pid: int) -> str:
    """The process state /proc shows (R, S, D: uninterruptible I/O, T: stopped, ...), or why it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return "state " + f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError) as e:
        return f"state unreadable: {e}"


def pause(pids: Sequence[int]) -> None:
    """SIGSTOP each pid (not its group): frozen, it can neither exit nor start anything."""
    for pid in pids:
        _signal(pid, signal.SIGSTOP, False)


def resume(pids: Sequence[int]) -> None:
    """SIGCONT each pid."""
    for pid in pids:
        _signal(pid, signal.SIGCONT, False)


def thread_dump(pid: int, java_home: str, timeout_s: float = 60.0) -> str:
    """A JVM's threads as `jstack` prints them, or one line saying why there are none."""
    jstack = Path(java_home) / "bin" / "jstack"
    try:
        r = subprocess.run([str(jstack), str(pid)], capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"no thread dump of pid {pid}: {e}"
    return r.stdout if r.returncode == 0 else f"no thread dump of pid {pid}: {r.stderr.strip() or r.returncode}"


def has_thread(pid: int, java_home: str, name: str, within_s: float = 10.0) -> bool:
    """Whether the JVM `pid` shows a thread called `name` (`jstack`) within `within_s`; ClusterError if no dump."""
    deadline = time.monotonic() + within_s
    while True:
        dump = thread_dump(pid, java_home)
        if f'"{name}"' in dump:
            return True
        if time.monotonic() >= deadline:
            if dump.startswith("no thread dump"):
                raise ClusterError(dump)
            return False
        time.sleep(1.0)


def _signal(pid: int, sig: signal.Signals, groups: bool) -> None:
    try:
        if groups and os.getpgid(pid) == pid and pid != os.getpgid(0):
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError as e:
        log.warning("cannot signal %d: %s", pid, e)


def _ancestors(pid: int) -> set[int]:
    out = {pid}
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        out.add(pid)
    return out
