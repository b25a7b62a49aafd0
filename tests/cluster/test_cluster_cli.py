"""`yarnctl cluster ...` errors and plumbing that need no JVM."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from fixturerm import FIXTURES, FixtureRM

from yarnctl.cli.main import main
from yarnctl.cluster import classpath as cp
from yarnctl.cluster.classpath import repo_root
from yarnctl.cluster.local import ClusterInfo, DaemonInfo, LocalCluster, app_ids
from yarnctl.errors import ClusterError

SCRIPT = repo_root() / "docker" / "bin" / "yarnctl-daemon"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,message", [
    (["cluster", "status"], "error: no cluster in {d}: start one with `yarnctl cluster up --dir {d}`"),
    (["cluster", "env"], "error: no cluster in {d}"),
    (["cluster", "run", "--", "pi", "2", "10"], "error: no cluster in {d}"),
    (["cluster", "run"], "error: give the program's arguments after --"),
    (["cluster", "up", "--nodes", "0", "--native", "fifo"], "error: --nodes must be at least 1, got 0"),
    (["cluster", "up", "--policy", "nosuch"], "error: unknown policy 'nosuch'; valid policies: "),
    (["cluster", "up", "--policy", ""], "error: --policy '': give a policy"),  # it started a fifo cluster
    (["cluster", "up", "--native", "fifo", "--nm-memory-mb", "512"], "error: a NodeManager needs at least 1024 MB"),
    (["cluster", "up", "--native", "fair", "--metrics-port", "9464"],
     "error: --metrics-port is the policy server's; --native fair runs none"),
    (["cluster", "up", "--native", "fifo", "--nodes", "255"],
     "error: --nodes 255: with HDFS each node needs a loopback address 127.0.1.N (at most 254)"),
    # each started the policy server, then the RM refused it or the wait gave up at once
    (["cluster", "up", "--deadline-ms", "70000"], "error: --deadline-ms must be in [1, 60000] (the shim's bounds)"),
    (["cluster", "up", "--ha", "--metrics-port", "65535"], "error: --metrics-port 65535: with --ha rm2's server"),
    (["cluster", "up", "--native", "fair", "--param", "fair.reservations=true"],
     "error: --param and --policy-config are the policy server's; --native fair runs none"),
    (["cluster", "up", "--policy", "dress", "--param", "fair.reservations=true"],
     "error: --param fair.*: `cluster up --policy dress` takes dress.KEY=VALUE"),
    (["cluster", "up", "--policy", "dress", "--param", "dress.nosuch=1"], "error: policy dress: unknown parameter 'nosuch'; valid: "),
    (["cluster", "up", "--policy", "dress", "--param", "dress.theta=lots"], "error: policy dress: theta: expected a number, got 'lots'"),
    (["cluster", "up", "--policy", "dress", "--param", "theta=1"], "error: --param 'theta=1': expected POLICY.KEY=VALUE"),
    (["cluster", "up", "--policy", "dress", "--policy-config", "/nonexistent/p.yaml"],
     "error: /nonexistent/p.yaml: cannot read"),
], ids=["status", "env", "run", "run-no-args", "up-no-nodes", "up-bad-policy", "up-empty-policy", "up-small-nm",
        "up-native-metrics",
        "up-too-many-hdfs-nodes", "up-long-deadline", "up-ha-last-port", "up-native-param", "up-other-policys-param",
        "up-unknown-param", "up-bad-param-value", "up-param-without-policy", "up-missing-policy-config"])
def test_errors_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str],
                                    message: str) -> None:
    code, out, err = _run(capsys, *argv[:2], "--dir", str(tmp_path), *argv[2:])
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(message.format(d=tmp_path)), err


@pytest.mark.parametrize("argv,message", [
    (["up", "--timeout", "-5"], "argument --timeout: expected a finite number of seconds > 0, got -5"),
    (["restart-rm", "--timeout", "nan"], "argument --timeout: expected a finite number of seconds > 0, got nan"),
    (["up", "--heartbeat-ms", "0"], "argument --heartbeat-ms: expected an integer >= 1, got 0"),
    (["up", "--deadline-ms", "soon"], "argument --deadline-ms: expected an integer, got 'soon'"),
    (["up", "--metrics-port", "99999"], "argument --metrics-port: expected a port in 0-65535, got 99999"),
], ids=["negative-timeout", "nan-timeout", "zero-heartbeat", "word-deadline", "big-port"])
def test_bad_numbers_stop_before_anything_starts(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                 argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["cluster", argv[0], "--dir", str(tmp_path), *argv[1:]])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err == f"error: {message} (see `yarnctl cluster {argv[0]} --help`)\n"
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("flag, hdfs", [((), True), (("--no-hdfs",), False)], ids=["default", "no-hdfs"])
def test_up_runs_hdfs_unless_told_not_to(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flag: tuple[str, ...],
                                         hdfs: bool) -> None:
    asked: dict[str, object] = {}

    def up(self: LocalCluster, **kw: object) -> None:
        asked.update(kw)
        raise ClusterError("stop here")  # only what the CLI asked for matters

    monkeypatch.setattr(LocalCluster, "up", up)
    assert main(["cluster", "up", "--dir", str(tmp_path), "--native", "fifo", *flag]) == 2
    assert asked["hdfs"] is hdfs


def _serve_args(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *argv: str) -> object:
    asked: dict[str, object] = {}

    def up(self: LocalCluster, **kw: object) -> None:
        asked.update(kw)
        raise ClusterError("stop here")  # only what the CLI asked for matters

    monkeypatch.setattr(LocalCluster, "up", up)
    assert main(["cluster", "up", "--dir", str(tmp_path), *argv]) == 2
    return asked["serve_args"]


def test_up_hands_the_policys_parameters_to_its_server_as_values(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """--policy-config and --param reach `yarnctl serve` as values (--param wins), after --metrics-port: a restart-serve
    or rm2's server gets what `up` was given even if the file changes or goes."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text("dress: {theta: 0.2, initial_reserve: 0.5}\n")
    assert _serve_args(monkeypatch, tmp_path, "--policy", "dress", "--metrics-port", "0", "--policy-config", "p.yaml",
                       "--param", "dress.initial_reserve=0.3", "--param", "dress.order=fifo") == (
        "--metrics-port", "0", "--param", "dress.theta=0.2", "--param", "dress.initial_reserve=0.3",
        "--param", "dress.order=fifo")
    assert _serve_args(monkeypatch, tmp_path, "--policy", "fifo") == ()


