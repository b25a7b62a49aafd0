"""The local cluster's Hadoop home (`<cluster>/hadoop`) and docker/bin/hadoop's commands.

The dispatch tests use a stand-in `java` that prints its command line: what matters is the main
class and arguments each `hadoop` / `yarn` / `hdfs` command becomes; real runs of the same scripts
are in tests/integration/test_hibench_live.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from yarnctl.cluster.classpath import repo_root
from yarnctl.cluster.home import write_hadoop_home

BIN = repo_root() / "docker" / "bin"
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("YARNCTL_", "HADOOP_"))}


@pytest.fixture(params=["plain", "with space"])
def home(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hadoop home for a cluster in a dir (one with a space and a quote in its name) whose `java` prints its arguments."""
    tmp_path = tmp_path_factory.mktemp("c") / ("cluster" if request.param == "plain" else "my cluster's dir")
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    java.chmod(0o755)
    (tmp_path / "conf").mkdir(parents=True)
    (tmp_path / "classpath.txt").write_text("/j/hadoop-common.jar:/j/hadoop-yarn-client.jar\n")
    jars = {"examples": tmp_path / "m2" / "hadoop-mapreduce-examples-2.7.7.jar",
            "jobclient-tests": tmp_path / "m2" / "hadoop-mapreduce-client-jobclient-2.7.7-tests.jar"}
    for jar in jars.values():
        jar.parent.mkdir(exist_ok=True)
        jar.write_bytes(b"PK")
    return write_hadoop_home(tmp_path / "hadoop", cluster_dir=tmp_path, conf_dir=tmp_path / "conf",
                             classpath_file=tmp_path / "classpath.txt", java_home=str(tmp_path / "jdk"), jars=jars,
                             bin_dir=BIN)


def _run(home: Path, tool: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(home / "bin" / tool), *argv], env=CLEAN, capture_output=True, text=True, timeout=60)


def _main_and_args(r: subprocess.CompletedProcess[str]) -> list[str]:
    assert r.returncode == 0, r.stderr
    argv = r.stdout.splitlines()
    return argv[argv.index("-classpath") + 2:]


def test_the_home_has_the_layout_tools_probe_for(home: Path) -> None:
    tmp_path = home.parent
    # what HiBench's load_config.py globs for, and `etc/hadoop` as the conf dir
    assert (home / "etc" / "hadoop").resolve() == (tmp_path / "conf").resolve()
    assert (home / "share/hadoop/mapreduce/hadoop-mapreduce-examples-2.7.7.jar").read_bytes() == b"PK"
    assert (home / "share/hadoop/mapreduce/hadoop-mapreduce-client-jobclient-2.7.7-tests.jar").is_file()
    assert not (home / "share/hadoop/tools/lib").exists()  # no streaming jar given: no dangling link
    assert all(os.access(home / "bin" / t, os.X_OK) for t in ("hadoop", "yarn", "hdfs"))


@pytest.mark.parametrize(("tool", "argv", "want"), [
    ("hadoop", ["jar", "ex.jar", "pi", "2", "10"], ["org.apache.hadoop.util.RunJar", "ex.jar", "pi", "2", "10"]),
    ("hadoop", ["fs", "-du", "-s", "/x"], ["org.apache.hadoop.fs.FsShell", "-du", "-s", "/x"]),
    ("hadoop", ["version"], ["org.apache.hadoop.util.VersionInfo"]),
    ("hadoop", ["org.example.Tool", "a"], ["org.example.Tool", "a"]),
    ("hdfs", ["dfs", "-ls", "/"], ["org.apache.hadoop.fs.FsShell", "-ls", "/"]),
    ("hdfs", ["dfsadmin", "-report"], ["org.apache.hadoop.hdfs.tools.DFSAdmin", "-report"]),
    # yarn passes application on as the first argument, as Hadoop's yarn script does
    ("yarn", ["application", "-list"], ["org.apache.hadoop.yarn.client.cli.ApplicationCLI", "application", "-list"]),
    ("yarn", ["node", "-list"], ["org.apache.hadoop.yarn.client.cli.NodeCLI", "-list"]),
    ("yarn", ["rmadmin", "-refreshQueues"], ["org.apache.hadoop.yarn.client.cli.RMAdminCLI", "-refreshQueues"]),
], ids=["jar", "fs", "version", "class", "hdfs-dfs", "dfsadmin", "application", "node", "rmadmin"])
def test_each_command_runs_its_main_class(home: Path, tool: str, argv: list[str], want: list[str]) -> None:
    assert _main_and_args(_run(home, tool, *argv)) == want


def test_the_scripts_carry_the_clusters_conf_jars_and_marker(home: Path) -> None:
    tmp_path = home.parent
    r = _run(home, "hadoop", "version")
    argv = r.stdout.splitlines()
    assert argv[0].startswith("-Dproc_client")
    assert argv[argv.index("-classpath") + 1] == f"{tmp_path}/conf:/j/hadoop-common.jar:/j/hadoop-yarn-client.jar"
    assert f"-Dyarnctl.cluster.dir={tmp_path}" in argv  # `cluster down` stops a client left running
    assert "-Dhadoop.root.logger=INFO,console" in argv


def test_config_sets_the_conf_dir_and_classpath_prints_it(home: Path) -> None:
    tmp_path = home.parent
    other = tmp_path / "other-conf"
    other.mkdir()
    argv = _run(home, "hadoop", "--config", str(other), "fs", "-ls").stdout.splitlines()
    assert argv[argv.index("-classpath") + 1].startswith(f"{other}:")
    r = _run(home, "yarn", "classpath")
    assert r.returncode == 0 and r.stdout.strip() == f"{tmp_path}/conf:/j/hadoop-common.jar:/j/hadoop-yarn-client.jar"


@pytest.mark.parametrize(("tool", "argv"), [("hadoop", ["bogus"]), ("hdfs", ["node"]), ("yarn", []),
                                            ("hadoop", ["--config"])], ids=["unknown", "wrong-tool", "none", "config-no-dir"])
def test_a_wrong_command_is_one_line_and_exit_2(home: Path, tool: str, argv: list[str]) -> None:
    r = _run(home, tool, *argv)
    assert r.returncode == 2 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert f"usage: {tool} [--config DIR] COMMAND" in line
    assert ("unknown command" in line) == bool(argv and argv[0] != "--config")


def test_writing_again_refreshes_links_and_scripts(home: Path) -> None:
    tmp_path = home.parent
    newer = tmp_path / "conf2"
    newer.mkdir()
    write_hadoop_home(home, cluster_dir=tmp_path, conf_dir=newer, classpath_file=tmp_path / "classpath.txt",
                      java_home=str(tmp_path / "jdk"), jars={}, bin_dir=BIN)
    assert (home / "etc" / "hadoop").resolve() == newer.resolve()
    assert _main_and_args(_run(home, "hadoop", "version")) == ["org.apache.hadoop.util.VersionInfo"]
    assert newer.name in (home / "bin" / "hadoop").read_text()
