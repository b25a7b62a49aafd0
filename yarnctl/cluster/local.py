"""A local Hadoop 2.7.7 cluster: one ResourceManager and N NodeManagers as separate JVMs on this host.

Everything lives in one directory (default ~/.yarnctl/cluster):

    cluster.json            what `up` started: pids, ports, dirs, URLs (read by status/down/run)
    conf/                   RM and client conf (HADOOP_CONF_DIR for `run`)
    nm-<i>/conf             NodeManager i's conf; nm-<i>/local, nm-<i>/logs: its containers
    logs/                   resourcemanager.log, nodemanager-<i>.log, *.out (JVM stdout/stderr), serve.log
    decisions.jsonl         the policy server's decision log (shim on)
    serve-status.json       the policy server's stats (shim on)

Daemons start through docker/bin/yarnctl-daemon (the same script a Docker image runs), each in its
own session so they outlive the command that started them.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarnctl.bridge.server import load_token
from yarnctl.cluster import classpath as cp
from yarnctl.cluster import procs
from yarnctl.cluster.conf import NATIVE_SCHEDULERS, ClusterConf, NodeManagerConf, render_conf_dir
from yarnctl.cluster.ports import free_ports, is_listening
from yarnctl.errors import ClusterError, RMError
from yarnctl.rm import AppInfo, ClusterMetrics, HistoryServer, HttpSettings, NodeReport, ResourceManager, ShimMetrics

log = logging.getLogger(__name__)

Progress = Callable[[str], None]

STATE_FILE = "cluster.json"
TERMINAL_STATES = ("FINISHED", "FAILED", "KILLED")
UNFINISHED_STATES = ("NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING")
# the cluster's own probes (startup, status, wait_app) poll in loops of their own or are one-shot:
# one quick try each, no retry rounds with backoff
PROBE = HttpSettings(connect_timeout_s=1.0, read_timeout_s=3.0, retries=0)
DEFAULT_DIR = Path.home() / ".yarnctl" / "cluster"
# the directory of the cluster `up` started last, so that `yarnctl status` finds a `--dir` cluster unasked
LAST_CLUSTER = Path.home() / ".yarnctl" / "last-cluster"
DEFAULT_TOKEN_FILE = Path.home() / ".yarnctl" / "bridge.token"
JAVA_FLAGS = ("-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED")
MAIN_CLASSES = {
    "examples": "org.apache.hadoop.examples.ExampleDriver",
    "sleep": "org.apache.hadoop.mapreduce.SleepJob",
    "dshell": "org.apache.hadoop.yarn.applications.distributedshell.Client",
}
JARS = {  # name -> jar file name in the resolved classpath
    "examples": "hadoop-mapreduce-examples-2.7.7.jar",
    "jobclient-tests": "hadoop-mapreduce-client-jobclient-2.7.7-tests.jar",
    "distributedshell": "hadoop-yarn-applications-distributedshell-2.7.7.jar",
}
_APP_ID = re.compile(r"\bapplication_\d+_\d+\b")


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

    @property
    def nm_urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    @property
    def pids(self) -> dict[str, int]:
        return {d.name: d.pid for d in self.daemons}

    @property
    def daemons(self) -> list[DaemonInfo]:
        return [*([self.serve] if self.serve else []), self.rm, *([self.history] if self.history else []),
                *self.nodes]

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
                   started_at=float(doc["started_at"]), up_seconds=float(doc.get("up_seconds", 0.0)))


@dataclass(frozen=True, slots=True)
class DownReport:
    """What `down` stopped."""

    stopped: tuple[str, ...]     # daemon names that were still running
    strays: tuple[int, ...]      # container (or other) pids found under the cluster dir and killed
    forced: tuple[int, ...]      # pids that needed SIGKILL


class LocalCluster:
    """Start, inspect, use and stop the local cluster living in `dir`."""

    def __init__(self, dir: Path | str | None = None, *, root: Path | None = None, cache_dir: Path | None = None,
                 progress: Progress | None = None) -> None:
        self.dir = Path(dir).expanduser().resolve() if dir else DEFAULT_DIR
        self.root = root or cp.repo_root()
        self.cache_dir = cache_dir
        self._say: Progress = progress or log.info

    # ------------------------------------------------------------------ state

    @property
    def state_file(self) -> Path:
        return self.dir / STATE_FILE

    def exists(self) -> bool:
        """True when `up` recorded a cluster here (running or not)."""
        return self.state_file.is_file()

    def info(self) -> ClusterInfo:
        """The recorded cluster; ClusterError when there is none."""
        try:
            doc = json.loads(self.state_file.read_text())
        except FileNotFoundError:
            raise ClusterError(f"no cluster in {self.dir}: start one with `yarnctl cluster up"
                               f"{'' if self.dir == DEFAULT_DIR else ' --dir ' + str(self.dir)}`") from None
        except (OSError, ValueError) as e:
            raise ClusterError(f"{self.state_file}: unreadable ({e}); `yarnctl cluster down` cleans up") from None
        try:
            return ClusterInfo.from_json(doc)
        except (KeyError, TypeError, ValueError) as e:
            raise ClusterError(f"{self.state_file}: malformed ({e}); `yarnctl cluster down` cleans up") from None

    def rm(self, settings: HttpSettings | None = None) -> ResourceManager:
        """A typed client for this cluster's ResourceManager (yarnctl.rm defaults unless `settings`)."""
        return ResourceManager([self.info().rm_url], settings=settings)

    # ------------------------------------------------------------------ up

    def up(self, *, nodes: int = 2, policy: str | None = "fifo", native: str | None = None,
           nm_memory_mb: int = 4096, nm_vcores: int = 4, deadline_ms: int | None = None,
           token_file: Path | None = None, heartbeat_ms: int = 1000, serve_args: Sequence[str] = (),
           timeout_s: float = 180.0) -> ClusterInfo:
        """Start the policy server (shim on), the RM and `nodes` NMs; return once every NM is RUNNING.

        `native` (fifo|capacity|fair) runs a stock scheduler and no policy server; otherwise the shim
        runs `policy`. On any failure everything started so far is stopped and ClusterError names
        the log to read.
        """
        if nodes < 1:
            raise ClusterError(f"--nodes must be at least 1, got {nodes}")
        if native is not None and native not in NATIVE_SCHEDULERS:
            raise ClusterError(f"unknown native scheduler {native!r}; valid: {', '.join(NATIVE_SCHEDULERS)}")
        if native is None and not policy:
            raise ClusterError("give a policy for the shim (--policy) or a stock scheduler (--native)")
        if nm_memory_mb < 1024 or nm_vcores < 1:
            raise ClusterError("a NodeManager needs at least 1024 MB and 1 vcore")
        self._refuse_if_running()
        started = time.monotonic()
        shim = native is None
        jars, cp_file = cp.resolve_classpath(self.root / "java-bridge" / "cluster" / "pom.xml", self.cache_dir,
                                             progress=self._say)
        shim_jar = cp.ensure_shim_jar(self.root, progress=self._say) if shim else None
        java_home = find_java_home()
        self._clean_previous()
        logs = self.dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)

        host = "127.0.0.1"
        ports = iter(free_ports(9 + 4 * nodes, host))
        rm_ports = {k: next(ports) for k in ("rm", "scheduler", "tracker", "admin", "webapp")}
        jhs_ports = {k: next(ports) for k in ("jhs", "webapp", "admin")}
        serve_port = next(ports)
        nm_confs = [NodeManagerConf(i, self.dir / f"nm-{i}", next(ports), next(ports), next(ports), next(ports))
                    for i in range(nodes)]
        token = Path(token_file).expanduser() if token_file else DEFAULT_TOKEN_FILE
        shim_values = {"yarnctl.shim.enabled": "true", "yarnctl.shim.address": host,
                       "yarnctl.shim.port": str(serve_port), "yarnctl.shim.token-file": str(token)}
        if deadline_ms is not None:
            shim_values["yarnctl.shim.deadline-ms"] = str(deadline_ms)
        conf = ClusterConf(dir=self.dir, classpath=tuple(jars), host=host, rm_port=rm_ports["rm"],
                           rm_scheduler_port=rm_ports["scheduler"], rm_tracker_port=rm_ports["tracker"],
                           rm_admin_port=rm_ports["admin"], rm_webapp_port=rm_ports["webapp"],
                           nm_memory_mb=nm_memory_mb, nm_vcores=nm_vcores, nm_heartbeat_ms=heartbeat_ms,
                           native=native, shim=shim_values if shim else {}, jhs_port=jhs_ports["jhs"],
                           jhs_webapp_port=jhs_ports["webapp"], jhs_admin_port=jhs_ports["admin"])
        templates = self.root / "hadoop-conf"
        conf_dir = render_conf_dir(templates, self.dir / "conf", conf)
        for nm in nm_confs:
            render_conf_dir(templates, nm.dir / "conf", conf, nm)
            for sub in ("local", "logs"):
                (nm.dir / sub).mkdir(parents=True, exist_ok=True)

        rm_url = f"http://{host}:{rm_ports['webapp']}"
        by_name = {p.name: Path(p) for p in map(Path, jars)}
        info = ClusterInfo(
            dir=self.dir, rm_url=rm_url, conf_dir=conf_dir, classpath_file=cp_file, java_home=java_home,
            scheduler_class=conf.scheduler_class, policy=policy if shim else None, native=native,
            rm=DaemonInfo("resourcemanager", 0, logs / "resourcemanager.log", logs / "resourcemanager.out",
                          rm_url, rm_ports),
            nodes=(), serve=None,
            history=DaemonInfo("historyserver", 0, logs / "historyserver.log", logs / "historyserver.out",
                               f"http://{host}:{jhs_ports['webapp']}", jhs_ports),
            token_file=token if shim else None,
            decision_log=self.dir / "decisions.jsonl" if shim else None,
            status_file=self.dir / "serve-status.json" if shim else None,
            shim_jar=shim_jar, jars={k: by_name[v] for k, v in JARS.items() if v in by_name},
            nm_memory_mb=nm_memory_mb, nm_vcores=nm_vcores, started_at=time.time())
        deadline = time.monotonic() + timeout_s
        try:
            if shim:
                assert policy is not None
                load_token(token)  # creates it 0600, or refuses one others can read, before anything starts
                info = self._start_serve(info, policy, serve_port, serve_args, deadline)
            # the JobHistoryServer first: it always sleeps 10 s after creating its dirs
            # (HistoryFileManager.createHistoryDirs), so the RM and NMs start meanwhile
            info, jhs = self._start_history(info, cp_file, java_home)
            info = self._start_rm(info, cp_file, java_home, shim_jar, deadline)
            info = self._start_nms(info, nm_confs, cp_file, java_home, deadline)
            self._wait_history(info, jhs, deadline)
        except BaseException:
            self.down()
            raise
        info = dataclasses.replace(info, up_seconds=round(time.monotonic() - started, 1))
        self._save(info)
        try:
            LAST_CLUSTER.parent.mkdir(parents=True, exist_ok=True)
            LAST_CLUSTER.write_text(f"{self.dir}\n")
        except OSError as e:  # a convenience for `yarnctl status`: never a reason to fail `up`
            log.warning("could not record %s in %s: %s", self.dir, LAST_CLUSTER, e)
        return info

    def _refuse_if_running(self) -> None:
        if not self.exists():
            return
        try:
            info = self.info()
        except ClusterError:
            self.down()
            return
        running = [d.name for d in info.daemons if procs.owned(d.pid, _marker(d, self.dir))]
        if running:
            flag = "" if self.dir == DEFAULT_DIR else f" --dir {self.dir}"
            raise ClusterError(f"a cluster is already running in {self.dir} ({', '.join(running)}): "
                               f"run `yarnctl cluster down{flag}` first")
        self.down()

    def _clean_previous(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        for name in ("conf", "logs", "tmp", "staging", "history", "decisions.jsonl", "serve-status.json", STATE_FILE):
            p = self.dir / name
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()
        for p in self.dir.glob("nm-*"):
            shutil.rmtree(p, ignore_errors=True)

    def _start_serve(self, info: ClusterInfo, policy: str, port: int, extra: Sequence[str],
                     deadline: float) -> ClusterInfo:
        logs = self.dir / "logs"
        assert info.token_file and info.decision_log and info.status_file
        # through the daemon script, as the Docker image does; it execs this interpreter's yarnctl
        cmd = [str(self.daemon_script), "serve", "--policy", policy, "--port", str(port),
               "--token-file", str(info.token_file), "--decision-log", str(info.decision_log),
               "--status-file", str(info.status_file), "--rm", info.rm_url, *extra]
        self._say(f"starting the policy server: yarnctl serve --policy {policy} --port {port}")
        proc = procs.spawn(cmd, {**os.environ, "YARNCTL_PYTHON": sys.executable}, logs / "serve.log", cwd=self.dir)
        d = DaemonInfo("serve", proc.pid, logs / "serve.log", logs / "serve.log", "", {"py4j": port})
        info = dataclasses.replace(info, serve=d)
        self._save(info)
        t0 = time.monotonic()
        self._wait_until(proc, d, deadline, "listen on its port", lambda: is_listening("127.0.0.1", port), 0.2)
        self._say(f"  policy server listening on 127.0.0.1:{port} ({time.monotonic() - t0:.1f} s)")
        return info

    def _daemon_env(self, conf_dir: Path, cp_file: Path, java_home: str, name: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("CLASSPATH", "HADOOP_CONF_DIR", "JAVA_TOOL_OPTIONS")}
        env.update(HADOOP_CONF_DIR=str(conf_dir), YARNCTL_CLASSPATH_FILE=str(cp_file), JAVA_HOME=java_home,
                   YARNCTL_LOG_DIR=str(self.dir / "logs"), YARNCTL_DAEMON_NAME=name)
        return env

    def _start_rm(self, info: ClusterInfo, cp_file: Path, java_home: str, shim_jar: Path | None,
                  deadline: float) -> ClusterInfo:
        env = self._daemon_env(info.conf_dir, cp_file, java_home, "resourcemanager")
        if shim_jar:
            env["YARNCTL_SHIM_JAR"] = str(shim_jar)
            py4j = py4j_jar_if_needed(shim_jar)
            if py4j:
                env["YARNCTL_EXTRA_CLASSPATH"] = str(py4j)
        self._say(f"starting the resourcemanager ({info.scheduler_class.rsplit('.', 1)[1]})")
        t0 = time.monotonic()
        proc = procs.spawn([str(self.daemon_script), "resourcemanager"], env, info.rm.out, cwd=self.dir)
        info = dataclasses.replace(info, rm=dataclasses.replace(info.rm, pid=proc.pid))
        self._save(info)
        with closing(ResourceManager([info.rm_url], settings=PROBE)) as rm:
            self._wait_until(proc, info.rm, deadline, "serve its REST API",
                             lambda: rm.cluster_info().state == "STARTED")
        self._say(f"  resourcemanager up at {info.rm_url} ({time.monotonic() - t0:.1f} s)")
        return info

    def _start_history(self, info: ClusterInfo, cp_file: Path, java_home: str
                       ) -> tuple[ClusterInfo, subprocess.Popen[bytes]]:
        assert info.history is not None
        env = self._daemon_env(info.conf_dir, cp_file, java_home, "historyserver")
        env["YARNCTL_HEAP"] = "256m"
        self._say("starting the job history server")
        proc = procs.spawn([str(self.daemon_script), "historyserver"], env, info.history.out, cwd=self.dir)
        info = dataclasses.replace(info, history=dataclasses.replace(info.history, pid=proc.pid))
        self._save(info)
        return info, proc

    def _wait_history(self, info: ClusterInfo, proc: subprocess.Popen[bytes], deadline: float) -> None:
        assert info.history is not None
        with closing(HistoryServer(info.history.url, settings=PROBE)) as jhs:
            self._wait_until(proc, info.history, deadline, "serve its REST API",
                             lambda: jhs.info().started_on_ms > 0)
        self._say(f"  job history server up at {info.history.url}")

    def _start_nms(self, info: ClusterInfo, nms: list[NodeManagerConf], cp_file: Path, java_home: str,
                   deadline: float) -> ClusterInfo:
        self._say(f"starting {len(nms)} nodemanager{'s' if len(nms) > 1 else ''} "
                  f"({info.nm_memory_mb} MB, {info.nm_vcores} vcores each)")
        t0 = time.monotonic()
        started: list[tuple[subprocess.Popen[bytes], DaemonInfo]] = []
        logs = self.dir / "logs"
        for nm in nms:
            name = f"nodemanager-{nm.index}"
            env = self._daemon_env(nm.dir / "conf", cp_file, java_home, name)
            proc = procs.spawn([str(self.daemon_script), "nodemanager"], env, logs / f"{name}.out", cwd=nm.dir)
            d = DaemonInfo(name, proc.pid, logs / f"{name}.log", logs / f"{name}.out",
                           f"http://{info.rm_url.split('//')[1].split(':')[0]}:{nm.webapp_port}",
                           {"nm": nm.port, "localizer": nm.localizer_port, "webapp": nm.webapp_port,
                            "shuffle": nm.shuffle_port}, nm.dir)
            started.append((proc, d))
            info = dataclasses.replace(info, nodes=tuple(x for _, x in started))
            self._save(info)
        with closing(ResourceManager([info.rm_url], settings=PROBE)) as rm:
            self._wait_registered(rm, started, deadline)
        self._say(f"  {len(nms)} node{'s' if len(nms) > 1 else ''} RUNNING ({time.monotonic() - t0:.1f} s)")
        return info

    def _wait_registered(self, rm: ResourceManager, started: list[tuple[subprocess.Popen[bytes], DaemonInfo]],
                         deadline: float) -> None:
        """Poll the RM's nodes until every started NM is RUNNING; ClusterError like `_wait_until`."""
        want = {str(d.ports["nm"]) for _, d in started}
        running: set[str] = set()
        while True:
            for proc, d in started:
                self._check_alive(proc, d)
            try:
                running = {n.id.rsplit(":", 1)[-1] for n in rm.nodes(states=["RUNNING"])}
            except RMError:
                pass  # not answering yet
            if want <= running:
                return
            waiting = next(d for _, d in started if str(d.ports["nm"]) not in running)
            self._check_deadline(deadline, waiting, "register with the resourcemanager")
            time.sleep(0.5)

    def _wait_until(self, proc: subprocess.Popen[Any], d: DaemonInfo, deadline: float, what: str,
                    ready: Callable[[], bool], poll_s: float = 0.5) -> None:
        """Poll `ready` until true; ClusterError naming the log if `proc` dies or `deadline` passes."""
        while True:
            self._check_alive(proc, d)
            try:
                if ready():
                    return
            except RMError:
                pass  # not answering yet
            self._check_deadline(deadline, d, what)
            time.sleep(poll_s)

    def _check_alive(self, proc: subprocess.Popen[Any], d: DaemonInfo) -> None:
        rc = proc.poll()
        if rc is not None:
            raise ClusterError(f"{d.name} exited (code {rc}) while starting: {_reason(d)}; read {_log_to_read(d)}")

    def _check_deadline(self, deadline: float, d: DaemonInfo, what: str) -> None:
        if time.monotonic() > deadline:
            raise ClusterError(f"{d.name} did not {what} in time: {_reason(d)}; read {_log_to_read(d)}")

    def _save(self, info: ClusterInfo) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(info.to_json(), indent=1) + "\n")
        tmp.replace(self.state_file)

    @property
    def daemon_script(self) -> Path:
        return self.root / "docker" / "bin" / "yarnctl-daemon"

    # ------------------------------------------------------------------ down

    def down(self, grace_s: float = 15.0) -> DownReport:
        """Stop everything `up` started and every process still running under the cluster dir; idempotent."""
        stopped: list[str] = []
        forced: list[int] = []
        info: ClusterInfo | None = None
        if self.exists():
            try:
                info = self.info()
            except ClusterError as e:
                log.warning("%s", e)
        groups: list[tuple[DaemonInfo, ...]] = []
        if info is not None:
            groups = [info.nodes, (info.rm, *([info.history] if info.history else [])),
                      (info.serve,) if info.serve else ()]
        live = [[d for d in g if procs.owned(d.pid, _marker(d, self.dir))] for g in groups]
        daemon_pids = {d.pid for g in groups for d in g}
        # Containers (and clients) go first, with the NMs frozen so that they launch nothing new
        # (e.g. a second AM attempt). Then the NMs, while the RM is still up for them to
        # unregister from (with the RM gone they retry for minutes), then the RM and the rest.
        # A NodeManager stopping on SIGTERM does try to kill its containers, but here they
        # outlived it, and it waited for them first.
        nm_pids = [d.pid for d in (live[0] if live else [])]
        procs.pause(nm_pids)
        strays: list[int] = []
        try:
            if self.dir.is_dir():
                strays = [p for p in procs.processes_under(self.dir, *_stray_patterns(self.dir))
                          if p not in daemon_pids]
                forced += procs.terminate(strays, grace_s=3.0, groups=False)
        finally:
            procs.resume(nm_pids)
        for i, group in enumerate(live):
            t0 = time.monotonic()
            stopped += [d.name for d in group]
            # NMs hold nothing worth a long wait (no recovery): after they have unregistered and
            # cleaned up, their JVMs can linger for seconds in cleanUpApplicationsOnNMShutDown
            forced += procs.terminate([d.pid for d in group], grace_s=min(grace_s, 6.0) if i == 0 else grace_s)
            log.debug("stopped %s in %.1f s", [d.name for d in group], time.monotonic() - t0)
        if self.dir.is_dir():  # anything started meanwhile, or missed
            late = [p for p in procs.processes_under(self.dir, *_stray_patterns(self.dir)) if p not in daemon_pids]
            if late:
                forced += procs.terminate(late, grace_s=5.0, groups=False)
                strays += late
        if self.state_file.exists():
            self.state_file.unlink()
        try:
            if LAST_CLUSTER.read_text().strip() == str(self.dir):
                LAST_CLUSTER.unlink()
        except OSError:
            pass  # no pointer, or another cluster's
        return DownReport(tuple(stopped), tuple(sorted(set(strays))), tuple(forced))

    # ------------------------------------------------------------------ status

    def processes(self) -> list[dict[str, Any]]:
        """Each daemon `up` started: name, pid, whether it still runs, and its log."""
        return [{"name": d.name, "pid": d.pid, "alive": procs.owned(d.pid, _marker(d, self.dir)), "log": str(d.log)}
                for d in self.info().daemons]

    def running(self) -> bool:
        """True when `up` recorded a cluster here and its ResourceManager process still runs."""
        try:
            info = self.info()
        except ClusterError:
            return False
        return procs.owned(info.rm.pid, _marker(info.rm, self.dir))

    def status(self) -> dict[str, Any]:
        """Processes, RM state, nodes, apps and the policy server's stats, as one JSON-able dict."""
        info = self.info()
        out: dict[str, Any] = {
            "dir": str(info.dir), "rm_url": info.rm_url, "scheduler": info.scheduler_class,
            "policy": info.policy, "native": info.native, "started_at": info.started_at,
            "processes": self.processes(),
            "rm": None, "nodes": [], "apps": None, "serve_status": None,
        }
        with closing(ResourceManager([info.rm_url], settings=PROBE)) as rm:
            out.update(_rm_status(rm))
            out["shim"] = _shim_status(rm) if info.policy else None
        if info.status_file and info.status_file.is_file():
            try:
                out["serve_status"] = json.loads(info.status_file.read_text())
            except (OSError, ValueError) as e:
                out["serve_status"] = {"error": f"{info.status_file}: {e}"}
        return out

    # ------------------------------------------------------------------ clients

    def env(self) -> dict[str, str]:
        """Environment for a plain `java` client: HADOOP_CONF_DIR, CLASSPATH, JAVA_HOME and the JVM flags."""
        info = self.info()
        jars = info.classpath_file.read_text().strip()
        return {"HADOOP_CONF_DIR": str(info.conf_dir), "CLASSPATH": f"{info.conf_dir}{os.pathsep}{jars}",
                "JAVA_HOME": info.java_home, "YARNCTL_JAVA_OPTS": " ".join(JAVA_FLAGS),
                **{f"YARNCTL_{k.upper().replace('-', '_')}_JAR": str(v) for k, v in info.jars.items()}}

    def client_command(self, args: Sequence[str], main_class: str | None = None, heap: str = "512m") -> list[str]:
        """The java command line `run` uses: JDK 17 flags, conf dir first on the classpath."""
        info = self.info()
        main = MAIN_CLASSES.get(main_class or "examples", main_class or "")
        args = list(args)
        if main == MAIN_CLASSES["dshell"]:
            if "-jar" not in args and "distributedshell" in info.jars:
                args = ["-jar", str(info.jars["distributedshell"]), *args]
            if "-master_memory" not in args:
                # the client's default AM size is 10 MB, i.e. -Xmx10m: the AM dies of OutOfMemoryError
                args += ["-master_memory", "256"]
        env = self.env()
        # -Dyarnctl.cluster.dir marks the client as this cluster's: `down` stops it too
        return [f"{info.java_home}/bin/java", f"-Xmx{heap}", *JAVA_FLAGS, "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true", f"-Dyarnctl.cluster.dir={info.dir}",
                "-classpath", env["CLASSPATH"], main, *args]

    def run(self, args: Sequence[str], main_class: str | None = None, *, timeout: float | None = None,
            capture: bool = True, cwd: Path | str | None = None) -> subprocess.CompletedProcess[str]:
        """Run a client program against the cluster (default the MapReduce examples driver).

        `main_class` is a class name or an alias: examples, sleep (SleepJob), dshell (distributed
        shell Client, `-jar` added). With `capture`, stdout/stderr come back as text; the Hadoop
        client logs (application ids, progress) are on stderr: see `app_ids()`.
        """
        cmd = self.client_command(args, main_class)
        env = {k: v for k, v in os.environ.items() if k not in ("CLASSPATH", "JAVA_TOOL_OPTIONS")}
        env.update(HADOOP_CONF_DIR=str(self.info().conf_dir), JAVA_HOME=self.info().java_home)
        try:
            return subprocess.run(cmd, env=env, cwd=cwd, timeout=timeout, text=True,
                                  stdout=subprocess.PIPE if capture else None,
                                  stderr=subprocess.PIPE if capture else None)
        except subprocess.TimeoutExpired:
            raise ClusterError(f"client {cmd[-len(args) - 1] if args else cmd[-1]} did not finish in {timeout} s") from None

    def wait_app(self, app_id: str, timeout_s: float = 300.0, poll_s: float = 1.0) -> AppInfo:
        """Poll /ws/v1/cluster/apps/{id} until FINISHED, FAILED or KILLED; return the RM's record of the app."""
        deadline = time.monotonic() + timeout_s
        with closing(self.rm(PROBE)) as rm:
            while True:
                app: AppInfo | None = None
                try:
                    app = rm.app(app_id)
                except RMError:
                    pass  # not known yet, or the RM did not answer this time
                if app is not None and app.state in TERMINAL_STATES:
                    return app
                if time.monotonic() > deadline:
                    raise ClusterError(f"{app_id} still {app.state if app else 'unknown'} after {timeout_s:.0f} s")
                time.sleep(poll_s)


