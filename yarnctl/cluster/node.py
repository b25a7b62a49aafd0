"""One daemon of a multi-host yarnctl cluster (the Docker image's entrypoint): render its conf, exec it.

    python -m yarnctl.cluster.node resourcemanager|nodemanager|historyserver|namenode|datanode|serve [SERVE OPTIONS...]
    python -m yarnctl.cluster.node conf ROLE      render ROLE's conf dir only, print its path
    python -m yarnctl.cluster.node health ROLE    exit 0 when ROLE answers (the compose health checks)

The local cluster (`yarnctl cluster up`) puts every daemon on one host and picks free ports; here
each daemon has a host of its own and Hadoop's usual ports. Both render the same hadoop-conf/
templates through `render_conf_dir` and start every process through docker/bin/yarnctl-daemon.
Settings come from the environment (`SETTINGS`: name, default, meaning), so a compose file can
set them; any port placeholder of hadoop-conf/ can be overridden as YARNCTL_<PLACEHOLDER>, e.g.
YARNCTL_RM_WEBAPP_PORT=8088. Jobs use HDFS (YARNCTL_DEFAULT_FS): a NameNode, formatted on its first
start, and a DataNode beside each NodeManager that registers under the NodeManager's host name.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from yarnctl.bridge.server import load_token
from yarnctl.cluster import classpath as cp
from yarnctl.cluster.conf import NATIVE_SCHEDULERS, NM_MAIN, ClusterConf, NodeManagerConf, hdfs_webapps, render_conf_dir
from yarnctl.errors import ClusterError, ConfigError, RMError
from yarnctl.rm import HdfsDaemon, HistoryServer, HttpSettings, NodeManager, ResourceManager

STATUS_STALE_S = 30.0  # serve's status file older than this: its main loop is stuck or gone

ROLES = ("resourcemanager", "nodemanager", "historyserver", "namenode", "datanode", "serve")

# Hadoop's usual ports (NM_PORT: 2.7's default is an ephemeral port; a fixed one is easier to read)
PORTS = {
    "RM_PORT": 8032, "RM_SCHEDULER_PORT": 8030, "RM_TRACKER_PORT": 8031, "RM_ADMIN_PORT": 8033,
    "RM_WEBAPP_PORT": 8088, "JHS_PORT": 10020, "JHS_WEBAPP_PORT": 19888, "JHS_ADMIN_PORT": 10033,
    "NM_PORT": 45454, "NM_LOCALIZER_PORT": 8040, "NM_WEBAPP_PORT": 8042, "NM_SHUFFLE_PORT": 13562,
}

SETTINGS: dict[str, tuple[str, str]] = {
    "HADOOP_CONF_DIR": ("/etc/hadoop/conf", "where this daemon's conf is rendered"),
    "YARNCTL_CLASSPATH_FILE": ("/opt/hadoop/classpath.txt", "the Hadoop jars, ':'-separated"),
    "YARNCTL_DATA_DIR": ("/data", "shared by the Hadoop daemons (a volume): hadoop.tmp.dir, clients' working dir"),
    "YARNCTL_DEFAULT_FS": ("hdfs://namenode:8020", "fs.defaultFS: the NameNode (file:/// runs without HDFS)"),
    "YARNCTL_FS_DIR": ("/yarnctl", "on the default file system: MapReduce staging and job history"),
    "YARNCTL_DFS_DIR": ("/var/lib/yarnctl/dfs", "NameNode metadata (name/), DataNode blocks (data/)"),
    "YARNCTL_DFS_REPLICATION": ("1", "dfs.replication"),
    "YARNCTL_NN_WEBAPP_PORT": ("50070", "the NameNode's web UI and JMX"),
    "YARNCTL_DN_WEBAPP_PORT": ("50075", "a DataNode's web UI and JMX"),
    "YARNCTL_NM_DIR": ("/var/lib/yarnctl/nm", "a NodeManager's local and log dirs"),
    "YARNCTL_LOG_DIR": ("/var/log/yarnctl", "daemon log files (with YARNCTL_LOGGER INFO,RFA)"),
    "YARNCTL_LOGGER": ("INFO,console", "hadoop.root.logger: console = the container's stderr"),
    "YARNCTL_RM_HOST": ("resourcemanager", "the ResourceManager's host name"),
    "YARNCTL_JHS_HOST": ("historyserver", "the JobHistoryServer's host name"),
    "YARNCTL_NM_HOST": ("", "this NodeManager's host name, and the one its DataNode registers under "
                            "(default: this host's name)"),
    "YARNCTL_SCHEDULER": ("shim", "shim, or a stock scheduler: " + ", ".join(NATIVE_SCHEDULERS)),
    "YARNCTL_NM_MEMORY_MB": ("4096", "memory per NodeManager"),
    "YARNCTL_NM_VCORES": ("4", "vcores per NodeManager"),
    "YARNCTL_HEARTBEAT_MS": ("1000", "NodeManager heartbeat interval"),
    "YARNCTL_SHIM_ADDRESS": ("127.0.0.1", "yarnctl.shim.address: where `yarnctl serve` listens"),
    "YARNCTL_SHIM_PORT": ("25334", "yarnctl.shim.port, `yarnctl serve --port`"),
    "YARNCTL_TOKEN_FILE": ("/var/lib/yarnctl/secrets/bridge.token", "yarnctl.shim.token-file, `--token-file`"),
    "YARNCTL_DEADLINE_MS": ("", "yarnctl.shim.deadline-ms (default: the shim's)"),
    "YARNCTL_POLICY": ("fifo", "the policy `yarnctl serve` runs"),
    "YARNCTL_SERVE_DIR": ("/var/lib/yarnctl/serve", "decision log, status file and policy state"),
    "YARNCTL_METRICS_PORT": ("9464", "Prometheus metrics of `yarnctl serve` (empty: off)"),
    "YARNCTL_METRICS_ADDRESS": ("0.0.0.0", "their address (non-loopback: reachable from Prometheus)"),
    **{f"YARNCTL_{k}": (str(v), f"port @{k}@") for k, v in PORTS.items()},
}


def setting(env: Mapping[str, str], name: str) -> str:
    """The value of one of SETTINGS from `env`, else its default."""
    return env.get(name, SETTINGS[name][0])


def cluster_conf(env: Mapping[str, str], classpath: Sequence[str]) -> ClusterConf:
    """The templates' values for this cluster, from the environment."""
    sched = setting(env, "YARNCTL_SCHEDULER")
    if sched != "shim" and sched not in NATIVE_SCHEDULERS:
        raise ClusterError(f"YARNCTL_SCHEDULER={sched!r}: valid are shim, {', '.join(NATIVE_SCHEDULERS)}")
    port = {k: _int(env, f"YARNCTL_{k}") for k in PORTS}
    shim = {"yarnctl.shim.address": setting(env, "YARNCTL_SHIM_ADDRESS"),
            "yarnctl.shim.port": str(_int(env, "YARNCTL_SHIM_PORT")),
            "yarnctl.shim.token-file": setting(env, "YARNCTL_TOKEN_FILE")}
    if setting(env, "YARNCTL_DEADLINE_MS"):
        shim["yarnctl.shim.deadline-ms"] = str(_int(env, "YARNCTL_DEADLINE_MS"))
    return ClusterConf(
        dir=Path(setting(env, "YARNCTL_DATA_DIR")), classpath=tuple(classpath),
        rm_port=port["RM_PORT"], rm_scheduler_port=port["RM_SCHEDULER_PORT"], rm_tracker_port=port["RM_TRACKER_PORT"],
        rm_admin_port=port["RM_ADMIN_PORT"], rm_webapp_port=port["RM_WEBAPP_PORT"],
        host=setting(env, "YARNCTL_RM_HOST"), rm_host=setting(env, "YARNCTL_RM_HOST"),
        jhs_host=setting(env, "YARNCTL_JHS_HOST"), nm_host=nm_host(env),
        nm_memory_mb=_int(env, "YARNCTL_NM_MEMORY_MB"), nm_vcores=_int(env, "YARNCTL_NM_VCORES"),
        nm_heartbeat_ms=_int(env, "YARNCTL_HEARTBEAT_MS"), native=None if sched == "shim" else sched,
        shim=shim if sched == "shim" else {}, jhs_port=port["JHS_PORT"], jhs_webapp_port=port["JHS_WEBAPP_PORT"],
        jhs_admin_port=port["JHS_ADMIN_PORT"], default_fs=setting(env, "YARNCTL_DEFAULT_FS"),
        fs_dir=setting(env, "YARNCTL_FS_DIR"), dfs_dir=Path(setting(env, "YARNCTL_DFS_DIR")),
        dfs_replication=_int(env, "YARNCTL_DFS_REPLICATION"), nn_webapp_port=_int(env, "YARNCTL_NN_WEBAPP_PORT"),
        dn_webapp_port=_int(env, "YARNCTL_DN_WEBAPP_PORT"))