@pytest.mark.parametrize("value", [0.2, 1e-05, True, "fifo", "true", "0.5", "a=b", {"q": {"weight": 2.0}}, [1, 2], None],
                         ids=["float", "small-float", "bool", "word", "true-as-text", "number-as-text", "equals",
                              "mapping", "list", "null"])
def test_a_parameter_reaches_the_server_as_the_value_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          value: object) -> None:
    """Each value, written for --param, reads back through `policy_params` (serve's own reader) as itself."""
    import argparse

    import yaml

    from yarnctl.cli.cluster import _param_args
    from yarnctl.cli.params import policy_params

    def given(params: list[str], config: Path | None = None) -> argparse.Namespace:
        return argparse.Namespace(param=params, policy_config=config)

    monkeypatch.setattr("yarnctl.policies.make_policy", lambda name, params: None)  # any value: the round trip only
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"dress": {"x": value}}))
    args = _param_args(given([], path), "dress")
    assert args[0] == "--param" and policy_params(given(args[1::2]), ["dress"]) == {"dress": {"x": value}}


def test_down_without_cluster_is_a_no_op(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "cluster", "down", "--dir", str(tmp_path))
    assert code == 0 and out == f"nothing running in {tmp_path}\n"
    code, out, _ = _run(capsys, "cluster", "down", "--dir", str(tmp_path / "never-created"))
    assert code == 0


