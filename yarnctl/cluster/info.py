"""What a local cluster is made of, as `up` records it in <dir>/cluster.json: daemons, ports, dirs, URLs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarnctl.bridge.defaults import DEFAULT_TOKEN_FILE as SERVE_TOKEN_FILE
from yarnctl.rm import HttpSettings

STATE_FILE = "cluster.json"
TERMINAL_STATES = ("FINISHED", "FAILED", "KILLED")
# the cluster's own probes (startup, status, wait_app) poll in loops of their own or are one-shot:
# one quick try each, no retry rounds with backoff
PROBE = HttpSettings(connect_timeout_s=1.0, read_timeout_s=3.0, retries=0)
DEFAULT_DIR = Path.home() / ".yarnctl" / "cluster"
# the directory of the cluster `up` started last, so that `yarnctl status` finds a `--dir` cluster unasked
LAST_CLUSTER = Path.home() / ".yarnctl" / "last-cluster"
DEFAULT_TOKEN_FILE = SERVE_TOKEN_FILE.expanduser()
JAVA_FLAGS = ("-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED")
MAIN_CLASSES = {
    "examples": "org.apache.hadoop.examples.ExampleDriver",
    "sleep": "org.apache.hadoop.mapreduce.SleepJob",
    "dshell": "org.apache.hadoop.yarn.applications.distributedshell.Client",
    "fs": "org.apache.hadoop.fs.FsShell",  # `hadoop fs`: the cluster's default file system (HDFS with `up --hdfs`)
}
JARS = {  # name -> jar file name in the resolved classpath
    "examples": "hadoop-mapreduce-examples-2.7.7.jar",
    "jobclient-tests": "hadoop-mapreduce-client-jobclient-2.7.7-tests.jar",
    "distributedshell": "hadoop-yarn-applications-distributedshell-2.7.7.jar",
    "streaming": "hadoop-streaming-2.7.7.jar",
}


@dataclass(frozen=True, slots=True)
class DaemonInfo:
    """One process `up` started."""

    name: str                 # resourcemanager, nodemanager-0, serve
    pid: int
    log: Path                 # the daemon's own log
    out: Path                 # its stdout/stderr
    url: str = ""             # web UI / REST base, "" for serve
    ports: dict[str, int] = field(default_factory=dict)
    dir: Path | None = None   # NodeManager dir (local and log dirs, conf)


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """What a running local cluster is made of; saved as <dir>/cluster.json."""

    dir: Path
    rm_url: str
    conf_dir: Path            # HADOOP_CONF_DIR of the RM and of clients
    classpath_file: Path
    java_home: str
    scheduler_class: str
    policy: str | None        # the Python policy behind the shim; None with a native scheduler
    native: str | None        # fifo|capacity|fair when the stock scheduler runs
    rm: DaemonInfo
    nodes: tuple[DaemonInfo, ...]
    serve: DaemonInfo | None
    history: DaemonInfo | None   # the MapReduce JobHistoryServer
    token_file: Path | None
    decision_log: Path | None
    status_file: Path | None
    shim_jar: Path | None
    jars: dict[str, Path]     # examples, jobclient-tests, distributedshell
    nm_memory_mb: int
    nm_vcores: int
    started_at: float
    up_seconds: float = 0.0
    serve_args: tuple[str, ...] = ()   # the policy server's command line after `serve` (restart_serve reuses it)
    rm2: DaemonInfo | None = None        # RM HA (`up --ha`): the second ResourceManager (`rm` is rm1)
    serve2: DaemonInfo | None = None     # RM HA: rm2's own policy server
    zookeeper: DaemonInfo | None = None  # RM HA: leader election and the RM state store
    namenode: DaemonInfo | None = None   # HDFS (not in the light mode, `up --no-hdfs`)
    datanodes: tuple[DaemonInfo, ...] = ()  # one beside each NodeManager, in its order, on its loopback address
    default_fs: str = "file:///"         # fs.defaultFS: hdfs://127.0.0.1:PORT with HDFS

    @property
    def rm_urls(self) -> list[str]:
        """Every ResourceManager's web address, rm1 first (two under RM HA)."""
        return [self.rm_url, *([self.rm2.url] if self.rm2 else [])]

    @property
    def hadoop_home(self) -> Path:
        """`bin/hadoop`, `bin/yarn`, `bin/hdfs` and `etc/hadoop` for this cluster, as tools expect of a Hadoop install."""
        return self.dir / "hadoop"

    @property
    def rms(self) -> list[DaemonInfo]:
        """The ResourceManagers, rm1 first."""
        return [self.rm, *([self.rm2] if self.rm2 else [])]

    @property
    def nm_urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    @property
    def pids(self) -> dict[str, int]:
        return {d.name: d.pid for d in self.daemons}

    @property
    def daemons(self) -> list[DaemonInfo]:
        return [*([self.zookeeper] if self.zookeeper else []), *([self.namenode] if self.namenode else []),
                *self.datanodes, *([self.serve] if self.serve else []), *([self.serve2] if self.serve2 else []),
                *self.rms, *([self.history] if self.history else []), *self.nodes]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = _plain(dataclasses.asdict(self))
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ClusterInfo:
        def daemon(d: dict[str, Any] | None) -> DaemonInfo | None:
            if d is None:
                return None
            return DaemonInfo(name=d["name"], pid=int(d["pid"]), log=Path(d["log"]), out=Path(d["out"]),
                              url=d.get("url", ""), ports={k: int(v) for k, v in d.get("ports", {}).items()},
                              dir=Path(d["dir"]) if d.get("dir") else None)

        def path(v: str | None) -> Path | None:
            return Path(v) if v else None

        rm = daemon(doc["rm"])
        assert rm is not None
        return cls(dir=Path(doc["dir"]), rm_url=doc["rm_url"], conf_dir=Path(doc["conf_dir"]),
                   classpath_file=Path(doc["classpath_file"]), java_home=doc["java_home"],
                   scheduler_class=doc["scheduler_class"], policy=doc.get("policy"), native=doc.get("native"),
                   rm=rm, nodes=tuple(d for d in (daemon(n) for n in doc["nodes"]) if d is not None),
                   serve=daemon(doc.get("serve")), history=daemon(doc.get("history")), token_file=path(doc.get("token_file")),
                   decision_log=path(doc.get("decision_log")), status_file=path(doc.get("status_file")),
                   shim_jar=path(doc.get("shim_jar")), jars={k: Path(v) for k, v in doc.get("jars", {}).items()},
                   nm_memory_mb=int(doc["nm_memory_mb"]), nm_vcores=int(doc["nm_vcores"]),
                   started_at=float(doc["started_at"]), up_seconds=float(doc.get("up_seconds", 0.0)),
                   serve_args=tuple(str(a) for a in doc.get("serve_args", ())), rm2=daemon(doc.get("rm2")),
                   serve2=daemon(doc.get("serve2")), zookeeper=daemon(doc.get("zookeeper")),
                   namenode=daemon(doc.get("namenode")),
                   datanodes=tuple(d for d in (daemon(n) for n in doc.get("datanodes", ())) if d is not None),
                   default_fs=str(doc.get("default_fs", "file:///")))


@dataclass(frozen=True, slots=True)
class DownReport:
    """What `down` stopped."""

    stopped: tuple[str, ...]     # daemon names that were still running
    strays: tuple[int, ...]      # container (or other) pids found under the cluster dir and killed
    forced: tuple[int, ...]      # pids that needed SIGKILL


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, Path):
        return str(v)
    return v