def nm_host(env: Mapping[str, str]) -> str:
    """This NodeManager's host name: YARNCTL_NM_HOST, else the host's own name (a compose `hostname:`)."""
    return setting(env, "YARNCTL_NM_HOST") or socket.gethostname()


def nm_conf(env: Mapping[str, str]) -> NodeManagerConf:
    """This host's NodeManager: its dirs and ports."""
    return NodeManagerConf(0, Path(setting(env, "YARNCTL_NM_DIR")), _int(env, "YARNCTL_NM_PORT"),
                           _int(env, "YARNCTL_NM_LOCALIZER_PORT"), _int(env, "YARNCTL_NM_WEBAPP_PORT"),
                           _int(env, "YARNCTL_NM_SHUFFLE_PORT"))


def render_role(role: str, env: Mapping[str, str], root: Path | None = None) -> Path:
    """Render `role`'s conf dir (HADOOP_CONF_DIR) from hadoop-conf/ and return it."""
    if role not in ROLES:
        raise ClusterError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")
    root = root or cp.repo_root()
    conf = cluster_conf(env, _classpath(env))
    out = Path(setting(env, "HADOOP_CONF_DIR"))
    nm = nm_conf(env) if role == "nodemanager" else None
    if nm is not None:
        for sub in ("local", "logs"):
            (nm.dir / sub).mkdir(parents=True, exist_ok=True)
    if role in ("namenode", "datanode"):
        (Path(setting(env, "YARNCTL_DFS_DIR")) / ("name" if role == "namenode" else "data")).mkdir(
            parents=True, exist_ok=True)
        hdfs_webapps(out)
    return render_conf_dir(root / "hadoop-conf", out, conf, nm)