def _info(tmp_path: Path) -> ClusterInfo:
    d = DaemonInfo("resourcemanager", 999999, tmp_path / "rm.log", tmp_path / "rm.out", "http://127.0.0.1:1",
                   {"webapp": 1})
    nm = DaemonInfo("nodemanager-0", 999998, tmp_path / "nm.log", tmp_path / "nm.out", "http://127.0.0.1:2",
                    {"nm": 3}, tmp_path / "nm-0")
    return ClusterInfo(dir=tmp_path, rm_url="http://127.0.0.1:1", conf_dir=tmp_path / "conf",
                       classpath_file=tmp_path / "cp.txt", java_home="/jdk", scheduler_class="X", policy="fifo",
                       native=None, rm=d, nodes=(nm,), serve=None, history=None, token_file=tmp_path / "t",
                       decision_log=tmp_path / "decisions.jsonl", status_file=None, shim_jar=None,
                       jars={"examples": tmp_path / "ex.jar"}, nm_memory_mb=4096, nm_vcores=4, started_at=1.0)


def test_cluster_info_json_round_trip(tmp_path: Path) -> None:
    info = _info(tmp_path)
    doc = json.loads(json.dumps(info.to_json()))
    assert ClusterInfo.from_json(doc) == info
    assert info.pids == {"resourcemanager": 999999, "nodemanager-0": 999998}
    assert info.nm_urls == ["http://127.0.0.1:2"]
    # with HDFS: the NameNode and the DataNodes are recorded (and stopped by `down`) too
    nn = DaemonInfo("namenode", 999997, tmp_path / "nn.log", tmp_path / "nn.out", "http://127.0.0.1:4",
                    {"rpc": 5, "webapp": 4}, tmp_path / "dfs")
    dn = DaemonInfo("datanode-0", 999996, tmp_path / "dn.log", tmp_path / "dn.out", "http://127.0.1.1:6",
                    {"data": 7, "ipc": 8, "webapp": 6}, tmp_path / "nm-0")
    hdfs = dataclasses.replace(info, namenode=nn, datanodes=(dn,), default_fs="hdfs://127.0.0.1:5")
    assert ClusterInfo.from_json(json.loads(json.dumps(hdfs.to_json()))) == hdfs
    assert hdfs.pids == {"namenode": 999997, "datanode-0": 999996, **info.pids}


def test_status_of_a_dead_cluster_reports_dead_processes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(json.dumps(_info(tmp_path).to_json()))
    code, out, err = _run(capsys, "cluster", "status", "--dir", str(tmp_path))
    assert code == 1
    assert "resourcemanager  pid 999999   DEAD" in out
    assert "unreachable" in out
    assert "not running" in err
    code, out, _ = _run(capsys, "cluster", "down", "--dir", str(tmp_path))
    assert code == 0 and not (tmp_path / "cluster.json").exists()


def test_restarting_a_dead_rm_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(json.dumps(_info(tmp_path).to_json()))
    with pytest.raises(ClusterError, match=r"no resourcemanager of .* is running \(pid 999999\); nothing to restart"):
        LocalCluster(tmp_path).restart_rm()


