"""docker/bin/yarnctl-daemon's serve and client roles (the JVM daemons run in tests/integration).

The client test uses a stand-in `java` that prints its command line: what matters is the command
the script builds, and a real client run is in tests/deploy/test_image_roles_live.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from yarnctl.cluster.classpath import repo_root

SCRIPT = repo_root() / "docker" / "bin" / "yarnctl-daemon"
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("YARNCTL_", "HADOOP_"))}


def _run(argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(SCRIPT), *argv], env={**CLEAN, **env}, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("argv", [["client"], ["resourcemanager", "extra"], ["nodemanager", "-x"]],
                         ids=["client-no-main", "daemon-extra-arg", "nm-extra-arg"])
def test_bad_arguments_get_the_usage(argv: list[str]) -> None:
    r = _run(argv, HADOOP_CONF_DIR=".")
    assert r.returncode == 2 and r.stderr.startswith("usage: yarnctl-daemon"), r.stderr


def test_serve_execs_yarnctl_serve_with_the_given_interpreter() -> None:
    r = _run(["serve", "--help"], YARNCTL_PYTHON=sys.executable)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: yarnctl serve")


def _echo_java(tmp_path: Path) -> None:
    """A stand-in JDK under tmp_path/jdk whose `java` prints its arguments, one per line; and tmp_path/conf."""
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    java.chmod(0o755)
    (tmp_path / "conf").mkdir()


def test_client_runs_the_main_class_with_its_arguments_logging_to_stderr(tmp_path: Path) -> None:
    _echo_java(tmp_path)
    r = _run(["client", "org.apache.hadoop.util.RunJar", "ex.jar", "pi", "2", "10"], HADOOP_CONF_DIR=str(tmp_path / "conf"),
             YARNCTL_CLASSPATH="/j/a.jar", JAVA_HOME=str(tmp_path / "jdk"), YARNCTL_LOG_DIR=str(tmp_path / "logs"))
    assert r.returncode == 0, r.stderr
    argv = r.stdout.splitlines()
    assert argv[-5:] == ["org.apache.hadoop.util.RunJar", "ex.jar", "pi", "2", "10"]
    assert "-Dhadoop.root.logger=INFO,console" in argv
    assert argv[argv.index("-classpath") + 1] == f"{tmp_path}/conf:/j/a.jar"
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in argv


@pytest.mark.parametrize("main_class", [None, "io.yarnctl.nm.ResyncSafeNodeManager"], ids=["stock", "mended"])
def test_the_nodemanagers_main_class_is_hadoops_unless_one_is_named(tmp_path: Path, main_class: str | None) -> None:
    _echo_java(tmp_path)
    jar = tmp_path / "shim.jar"
    jar.write_bytes(b"")
    extra = {} if main_class is None else {"YARNCTL_NODEMANAGER_CLASS": main_class, "YARNCTL_SHIM_JAR": str(jar)}
    r = _run(["nodemanager"], HADOOP_CONF_DIR=str(tmp_path / "conf"), YARNCTL_CLASSPATH="/j/a.jar",
             JAVA_HOME=str(tmp_path / "jdk"), YARNCTL_LOG_DIR=str(tmp_path / "logs"), **extra)
    assert r.returncode == 0, r.stderr
    argv = r.stdout.splitlines()
    assert argv[-1] == (main_class or "org.apache.hadoop.yarn.server.nodemanager.NodeManager")
    assert argv[argv.index("-classpath") + 1].endswith("/j/a.jar" if main_class is None else f":{jar}")