def serve_args(env: Mapping[str, str], extra: Sequence[str] = ()) -> list[str]:
    """`yarnctl serve` options for this cluster: loopback py4j next to the RM, metrics for Prometheus."""
    d = Path(setting(env, "YARNCTL_SERVE_DIR"))
    policy = setting(env, "YARNCTL_POLICY")
    args = ["--policy", policy, "--address", setting(env, "YARNCTL_SHIM_ADDRESS"),
            "--port", str(_int(env, "YARNCTL_SHIM_PORT")), "--token-file", setting(env, "YARNCTL_TOKEN_FILE"),
            "--decision-log", str(d / "decisions.jsonl"), "--status-file", str(d / "serve-status.json"),
            "--state-file", str(d / "state" / f"{policy}.json"),
            "--rm", f"http://{setting(env, 'YARNCTL_RM_HOST')}:{_int(env, 'YARNCTL_RM_WEBAPP_PORT')}"]
    if setting(env, "YARNCTL_METRICS_PORT"):
        address = setting(env, "YARNCTL_METRICS_ADDRESS")
        args += ["--metrics-port", str(_int(env, "YARNCTL_METRICS_PORT")), "--metrics-address", address]
        if address not in ("127.0.0.1", "localhost", "::1"):
            args.append("--allow-remote")  # for the metrics address only: py4j stays on --address
    return args + list(extra)