def test_status_of_a_live_cluster_keeps_hadoops_key_names(capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    rm = FixtureRM()  # the recorded responses of a real RM (tests/rm/fixtures)
    try:
        info = dataclasses.replace(_info(tmp_path), rm_url=rm.url)
        (tmp_path / "cluster.json").write_text(json.dumps(info.to_json()))
        code, out, _ = _run(capsys, "cluster", "status", "--dir", str(tmp_path), "--json")
        text_code, text, _ = _run(capsys, "cluster", "status", "--dir", str(tmp_path))
    finally:
        rm.stop()
    assert code == 0 and text_code == 1  # the processes of _info() are not running
    st = json.loads(out)
    assert "rm_error" not in st
    assert (st["rm"]["state"], st["rm"]["haState"], st["rm"]["hadoopVersion"]) == ("STARTED", "ACTIVE", "2.7.7")
    assert st["apps"] == {"appsSubmitted": 1, "appsPending": 0, "appsRunning": 1, "appsCompleted": 0,
                          "appsFailed": 0, "appsKilled": 0}
    assert st["resources"] == {"allocatedMB": 1280, "availableMB": 6912, "totalMB": 8192, "allocatedVirtualCores": 3,
                               "availableVirtualCores": 5, "totalVirtualCores": 8, "containersAllocated": 3}
    assert st["nodes"][0] == {"id": "localhost:42265", "state": "RUNNING", "http": "localhost:57729", "containers": 2,
                              "used_mb": 768, "avail_mb": 3328, "used_vcores": 2, "avail_vcores": 2}
    assert st["running_apps"] == [{"id": "application_1795326552648_0001", "name": "QuasiMonteCarlo",
                                   "state": "RUNNING", "progress": 5.0}]
    bean = json.loads((FIXTURES / "rm_jmx_shim.json").read_text())["beans"][0]
    assert st["shim"] == {**{k: v for k, v in bean.items() if k not in ("name", "modelerType")},
                          "RejectedByReason": ""}  # recorded from a shim that did not count refusals by code yet
    # the text is `yarnctl status`'s screen under the process list
    assert "(shim, policy fifo), started 19" in text
    assert re.search(r"localhost:42265 +/default-rack +RUNNING +2 +0\.8/4\.0 GiB", text), text
    assert re.search(r"application_1795326552648_0001 +root +default +RUNNING +5%", text), text
    assert "Shim     heartbeats 11 by policy, 0 native" in text


def test_status_renders_the_policy_server_for_people(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rm = FixtureRM()
    status = tmp_path / "serve-status.json"
    status.write_text(json.dumps({
        "pid": 4242, "policy": "dress", "started": time.time() - 75, "uptime_s": 75.0, "decisions_per_s": 3.5,
        "tuning": {"delta": 0.25}, "calls": 1234, "errors": 0, "rejected": 2, "p99_us_le": 500,
        "control_loop": {"rm": rm.url, "interval_s": 5, "stale": False, "error": None, "age_s": 1.2,
                         "containers_measured": 3}}))
    try:
        info = dataclasses.replace(_info(tmp_path), rm_url=rm.url, policy="dress", status_file=status)
        (tmp_path / "cluster.json").write_text(json.dumps(info.to_json()))
        _, text, _ = _run(capsys, "cluster", "status", "--dir", str(tmp_path))
    finally:
        rm.stop()
    assert "Policy   dress serving · pid 4242 · up 1m15s · 3.5 decisions/s · calls 1,234" in text
    assert "Tuning   delta=0.25" in text
    assert "Control  fresh · polls " + rm.url + " every 5 s · last good 1.2 s ago · 3 containers measured" in text
    assert "{" not in text and "started: " not in text  # no JSON blobs, no raw epoch seconds


def test_env_and_client_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "cp.txt").write_text("/j/a.jar:/j/b.jar")
    info = _info(tmp_path)
    info = ClusterInfo.from_json({**info.to_json(), "jars": {"distributedshell": "/j/ds.jar"}})
    (tmp_path / "cluster.json").write_text(json.dumps(info.to_json()))
    code, out, _ = _run(capsys, "cluster", "env", "--dir", str(tmp_path))
    assert code == 0
    assert f"export HADOOP_CONF_DIR={tmp_path}/conf" in out
    assert f"export CLASSPATH={tmp_path}/conf:/j/a.jar:/j/b.jar" in out
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in out
    assert f'export PATH={tmp_path}/hadoop/bin:"$PATH"' in out
    c = LocalCluster(tmp_path)
    cmd = c.client_command(["pi", "2", "10"])
    assert cmd[0] == "/jdk/bin/java" and cmd[-3:] == ["pi", "2", "10"]
    assert cmd[-4] == "org.apache.hadoop.examples.ExampleDriver"
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in cmd
    ds = c.client_command(["-shell_command", "true"], "dshell")
    assert ds[ds.index("org.apache.hadoop.yarn.applications.distributedshell.Client") + 1:] == \
        ["-jar", "/j/ds.jar", "-shell_command", "true", "-master_memory", "256"]
    assert c.client_command(["-m", "1"], "sleep")[-3] == "org.apache.hadoop.mapreduce.SleepJob"


def test_a_scheduled_client_waits_in_at_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cp.txt").write_text("/j/a.jar")
    (tmp_path / "cluster.json").write_text(json.dumps(_info(tmp_path).to_json()))
    monkeypatch.setattr(cp, "ensure_shim_jar", lambda root=None: Path("/s/shim.jar"))  # no Maven in the fast tier
    cmd = LocalCluster(tmp_path).client_command(["-m", "1"], "sleep", at_ms=1_795_000_000_000)
    assert cmd[cmd.index("-classpath") + 1].endswith(":/s/shim.jar")
    assert cmd[-5:] == ["io.yarnctl.bench.AtTime", "1795000000000", "org.apache.hadoop.mapreduce.SleepJob", "-m", "1"]


def test_app_ids() -> None:
    text = ("INFO impl.YarnClientImpl: Submitted application application_1795321886428_0001\n"
            "url http://h/proxy/application_1795321886428_0001/ then application_1795321886428_0002")
    assert app_ids(text) == ["application_1795321886428_0001", "application_1795321886428_0002"]


@pytest.mark.parametrize("argv,env,message", [
    (["bogus"], {}, "usage: yarnctl-daemon"),
    ([], {}, "usage: yarnctl-daemon"),
    (["nodemanager"], {}, "HADOOP_CONF_DIR must name"),
    (["resourcemanager"], {"HADOOP_CONF_DIR": "."}, "set YARNCTL_CLASSPATH"),
], ids=["bad-daemon", "no-daemon", "no-conf", "no-classpath"])
def test_daemon_script_refuses_bad_input(argv: list[str], env: dict[str, str], message: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("YARNCTL_", "HADOOP_"))}
    r = subprocess.run(["sh", str(SCRIPT), *argv], env={**clean, **env}, capture_output=True, text=True, timeout=10)
    assert r.returncode == 2
    assert message in r.stderr


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
@pytest.mark.parametrize("script", [SCRIPT, SCRIPT.with_name("hadoop"), repo_root() / "yarnctl" / "bench" / "python2.sh",
                                    repo_root() / "docker" / "test.sh"], ids=lambda p: p.name)
