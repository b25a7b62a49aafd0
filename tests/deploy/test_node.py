"""The Docker image's entrypoint (python -m yarnctl.cluster.node): per-host confs, health checks, exec chain.

The exec test runs the real entrypoint and the real docker/bin/yarnctl-daemon with a stand-in `java`
(a script printing its command line), because starting Hadoop is what tests/integration does; the
stand-in shows what the image would run.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fixturerm import FixtureRM

from yarnctl.cluster import node
from yarnctl.cluster.conf import NATIVE_SCHEDULERS, NM_MAIN, SHIM_SCHEDULER
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
    # on HDFS: staging where MapReduce reads it (mapred-site, not core-site), job history beside it
    assert _props(out / "core-site.xml")["fs.defaultFS"] == "hdfs://namenode:8020"
    assert m["yarn.app.mapreduce.am.staging-dir"] == "/yarnctl/staging"
    assert m["mapreduce.jobhistory.done-dir"] == "/yarnctl/history/done"
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


def test_datanode_registers_under_its_nodemanagers_host(tmp_path: Path) -> None:
    env = _env(tmp_path, YARNCTL_NM_HOST="nodemanager-3", YARNCTL_DFS_DIR=str(tmp_path / "dfs"))
    h = _props(node.render_role("datanode", env) / "hdfs-site.xml")
    assert h["dfs.datanode.hostname"] == "nodemanager-3"
    assert h["dfs.datanode.data.dir"] == f"{tmp_path}/dfs/data" and (tmp_path / "dfs" / "data").is_dir()
    assert h["dfs.namenode.name.dir"] == f"{tmp_path}/dfs/name"
    assert h["dfs.replication"] == "1"


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


def test_serve_health_is_a_liveness_check_without_a_py4j_login(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # a connection without the token would make serve log a refused connection on every check
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        srv.setblocking(False)
        env = {"YARNCTL_SHIM_PORT": str(srv.getsockname()[1]), "YARNCTL_SERVE_DIR": str(tmp_path)}
        assert node.main(["health", "serve"], env) == 0, capsys.readouterr().err
        with pytest.raises(BlockingIOError):
            srv.accept()  # nobody connected
        status = tmp_path / "serve-status.json"
        status.write_text("{}")
        assert node.main(["health", "serve"], env) == 0
        old = time.time() - node.STATUS_STALE_S - 5
        os.utime(status, (old, old))
        assert node.main(["health", "serve"], env) == 1
        assert "serve-status.json is" in capsys.readouterr().err


class _Jmx(http.server.BaseHTTPRequestHandler):
    beans: dict[str, dict[str, object]] = {}

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        # as Hadoop's JMXJsonServlet: the query URL-decoded, each bean with its object name
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("qry", [""])[0]
        bean = self.beans.get(query)
        body = json.dumps({"beans": [{"name": query, **bean}] if bean else []}).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("role,beans,ok,says", [
    ("namenode", {"Hadoop:service=NameNode,name=NameNodeStatus": {"State": "active"},
                  "Hadoop:service=NameNode,name=NameNodeInfo": {"LiveNodes": '{"nodemanager-1:50010":{}}',
                                                                "Safemode": ""}},
     True, "active, 1 live datanode(s)"),
    ("namenode", {"Hadoop:service=NameNode,name=NameNodeStatus": {"State": "standby"}}, False, "is standby"),
    ("datanode", {"Hadoop:service=DataNode,name=DataNodeInfo":
                  {"NamenodeAddresses": '{"namenode":"BP-1-172.18.0.2-1795"}'}}, True, "registered (BP-1-"),
    ("datanode", {"Hadoop:service=DataNode,name=DataNodeInfo": {"NamenodeAddresses": '{"namenode":null}'}},
     False, "not registered with a namenode yet"),
], ids=["nn-active", "nn-standby", "dn-registered", "dn-not-yet"])
def test_hdfs_health_checks(capsys: pytest.CaptureFixture[str], role: str, beans: dict[str, dict[str, object]],
                            ok: bool, says: str) -> None:
    handler = type("H", (_Jmx,), {"beans": beans})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = str(srv.server_address[1])
    try:
        env = {"YARNCTL_DEFAULT_FS": "hdfs://127.0.0.1:8020", "YARNCTL_NN_WEBAPP_PORT": port,
               "YARNCTL_NM_HOST": "127.0.0.1", "YARNCTL_DN_WEBAPP_PORT": port}
        assert node.main(["health", role], env) == (0 if ok else 1)
    finally:
        srv.shutdown()
        srv.server_close()
    out = capsys.readouterr()
    assert says in (out.out if ok else out.err)


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


def test_namenode_entrypoint_formats_hdfs_on_its_first_start_only(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("YARNCTL_", "HADOOP_"))},
           **_env(tmp_path), "JAVA_HOME": str(_fake_java(tmp_path)), "YARNCTL_LOG_DIR": str(tmp_path / "logs"),
           "YARNCTL_HOME": str(_tree_with_a_shim_jar(tmp_path)), "YARNCTL_DFS_DIR": str(tmp_path / "dfs")}

    def start() -> list[str]:
        r = subprocess.run([sys.executable, "-m", "yarnctl.cluster.node", "namenode"], env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout.splitlines()

    argv = start()
    main = "org.apache.hadoop.hdfs.server.namenode.NameNode"
    # the stand-in java prints its arguments: first the format run, then the exec'd NameNode
    assert argv.count(main) == 2 and argv[argv.index(main) + 1:argv.index(main) + 3] == ["-format", "-nonInteractive"]
    assert argv[-1] == main
    # Maven Central's hadoop-hdfs jar has no webapps/: the conf dir (first on the classpath) holds them
    assert (tmp_path / "conf" / "webapps" / "hdfs").is_dir() and (tmp_path / "conf" / "webapps" / "datanode").is_dir()
    (tmp_path / "dfs" / "name" / "current").mkdir(parents=True)
    (tmp_path / "dfs" / "name" / "current" / "VERSION").write_text("formatted\n")
    argv = start()
    assert "-format" not in argv and argv[-1] == main


def test_entrypoint_serve_execs_yarnctl_serve_through_the_script(tmp_path: Path) -> None:
    # `serve --help` through the whole chain: node -> yarnctl-daemon serve -> python -m yarnctl.cli.main serve
    r = subprocess.run([sys.executable, "-m", "yarnctl.cluster.node", "serve", "--help"],
                       capture_output=True, text=True, timeout=60, env={**os.environ, **_env(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: yarnctl serve")


def test_the_nodemanager_entrypoint_runs_the_resync_safe_nodemanager_from_the_shim_jar(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("YARNCTL_", "HADOOP_"))},
           **_env(tmp_path, YARNCTL_NM_HOST="nodemanager-1"), "JAVA_HOME": str(_fake_java(tmp_path)),
           "YARNCTL_LOG_DIR": str(tmp_path / "logs"), "YARNCTL_HOME": str(_tree_with_a_shim_jar(tmp_path))}
    r = subprocess.run([sys.executable, "-m", "yarnctl.cluster.node", "nodemanager"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    argv = r.stdout.splitlines()
    assert argv[-1] == NM_MAIN
    assert argv[argv.index("-classpath") + 1].split(":")[-1] == str(
        tmp_path / "home" / "java-bridge" / "target" / "yarnctl-shim-0.1.0.jar")