def exec_role(role: str, extra: Sequence[str], env: Mapping[str, str], root: Path | None = None) -> None:
    """Render the conf and replace this process with docker/bin/yarnctl-daemon ROLE (never returns)."""
    root = root or cp.repo_root()
    script = root / "docker" / "bin" / "yarnctl-daemon"
    child = dict(env)
    if role == "serve":
        child["YARNCTL_PYTHON"] = sys.executable
        argv = [str(script), "serve", *serve_args(env, extra)]
    else:
        conf_dir = render_role(role, env, root)
        child.update(HADOOP_CONF_DIR=str(conf_dir), YARNCTL_CLASSPATH_FILE=setting(env, "YARNCTL_CLASSPATH_FILE"),
                     YARNCTL_LOG_DIR=setting(env, "YARNCTL_LOG_DIR"), YARNCTL_LOGGER=setting(env, "YARNCTL_LOGGER"),
                     YARNCTL_DAEMON_NAME=role)
        if role == "resourcemanager" and setting(env, "YARNCTL_SCHEDULER") == "shim":
            # the shim reads the token once, at RM start: make sure there is one (0600) before that
            load_token(Path(setting(env, "YARNCTL_TOKEN_FILE")))
            child["YARNCTL_SHIM_JAR"] = str(cp.shim_jar_path(root))
        if role == "nodemanager" and cp.shim_jar_path(root).is_file():
            # as `cluster up`'s: the NodeManager that keeps its heartbeat thread across an RM restart
            child.update(YARNCTL_SHIM_JAR=str(cp.shim_jar_path(root)), YARNCTL_NODEMANAGER_CLASS=NM_MAIN)
        if role == "namenode":
            format_namenode(script, child, Path(setting(env, "YARNCTL_DFS_DIR")) / "name")
        argv = [str(script), role]
    sys.stdout.flush()
    os.execve(argv[0], argv, child)