def test_shell_scripts_are_shellcheck_clean(script: Path) -> None:
    r = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_status_finds_a_dir_cluster_without_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from yarnctl.cli import running
    from yarnctl.cluster import local

    d = tmp_path / "c"
    d.mkdir()
    # a stand-in "ResourceManager" process: alive, with the cluster dir on its command line as the real one has
    rm_proc = subprocess.Popen(["sh", "-c", "sleep 60", f"-Dhadoop.log.dir={d}/logs"])
    try:
        info = dataclasses.replace(_info(d), dir=d, rm=dataclasses.replace(_info(d).rm, pid=rm_proc.pid),
                                   rm_url="http://127.0.0.1:18088", status_file=d / "serve-status.json")
        (d / "cluster.json").write_text(json.dumps(info.to_json()))
        monkeypatch.delenv("YARNCTL_CLUSTER_DIR", raising=False)
        monkeypatch.setattr(local, "DEFAULT_DIR", tmp_path / "none")
        monkeypatch.setattr(local, "LAST_CLUSTER", tmp_path / "last-cluster")
        monkeypatch.chdir(tmp_path)
        assert local.find_running() is None  # not here, not recorded, not the default
        monkeypatch.chdir(d)  # next to it
        assert running.local_cluster() == (["http://127.0.0.1:18088"], d / "serve-status.json")
        monkeypatch.chdir(tmp_path)
        (tmp_path / "last-cluster").write_text(f"{d}\n")  # what `up --dir` records
        assert running.local_cluster() == (["http://127.0.0.1:18088"], d / "serve-status.json")
    finally:
        rm_proc.kill()
        rm_proc.wait()
    assert local.find_running() is None  # its RM is gone


