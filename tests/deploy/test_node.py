"""The Docker image's entrypoint (python -m yarnctl.cluster.node): per-host confs, health checks, exec chain.

The exec test runs the real entrypoint and the real docker/bin/yarnctl-daemon with a stand-in `java`
(a script printing its command line), because starting Hadoop is what tests/integration does; the
stand-in shows what the image would run.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fixturerm import FixtureRM

from yarnctl.cluster import node
from yarnctl.cluster.conf import NATIVE_SCHEDULERS, SHIM_SCHEDULER
from yarnctl.cluster.ports import free_ports

ROOT = Path(__file__).resolve().parents[2]


def _props(path: Path) -> dict[str, str]:
    return {p.findtext("name", ""): p.findtext("value", "") for p in ET.parse(path).getroot().iter("property")}


def _env(tmp: Path, **kw: str) -> dict[str, str]:
    cp = tmp / "classpath.txt"
    cp.write_text("/opt/hadoop/lib/a.jar:/opt/hadoop/lib/b.jar")
    return {"HADOOP_CONF_DIR": str(tmp / "conf"), "YARNCTL_CLASSPATH_FILE": str(cp), "YARNCTL_DATA_DIR": "/data",
            "YARNCTL_NM_DIR": str(tmp / "nm"), "YARNCTL_TOKEN_FILE": str(tmp / "secrets" / "bridge.token"), **kw}


def test_rm_conf_points_every_address_at_the_rm_host_and_the_shim_at_loopback(tmp_path: Path) -> None:
    out = node.render_role("resourcemanager", _env(tmp_path))
    y = _props(out / "yarn-site.xml")
    assert y["yarn.resourcemanager.scheduler.class"] == SHIM_SCHEDULER
    assert y["yarn.resourcemanager.address"] == "resourcemanager:8032"
    assert y["yarn.resourcemanager.webapp.address"] == "resourcemanager:8088"
    assert y["yarn.resourcemanager.resource-tracker.address"] == "resourcemanager:8031"
    assert (y["yarnctl.shim.address"], y["yarnctl.shim.port"]) == ("127.0.0.1", "25334")
    assert y["yarnctl.shim.token-file"] == str(tmp_path / "secrets" / "bridge.token")
    assert y["yarn.application.classpath"] == "$HADOOP_CONF_DIR,/opt/hadoop/lib/a.jar,/opt/hadoop/lib/b.jar"
    m = _props(out / "mapred-site.xml")
    assert m["mapreduce.jobhistory.address"] == "historyserver:10020"
    assert m["mapreduce.jobhistory.done-dir"] == "/data/history/done"
    assert (out / "fair-scheduler.xml").is_file()


def test_nm_conf_names_its_own_host(tmp_path: Path) -> None:
    out = node.render_role("nodemanager", _env(tmp_path, YARNCTL_NM_HOST="nodemanager-2", YARNCTL_NM_MEMORY_MB="2048"))
    y = _props(out / "yarn-site.xml")
    assert y["yarn.nodemanager.hostname"] == "nodemanager-2"
    assert y["yarn.nodemanager.address"] == "nodemanager-2:45454"
    assert y["yarn.nodemanager.webapp.address"] == "nodemanager-2:8042"
    assert y["yarn.nodemanager.local-dirs"] == f"{tmp_path}/nm/local"
    assert y["yarn.nodemanager.resource.memory-mb"] == "2048"
    assert y["yarn.resourcemanager.resource-tracker.address"] == "resourcemanager:8031"
    assert not any(k.startswith("yarnctl.shim.") for k in y)
    assert _props(out / "mapred-site.xml")["mapreduce.shuffle.port"] == "13562"
    assert (tmp_path / "nm" / "local").is_dir()


@pytest.mark.parametrize("sched", sorted(NATIVE_SCHEDULERS))
def test_native_schedulers(tmp_path: Path, sched: str) -> None:
    y = _props(node.render_role("resourcemanager", _env(tmp_path, YARNCTL_SCHEDULER=sched)) / "yarn-site.xml")
    assert y["yarn.resourcemanager.scheduler.class"] == NATIVE_SCHEDULERS[sched]
    assert not any(k.startswith("yarnctl.shim.") for k in y)


@pytest.mark.parametrize("env,message", [
    ({"YARNCTL_SCHEDULER": "drf"}, "YARNCTL_SCHEDULER='drf': valid are shim, fifo, capacity, fair"),
    ({"YARNCTL_RM_WEBAPP_PORT": "http"}, "YARNCTL_RM_WEBAPP_PORT='http': expected an integer"),
    ({"YARNCTL_CLASSPATH_FILE": "/nonexistent/cp.txt"}, "/nonexistent/cp.txt: cannot read the Hadoop classpath"),
], ids=["scheduler", "port", "classpath"])
def test_bad_settings_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], env: dict[str, str],
                                   message: str) -> None:
    assert node.main(["conf", "resourcemanager"], _env(tmp_path, **env)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: " + message) and err.count("\n") == 1, err


def test_serve_args_keep_py4j_on_loopback() -> None:
    args = node.serve_args({"YARNCTL_POLICY": "drf"}, ["--param", "drf.assign_multiple=true"])
    opt = dict(zip(args[::2], args[1::2]))
    assert opt["--policy"] == "drf" and opt["--address"] == "127.0.0.1" and opt["--port"] == "25334"
    assert opt["--rm"] == "http://resourcemanager:8088"
    assert opt["--metrics-address"] == "0.0.0.0" and "--allow-remote" in args
    assert opt["--state-file"] == "/var/lib/yarnctl/serve/state/drf.json"
    assert args[-2:] == ["--param", "drf.assign_multiple=true"]
    local = node.serve_args({"YARNCTL_METRICS_ADDRESS": "127.0.0.1"})
    assert "--allow-remote" not in local
    assert "--metrics-port" not in node.serve_args({"YARNCTL_METRICS_PORT": ""})


def test_health_checks(capsys: pytest.CaptureFixture[str]) -> None:
    rm = FixtureRM()  # recorded answers of a real 2.7.7 RM
    host, port = rm.url.split("//")[1].split(":")
    try:
        env = {"YARNCTL_RM_HOST": host, "YARNCTL_RM_WEBAPP_PORT": port}
        assert node.main(["health", "resourcemanager"], env) == 0
        assert capsys.readouterr().out == f"resourcemanager {rm.url} STARTED\n"
    finally:
        rm.stop()
    assert node.main(["health", "resourcemanager"], env) == 1
    assert capsys.readouterr().err.startswith("unhealthy: ")
    free = free_ports(1)[0]
    assert node.main(["health", "serve"], {"YARNCTL_SHIM_PORT": str(free)}) == 1
    assert f"nothing listens on 127.0.0.1:{free}" in capsys.readouterr().err


def _fake_java(tmp: Path) -> Path:
    home = tmp / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    java.chmod(0o755)
    return home


def _tree_with_a_shim_jar(tmp: Path) -> Path:
    """A yarnctl tree whose shim jar exists without a Maven build, so this test runs in the fast tier."""
    home = tmp / "home"
    (home / "java-bridge" / "target").mkdir(parents=True)
    (home / "java-bridge" / "target" / "yarnctl-shim-0.1.0.jar").write_bytes(b"")
    for part in ("docker", "hadoop-conf"):
        (home / part).symlink_to(ROOT / part)
    return home


def test_entrypoint_renders_then_execs_the_daemon_script(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("YARNCTL_", "HADOOP_"))},
           **_env(tmp_path), "JAVA_HOME": str(_fake_java(tmp_path)), "YARNCTL_LOG_DIR": str(tmp_path / "logs"),
           "YARNCTL_HOME": str(_tree_with_a_shim_jar(tmp_path))}
    r = subprocess.run([sys.executable, "-m", "yarnctl.cluster.node", "resourcemanager"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    argv = r.stdout.splitlines()
    assert argv[-1] == "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
    classpath = argv[argv.index("-classpath") + 1].split(":")
    assert classpath[0] == str(tmp_path / "conf")
    assert classpath[-1] == str(tmp_path / "home" / "java-bridge" / "target" / "yarnctl-shim-0.1.0.jar")
    assert "-Dhadoop.root.logger=INFO,console" in argv
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in argv
    token = tmp_path / "secrets" / "bridge.token"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600  # created before the RM reads it
    assert stat.S_IMODE(token.parent.stat().st_mode) == 0o700


def test_entrypoint_serve_execs_yarnctl_serve_through_the_script(tmp_path: Path) -> None:
    # `serve --help` through the whole chain: node -> yarnctl-daemon serve -> python -m yarnctl.cli.main serve
    r = subprocess.run([sys.executable, "-m", "yarnctl.cluster.node", "serve", "--help"],
                       capture_output=True, text=True, timeout=60, env={**os.environ, **_env(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: yarnctl serve")
