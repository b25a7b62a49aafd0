"""A local Hadoop 2.7.7 cluster: one ResourceManager and N NodeManagers as separate JVMs on this host.

Everything lives in one directory (default ~/.yarnctl/cluster):

    cluster.json            what `up` started: pids, ports, dirs, URLs (read by status/down/run)
    conf/                   RM and client conf (HADOOP_CONF_DIR for `run`)
    nm-<i>/conf             NodeManager i's conf; nm-<i>/local, nm-<i>/logs: its containers
    logs/                   resourcemanager.log, nodemanager-<i>.log, *.out (JVM stdout/stderr), serve.log
    decisions.jsonl         the policy server's decision log (shim on)
    serve-status.json       the policy server's stats (shim on)
    policy-state.json       a stateful policy's saved history (H-MRF), kept across `restart-serve`
    rm-state/               the RM's state store (`up --recovery`)

Daemons start through docker/bin/yarnctl-daemon (the same script a Docker image runs), each in its
own session so they outlive the command that started them.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from yarnctl.cluster import classpath as cp
from yarnctl.cluster import procs
from yarnctl.cluster.daemons import app_ids, find_java_home, marker, py4j_jar_if_needed, stray_patterns
from yarnctl.cluster.info import (
    DEFAULT_DIR, DEFAULT_TOKEN_FILE, JAVA_FLAGS, LAST_CLUSTER, MAIN_CLASSES, PROBE, STATE_FILE, TERMINAL_STATES,
    ClusterInfo, DaemonInfo, DownReport,
)
from yarnctl.cluster.rmstatus import UNFINISHED_STATES, rm_status, shim_status
from yarnctl.cluster.start import HDFS_DIR, Startup, serve_files

AT_TIME = "io.yarnctl.bench.AtTime"  # runs a client's main at a given instant (java-bridge)
from yarnctl.errors import ClusterError, RMError
from yarnctl.rm import AppInfo, HttpSettings, ResourceManager

__all__ = ["DEFAULT_DIR", "DEFAULT_TOKEN_FILE", "HDFS_DIR", "LAST_CLUSTER", "PROBE", "TERMINAL_STATES", "UNFINISHED_STATES",
           "ClusterInfo", "DaemonInfo", "DownReport", "LocalCluster", "app_ids", "find_java_home", "find_running",
           "py4j_jar_if_needed"]

Progress = Callable[[str], None]

log = logging.getLogger(__name__)



class LocalCluster(Startup):
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
        return ResourceManager(self.info().rm_urls, settings=settings)

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
            # ZooKeeper last: RMs stopping under HA still talk to it; HDFS after YARN, whose daemons write to it
            groups = [info.nodes, (*info.rms, *([info.history] if info.history else [])),
                      tuple(d for d in (info.serve, info.serve2) if d), (*info.datanodes,),
                      (info.namenode,) if info.namenode else (), (info.zookeeper,) if info.zookeeper else ()]
        live = [[d for d in g if procs.owned(d.pid, marker(d, self.dir))] for g in groups]
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
                strays = [p for p in procs.processes_under(self.dir, *stray_patterns(self.dir))
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
            late = [p for p in procs.processes_under(self.dir, *stray_patterns(self.dir)) if p not in daemon_pids]
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
        return [{"name": d.name, "pid": d.pid, "alive": procs.owned(d.pid, marker(d, self.dir)), "log": str(d.log)}
                for d in self.info().daemons]

    def running(self) -> bool:
        """True when `up` recorded a cluster here and one of its ResourceManager processes still runs."""
        try:
            info = self.info()
        except ClusterError:
            return False
        return any(procs.owned(d.pid, marker(d, self.dir)) for d in info.rms)

    def status(self) -> dict[str, Any]:
        """Processes, RM state, nodes, apps and the policy server's stats, as one JSON-able dict."""
        info = self.info()
        out: dict[str, Any] = {
            "dir": str(info.dir), "rm_url": info.rm_url, "rm_urls": info.rm_urls, "scheduler": info.scheduler_class,
            "policy": info.policy, "native": info.native, "started_at": info.started_at,
            "processes": self.processes(),
            "rm": None, "nodes": [], "apps": None, "serve_status": None,
        }
        with closing(ResourceManager(info.rm_urls, settings=PROBE)) as rm:
            out.update(rm_status(rm))
            out["shim"] = shim_status(rm) if info.policy else None
            if info.rm2 is not None:
                out["ha_states"] = self.ha_states(info)
        status_file = self.active_status_file()
        if status_file and status_file.is_file():
            try:
                out["serve_status"] = json.loads(status_file.read_text())
            except (OSError, ValueError) as e:
                out["serve_status"] = {"error": f"{status_file}: {e}"}
        return out

    def active_status_file(self) -> Path | None:
        """The status file of the policy server beside the active RM (rm1's when none is known); None without the shim."""
        info = self.info()
        if not info.policy:
            return None
        rm_id = "rm1"
        if info.rm2 is not None:
            try:
                rm_id = self.active_rm()
            except ClusterError:
                pass  # mid-failover: rm1's file says at least what it last saw
        return serve_files(info.dir, rm_id)["status"]

    # ------------------------------------------------------------------ clients

    def env(self) -> dict[str, str]:
        """Environment for a plain `java` client: HADOOP_CONF_DIR, CLASSPATH, JAVA_HOME and the JVM flags."""
        info = self.info()
        jars = info.classpath_file.read_text().strip()
        return {"HADOOP_CONF_DIR": str(info.conf_dir), "CLASSPATH": f"{info.conf_dir}{os.pathsep}{jars}",
                "JAVA_HOME": info.java_home, "YARNCTL_JAVA_OPTS": " ".join(JAVA_FLAGS),
                **{f"YARNCTL_{k.upper().replace('-', '_')}_JAR": str(v) for k, v in info.jars.items()}}

    def client_command(self, args: Sequence[str], main_class: str | None = None, heap: str = "512m",
                       at_ms: int | None = None) -> list[str]:
        """The java command line `run` uses: JDK 17 flags, conf dir first on the classpath.

        With `at_ms` the JVM starts now but runs the main only at that epoch millisecond, warmed up
        (`io.yarnctl.bench.AtTime` from the shim jar, built if missing): a job submitted on a schedule.
        """
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
        classpath = env["CLASSPATH"]
        if at_ms is not None:
            classpath += os.pathsep + str(cp.ensure_shim_jar(self.root))
            main, args = AT_TIME, [str(at_ms), main, *args]
        # -Dyarnctl.cluster.dir marks the client as this cluster's: `down` stops it too
        return [f"{info.java_home}/bin/java", f"-Xmx{heap}", *JAVA_FLAGS, "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true", f"-Dyarnctl.cluster.dir={info.dir}",
                "-classpath", classpath, main, *args]

    def client_env(self) -> dict[str, str]:
        """The environment for a `client_command`: this one as `procs.java_env` cleans it, with the cluster's conf and JDK."""
        info = self.info()
        return procs.java_env(HADOOP_CONF_DIR=str(info.conf_dir), JAVA_HOME=info.java_home)

    def start_client(self, args: Sequence[str], main_class: str | None = None) -> subprocess.Popen[str]:
        """Start a client program in the background in the cluster's directory, its output (text) piped."""
        return subprocess.Popen(self.client_command(args, main_class), env=self.client_env(), text=True,
                                cwd=self.info().dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def run(self, args: Sequence[str], main_class: str | None = None, *, timeout: float | None = None,
            capture: bool = True, cwd: Path | str | None = None) -> subprocess.CompletedProcess[str]:
        """Run a client program against the cluster (default the MapReduce examples driver).

        `main_class` is a class name or an alias: examples, sleep (SleepJob), dshell (distributed
        shell Client, `-jar` added). With `capture`, stdout/stderr come back as text; the Hadoop
        client logs (application ids, progress) are on stderr: see `app_ids()`.
        """
        cmd = self.client_command(args, main_class)
        env = self.client_env()
        try:
            return subprocess.run(cmd, env=env, cwd=cwd, timeout=timeout, text=True,
                                  stdout=subprocess.PIPE if capture else None,
                                  stderr=subprocess.PIPE if capture else None)
        except subprocess.TimeoutExpired:
            raise ClusterError(f"client {cmd[-len(args) - 1] if args else cmd[-1]} did not finish in {timeout} s") from None

    def fs(self, *args: str, timeout: float = 120.0) -> str:
        """`hadoop fs ARGS` on the cluster's default file system; its output, or ClusterError with its last error line."""
        done = self.run(list(args), "fs", timeout=timeout)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ClusterError(f"hadoop fs {' '.join(args)}: exit {done.returncode}: {last}")
        return done.stdout

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