def test_ha_cluster_info_round_trip_and_daemons(tmp_path: Path) -> None:
    """Under RM HA the record carries rm2, its policy server and ZooKeeper; status and down see them all."""
    base = _info(tmp_path)
    rm2 = DaemonInfo("resourcemanager-rm2", 999997, tmp_path / "rm2.log", tmp_path / "rm2.out", "http://127.0.0.1:9",
                     {"webapp": 9}, tmp_path / "rm2")
    zk = DaemonInfo("zookeeper", 999996, tmp_path / "zk.log", tmp_path / "zk.out", "", {"client": 7}, tmp_path / "zk")
    info = dataclasses.replace(base, rm2=rm2, zookeeper=zk, serve_args=("--metrics-port", "9464"))
    assert ClusterInfo.from_json(json.loads(json.dumps(info.to_json()))) == info
    assert info.rm_urls == ["http://127.0.0.1:1", "http://127.0.0.1:9"]
    assert [d.name for d in info.daemons] == ["zookeeper", "resourcemanager", "resourcemanager-rm2", "nodemanager-0"]
    assert base.rm_urls == ["http://127.0.0.1:1"]


def test_failover_and_restarts_refuse_what_the_cluster_lacks(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    info = dataclasses.replace(_info(tmp_path), policy=None, native="fifo")
    (tmp_path / "cluster.json").write_text(json.dumps(info.to_json()))
    for argv, message in ((["failover"], "runs one ResourceManager: start it with `up --ha`"),
                          (["restart-serve"], "runs a native scheduler: no policy server to restart"),
                          (["restart-nm", "3"], "no nodemanager-3: the cluster has 1 (0-0)")):
        code, out, err = _run(capsys, "cluster", argv[0], "--dir", str(tmp_path), *argv[1:])
        assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err


def test_rm2s_policy_server_gets_the_next_metrics_port() -> None:
    from yarnctl.cluster.start import _next_metrics_port, serve_files

    assert _next_metrics_port(["--metrics-port", "9464", "--x"]) == ["--metrics-port", "9465", "--x"]
    assert _next_metrics_port(["--x"]) == ["--x"]
    assert _next_metrics_port(["--metrics-port", "0"]) == ["--metrics-port", "0"]  # the OS picks for each
    d = Path("/c")
    assert serve_files(d, "rm2")["decisions"] == d / "decisions-rm2.jsonl"
    assert serve_files(d, "rm1")["state"] == serve_files(d, "rm2")["state"]  # one history, taken over on failover


def test_nodemanagers_run_the_resync_mend_once_the_shim_jar_is_built(tmp_path: Path) -> None:
    c = LocalCluster(tmp_path / "c", root=tmp_path)
    env = c._nm_env(tmp_path / "conf", tmp_path / "cp.txt", "/jdk", "nodemanager-0")
    assert "YARNCTL_NODEMANAGER_CLASS" not in env and "YARNCTL_SHIM_JAR" not in env  # no jar: Hadoop's own NM
    jar = cp.shim_jar_path(tmp_path)
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"")
    env = c._nm_env(tmp_path / "conf", tmp_path / "cp.txt", "/jdk", "nodemanager-0")
    assert env["YARNCTL_NODEMANAGER_CLASS"] == "io.yarnctl.nm.ResyncSafeNodeManager"
    assert env["YARNCTL_SHIM_JAR"] == str(jar) and env["YARNCTL_DAEMON_NAME"] == "nodemanager-0"