def find_running(cwd: Path | None = None) -> LocalCluster | None:
    """The local cluster a command run here most likely means, if one runs; None otherwise.

    In order: $YARNCTL_CLUSTER_DIR, the current directory (a `--dir` cluster's own), the cluster
    `up` started last, the default directory.
    """
    candidates = [os.environ.get("YARNCTL_CLUSTER_DIR"), str(cwd or Path.cwd())]
    try:
        candidates.append(LAST_CLUSTER.read_text().strip())
    except OSError:
        pass  # no cluster started yet, or the pointer is unreadable: the default dir is still tried
    candidates.append(str(DEFAULT_DIR))
    for d in dict.fromkeys(c for c in candidates if c):
        cluster = LocalCluster(d)
        if cluster.running():
            return cluster
    return None


def _rm_status(rm: ResourceManager) -> dict[str, Any]:
    """The RM's part of `status` (rm, apps, resources, nodes, running_apps), or rm_error; Hadoop's key names."""
    try:
        cluster, metrics = rm.cluster_info(), rm.metrics()
        nodes, apps = rm.nodes(), rm.apps(states=UNFINISHED_STATES)
    except RMError as e:
        return {"rm_error": str(e)}
    rm_doc = {"id": cluster.id, "startedOn": cluster.started_on_ms, "state": cluster.state,
              "haState": cluster.ha_state, "rmStateStoreName": cluster.rm_state_store,
              "resourceManagerVersion": cluster.rm_version, "hadoopVersion": cluster.hadoop_version,
              "haZooKeeperConnectionState": cluster.ha_zookeeper_state}
    running = [{"id": a.id, "name": a.name, "state": a.state, "progress": a.progress} for a in apps]
    return {"rm": rm_doc, "nodes": [_node_status(n) for n in nodes], "apps": _app_counts(metrics),
            "resources": _resources(metrics), "running_apps": running}