def format_namenode(script: Path, env: Mapping[str, str], name_dir: Path) -> None:
    """Format HDFS in `name_dir` unless it holds a formatted namespace already (the NameNode's first start)."""
    if (name_dir / "current" / "VERSION").is_file():
        return
    print(f"formatting HDFS in {name_dir} (first start)", file=sys.stderr, flush=True)
    r = subprocess.run([str(script), "namenode", "-format", "-nonInteractive", "-clusterId", "yarnctl"],
                       env={**env, "YARNCTL_DAEMON_NAME": "namenode-format"}, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise ClusterError(f"formatting HDFS in {name_dir} failed (exit {r.returncode}); see the lines above")


def _bean(url: str, query: str, settings: HttpSettings) -> Mapping[str, Any]:
    """The attributes of the first bean of an HDFS daemon's /jmx?qry=QUERY (empty when none); RMError when it does not answer."""
    with closing(HdfsDaemon(url, settings=settings)) as daemon:
        beans = daemon.jmx(query)
    return beans[0].attributes if beans else {}


def _listening(port: int) -> bool | None:
    """Whether a TCP socket listens on `port` in this network namespace (/proc/net/tcp*); None: cannot tell."""
    seen = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        seen = True
        for line in lines:
            f = line.split()
            if len(f) > 3 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                return True
    return False if seen else None


def health(role: str, env: Mapping[str, str], timeout_s: float = 3.0) -> str:
    """One line saying `role` is up; ClusterError (or RMError) saying why not."""
    quick = HttpSettings(connect_timeout_s=timeout_s, read_timeout_s=timeout_s, retries=0)
    if role == "resourcemanager":
        url = f"http://{setting(env, 'YARNCTL_RM_HOST')}:{_int(env, 'YARNCTL_RM_WEBAPP_PORT')}"
        with closing(ResourceManager([url], settings=quick)) as rm:
            state = rm.cluster_info().state
        if state != "STARTED":
            raise ClusterError(f"resourcemanager {url} is {state}")
        return f"resourcemanager {url} STARTED"
    if role == "nodemanager":
        url = f"http://{nm_host(env)}:{_int(env, 'YARNCTL_NM_WEBAPP_PORT')}"
        with closing(NodeManager(url, settings=quick)) as nm:
            info = nm.info()
        if not info.healthy:
            raise ClusterError(f"nodemanager {url} unhealthy: {info.health_report}")
        return f"nodemanager {url} healthy"
    if role == "historyserver":
        url = f"http://{setting(env, 'YARNCTL_JHS_HOST')}:{_int(env, 'YARNCTL_JHS_WEBAPP_PORT')}"
        with closing(HistoryServer(url, settings=quick)) as jhs:
            jhs.info()
        return f"historyserver {url} up"
    if role == "namenode":
        url = f"http://{_namenode_host(env)}:{_int(env, 'YARNCTL_NN_WEBAPP_PORT')}"
        nn_status = _bean(url, "Hadoop:service=NameNode,name=NameNodeStatus", quick)
        if nn_status.get("State") != "active":
            raise ClusterError(f"namenode {url} is {nn_status.get('State') or 'not up'}")
        nn_info = _bean(url, "Hadoop:service=NameNode,name=NameNodeInfo", quick)
        live = len(json.loads(str(nn_info.get("LiveNodes") or "{}")))
        safe = " (in safe mode)" if nn_info.get("Safemode") else ""
        return f"namenode {url} active, {live} live datanode(s){safe}"
    if role == "datanode":
        url = f"http://{nm_host(env)}:{_int(env, 'YARNCTL_DN_WEBAPP_PORT')}"
        nns = json.loads(str(_bean(url, "Hadoop:service=DataNode,name=DataNodeInfo", quick)
                             .get("NamenodeAddresses") or "{}"))
        pools = [p for p in nns.values() if isinstance(p, str) and p.startswith("BP-")]
        if not pools:
            raise ClusterError(f"datanode {url} is not registered with a namenode yet")
        return f"datanode {url} registered ({pools[0]})"
    if role == "serve":
        # a liveness check without a py4j login: connecting without the token would make serve log a
        # refused connection on every check. The py4j port must be listening, and the status file that
        # serve rewrites every second must be fresh.
        addr = (setting(env, "YARNCTL_SHIM_ADDRESS"), _int(env, "YARNCTL_SHIM_PORT"))
        listening = _listening(addr[1])
        if listening is None:  # no /proc: fall back to a connection
            try:
                socket.create_connection(addr, timeout=timeout_s).close()
                listening = True
            except OSError:
                listening = False
        if not listening:
            raise ClusterError(f"serve: nothing listens on {addr[0]}:{addr[1]}")
        status_file = Path(setting(env, "YARNCTL_SERVE_DIR")) / "serve-status.json"
        if status_file.is_file():
            age = time.time() - status_file.stat().st_mtime
            if age > STATUS_STALE_S:
                raise ClusterError(f"serve: {status_file} is {age:.0f} s old (rewritten every second while serve runs)")
        return f"serve listening on {addr[0]}:{addr[1]}"
    raise ClusterError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point: see the module docstring. Errors are one line on stderr and exit 2 (health: 1)."""
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ if env is None else env)
    usage = f"usage: python -m yarnctl.cluster.node {{{'|'.join(ROLES)}}} | conf ROLE | health ROLE"
    if not args:
        print(usage, file=sys.stderr)
        return 2
    cmd, rest = args[0], args[1:]
    try:
        if cmd == "health":
            if len(rest) != 1:
                print(usage, file=sys.stderr)
                return 2
            try:
                print(health(rest[0], env))
            except (ClusterError, RMError) as e:
                print(f"unhealthy: {e}", file=sys.stderr)
                return 1
            return 0
        if cmd == "conf":
            if len(rest) != 1:
                print(usage, file=sys.stderr)
                return 2
            print(render_role(rest[0], env))
            return 0
        if cmd not in ROLES or (rest and cmd != "serve"):
            print(usage, file=sys.stderr)
            return 2
        exec_role(cmd, rest, env)
    except (ClusterError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0  # not reached: exec_role replaces the process


def _namenode_host(env: Mapping[str, str]) -> str:
    fs = setting(env, "YARNCTL_DEFAULT_FS")
    if not fs.startswith("hdfs://"):
        raise ClusterError(f"YARNCTL_DEFAULT_FS={fs!r}: no NameNode to check (not hdfs://)")
    return fs[len("hdfs://"):].split("/", 1)[0].rsplit(":", 1)[0]


def _int(env: Mapping[str, str], name: str) -> int:
    raw = setting(env, name)
    try:
        n = int(raw)
    except ValueError:
        raise ClusterError(f"{name}={raw!r}: expected an integer") from None
    if n < 0:
        raise ClusterError(f"{name}={raw!r}: expected a non-negative integer")
    return n


def _classpath(env: Mapping[str, str]) -> list[str]:
    f = Path(setting(env, "YARNCTL_CLASSPATH_FILE"))
    try:
        return [e for e in f.read_text().strip().split(os.pathsep) if e]
    except OSError as e:
        raise ClusterError(f"{f}: cannot read the Hadoop classpath ({e.strerror}); set YARNCTL_CLASSPATH_FILE") from None


if __name__ == "__main__":
    sys.exit(main())
