"""Helpers about the cluster's processes: their JDK, their logs, how to recognise them, what they printed."""

from __future__ import annotations

import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

from yarnctl.cluster.info import DaemonInfo
from yarnctl.errors import ClusterError

_APP_ID = re.compile(r"\bapplication_\d+_\d+\b")


def app_ids(text: str) -> list[str]:
    """Application ids mentioned in client output, in order of first appearance."""
    return list(dict.fromkeys(_APP_ID.findall(text)))


def find_java_home() -> str:
    """$JAVA_HOME, else the JDK of `java` on PATH."""
    env = os.environ.get("JAVA_HOME")
    if env and Path(env, "bin", "java").is_file():
        return env
    java = shutil.which("java")
    if not java:
        raise ClusterError("no java on PATH and JAVA_HOME unset: install a JDK (8, 11 or 17)")
    return str(Path(java).resolve().parent.parent)


def py4j_jar_if_needed(shim_jar: Path) -> Path | None:
    """The py4j jar of this Python environment when the shim jar does not bundle py4j, else None."""
    try:
        with zipfile.ZipFile(shim_jar) as z:
            if any(n.startswith("py4j/") for n in z.namelist()):
                return None
    except (OSError, zipfile.BadZipFile):
        return None
    for base in (Path(sys.prefix), Path(sys.base_prefix), Path.home() / ".local"):
        hits = sorted((base / "share" / "py4j").glob("py4j*.jar"))
        if hits:
            return hits[-1]
    return None


def marker(d: DaemonInfo, cluster_dir: Path) -> str:
    # what must appear in the process's command line for it to still be ours: daemons carry
    # -Dhadoop.log.dir=<dir>/logs, the policy server --decision-log <dir>/decisions.jsonl
    return str(cluster_dir)


def stray_patterns(cluster_dir: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # (cwd prefixes under the cluster dir, command-line markers) of processes `down` must not leave:
    # containers work in nm-<i>/local/...; daemons and container JVMs name their log dirs. Narrow on
    # purpose: a person's shell sitting in <dir>/logs or a `tail -f <dir>/logs/x` is left alone.
    d = str(cluster_dir.resolve())
    return (("nm-*",), (f"-Dhadoop.log.dir={d}/", f"-Dyarn.app.container.log.dir={d}/",
                        f"--decision-log {d}/", f"-Dyarnctl.cluster.dir={d} "))


def log_to_read(d: DaemonInfo) -> Path:
    try:
        if d.log.stat().st_size > 0 and not fatal_line(d.out):
            return d.log
    except OSError:
        pass
    return d.out


def fatal_line(path: Path) -> str:
    """The last ERROR/FATAL (else exception) line of a log, with the exception line right after it."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    for pattern in (r"\b(FATAL|ERROR)\b", r"(Exception|Error)\b[:]?", r"^error: "):
        for i in range(len(lines) - 1, -1, -1):
            if re.search(pattern, lines[i]):
                line = lines[i].strip()
                nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
                if re.match(r"^[\w.$]+(Exception|Error)\b", nxt):
                    line += " / " + nxt
                return line
    return ""


def reason(d: DaemonInfo) -> str:
    line = fatal_line(d.log) or fatal_line(d.out)
    if not line:
        return "no error logged"
    line = re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ", "", line)
    return line[:240]