def _app_counts(m: ClusterMetrics) -> dict[str, int]:
    return {"appsSubmitted": m.apps_submitted, "appsPending": m.apps_pending, "appsRunning": m.apps_running,
            "appsCompleted": m.apps_completed, "appsFailed": m.apps_failed, "appsKilled": m.apps_killed}


def _resources(m: ClusterMetrics) -> dict[str, int]:
    return {"allocatedMB": m.allocated.memory_mb, "availableMB": m.available.memory_mb,
            "totalMB": m.total.memory_mb, "allocatedVirtualCores": m.allocated.vcores,
            "availableVirtualCores": m.available.vcores, "totalVirtualCores": m.total.vcores,
            "containersAllocated": m.containers_allocated}


def _node_status(n: NodeReport) -> dict[str, Any]:
    return {"id": n.id, "state": n.state, "http": n.http_address, "containers": n.num_containers,
            "used_mb": n.used.memory_mb, "avail_mb": n.available.memory_mb, "used_vcores": n.used.vcores,
            "avail_vcores": n.available.vcores}


def _shim_status(rm: ResourceManager) -> dict[str, Any] | None:
    """The shim's counters under the bean's attribute names (Delegated, FallbackTimeout...), or the error."""
    try:
        m = rm.shim_metrics()
    except RMError as e:
        return {"error": str(e)}
    return None if m is None else _bean_names(m)


def _bean_names(m: ShimMetrics) -> dict[str, Any]:
    # every ShimMetrics field is its JMX attribute in snake_case: full_syncs <- FullSyncs
    return {"".join(w.capitalize() for w in k.split("_")): v for k, v in dataclasses.asdict(m).items()}


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


def _marker(d: DaemonInfo, cluster_dir: Path) -> str:
    # what must appear in the process's command line for it to still be ours: daemons carry
    # -Dhadoop.log.dir=<dir>/logs, the policy server --decision-log <dir>/decisions.jsonl
    return str(cluster_dir)


def _stray_patterns(cluster_dir: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # (cwd prefixes under the cluster dir, command-line markers) of processes `down` must not leave:
    # containers work in nm-<i>/local/...; daemons and container JVMs name their log dirs. Narrow on
    # purpose: a person's shell sitting in <dir>/logs or a `tail -f <dir>/logs/x` is left alone.
    d = str(cluster_dir.resolve())
    return (("nm-*",), (f"-Dhadoop.log.dir={d}/", f"-Dyarn.app.container.log.dir={d}/",
                        f"--decision-log {d}/", f"-Dyarnctl.cluster.dir={d} "))


def _log_to_read(d: DaemonInfo) -> Path:
    try:
        if d.log.stat().st_size > 0 and not _fatal_line(d.out):
            return d.log
    except OSError:
        pass
    return d.out


def _fatal_line(path: Path) -> str:
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


def _reason(d: DaemonInfo) -> str:
    line = _fatal_line(d.log) or _fatal_line(d.out)
    if not line:
        return "no error logged"
    line = re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ", "", line)
    return line[:240]


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, Path):
        return str(v)
    return v
