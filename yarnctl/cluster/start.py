"""Starting a local cluster: the policy server, the ResourceManager, the JobHistoryServer, the NodeManagers."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yarnctl.bridge.control import accepts
from yarnctl.bridge.server import load_token
from yarnctl.cluster import classpath as cp
from yarnctl.cluster import procs
from yarnctl.cluster.conf import (
    NATIVE_SCHEDULERS, NM_MAIN, RM_ADDRESS_KEYS, SHIM_HOSTS, ClusterConf, NodeManagerConf, ha_site, hdfs_webapps,
    recovery_site, render_conf_dir,
)
from yarnctl.cluster.daemons import find_java_home, log_to_read, marker, py4j_jar_if_needed, reason
from yarnctl.cluster.home import write_hadoop_home
from yarnctl.cluster.info import (
    DEFAULT_DIR, DEFAULT_TOKEN_FILE, JARS, LAST_CLUSTER, PROBE, STATE_FILE, ClusterInfo, DaemonInfo, DownReport,
)
from yarnctl.cluster.ports import free_ports, is_listening
from yarnctl.errors import ClusterError, RMError
from yarnctl.rm import HdfsDaemon, HistoryServer, ResourceManager

log = logging.getLogger("yarnctl.cluster.local")

HDFS_DIR = "/yarnctl"  # on the local cluster's HDFS: MapReduce staging and job history
POLICY_STATE = "policy-state.json"  # a stateful policy's saved state (serve --state-file)
MAX_DEADLINE_MS = 60_000  # ShimConfig's bound for yarnctl.shim.deadline-ms
NM_REGISTERED = "Registered with ResourceManager as"  # NodeStatusUpdaterImpl.registerWithRM, once per registration


class Startup:
    """`LocalCluster.up` and the steps it takes; a part of LocalCluster (its state and paths live there)."""

    if TYPE_CHECKING:  # what LocalCluster provides
        dir: Path
        root: Path
        cache_dir: Path | None
        _say: Callable[[str], None]

        @property
        def state_file(self) -> Path: ...

        def exists(self) -> bool: ...

        def info(self) -> ClusterInfo: ...

        def down(self, grace_s: float = 15.0) -> DownReport: ...


    def up(self, *, nodes: int = 2, policy: str | None = "fifo", native: str | None = None,
           nm_memory_mb: int = 4096, nm_vcores: int = 4, deadline_ms: int | None = None,
           token_file: Path | None = None, heartbeat_ms: int = 1000, serve_args: Sequence[str] = (),
           timeout_s: float = 180.0, recovery: bool = False, ha: bool = False,
           yarn_site: Mapping[str, str] | None = None, shim_on: str = "fifo",
           capacity_site: Mapping[str, str] | None = None, hdfs: bool = False) -> ClusterInfo:
        """Start the policy server (shim on), the RM and `nodes` NMs; return once every NM is RUNNING.

        `native` (fifo|capacity|fair) runs a stock scheduler and no policy server; otherwise the shim
        runs `policy`. `recovery` turns on work-preserving RM restart (see `restart_rm`). `ha` starts
        ZooKeeper and two RMs (rm1, rm2), each with its own policy server, that elect the active one
        and share their state there (see `failover`). `yarn_site` properties go into every conf dir
        last, `capacity_site` ones into capacity-scheduler.xml. `shim_on` is the scheduler the shim
        extends: fifo, or capacity (the queue tree of capacity-scheduler.xml). `hdfs` starts a NameNode and a
        DataNode beside each NodeManager, jobs' default file system; each NM and its DataNode then go by a
        loopback address of their own (127.0.1.<i+1>), so that a block's location names one YARN node and
        data-local, rack-local and off-switch mean what they do on a real cluster. On any failure everything
        started so far is stopped and ClusterError names the log to read.
        """
        if nodes < 1:
            raise ClusterError(f"--nodes must be at least 1, got {nodes}")
        if native is not None and native not in NATIVE_SCHEDULERS:
            raise ClusterError(f"unknown native scheduler {native!r}; valid: {', '.join(NATIVE_SCHEDULERS)}")
        if shim_on not in SHIM_HOSTS:
            raise ClusterError(f"unknown shim host {shim_on!r}; valid: {', '.join(SHIM_HOSTS)}")
        if native is None and not policy:
            raise ClusterError("give a policy for the shim (--policy) or a stock scheduler (--native)")
        if hdfs and nodes > 254:
            raise ClusterError(f"--nodes {nodes}: with HDFS each node needs a loopback address 127.0.1.N (at most 254)")
        if nm_memory_mb < 1024 or nm_vcores < 1:
            raise ClusterError("a NodeManager needs at least 1024 MB and 1 vcore")
        if heartbeat_ms < 1:  # the RM refuses it at start, after the policy server is up
            raise ClusterError(f"--heartbeat-ms must be at least 1, got {heartbeat_ms}")
        if deadline_ms is not None and not 1 <= deadline_ms <= MAX_DEADLINE_MS:
            raise ClusterError(f"--deadline-ms must be in [1, {MAX_DEADLINE_MS}] (the shim's bounds), got {deadline_ms}")
        if not timeout_s > 0:
            raise ClusterError(f"--timeout must be > 0 seconds, got {timeout_s:g}")
        self._refuse_if_running()
        started = time.monotonic()
        shim = native is None
        jars, cp_file = cp.resolve_classpath(self.root / "java-bridge" / "cluster" / "pom.xml", self.cache_dir,
                                             progress=self._say)
        try:  # the RM's shim and the NodeManagers' resync mend (_nm_env) are both in the shim jar
            jar: Path | None = cp.ensure_shim_jar(self.root, progress=self._say)
        except ClusterError as e:
            if shim:
                raise
            jar = None
            log.warning("the NodeManagers run stock (Hadoop 2.7.7's resync race open): %s", e)
        shim_jar = jar if shim else None
        java_home = find_java_home()
        self._clean_previous()
        logs = self.dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)

        host = "127.0.0.1"
        ports = iter(free_ports(9 + 4 * nodes + (7 if ha else 0) + ((2 + 3 * nodes) if hdfs else 0), host))
        rm_ports = {k: next(ports) for k in RM_ADDRESS_KEYS}
        jhs_ports = {k: next(ports) for k in ("jhs", "webapp", "admin")}
        serve_port = next(ports)
        rm2_ports = {k: next(ports) for k in RM_ADDRESS_KEYS} if ha else {}
        serve2_port, zk_port = (next(ports), next(ports)) if ha else (0, 0)
        nm_confs = [NodeManagerConf(i, self.dir / f"nm-{i}", next(ports), next(ports), next(ports), next(ports))
                    for i in range(nodes)]
        nn_ports = {"rpc": next(ports), "webapp": next(ports)} if hdfs else {}
        if hdfs:
            nm_confs = [dataclasses.replace(nm, host=nm_address(nm.index), dn_ports=(next(ports), next(ports), next(ports)))
                        for nm in nm_confs]
        token = Path(token_file).expanduser() if token_file else DEFAULT_TOKEN_FILE
        shim_values = {"yarnctl.shim.enabled": "true", "yarnctl.shim.address": host,
                       "yarnctl.shim.port": str(serve_port), "yarnctl.shim.token-file": str(token)}
        if deadline_ms is not None:
            shim_values["yarnctl.shim.deadline-ms"] = str(deadline_ms)
        conf = ClusterConf(dir=self.dir, classpath=tuple(jars), host=host, rm_port=rm_ports["rm"],
                           rm_scheduler_port=rm_ports["scheduler"], rm_tracker_port=rm_ports["tracker"],
                           rm_admin_port=rm_ports["admin"], rm_webapp_port=rm_ports["webapp"],
                           nm_memory_mb=nm_memory_mb, nm_vcores=nm_vcores, nm_heartbeat_ms=heartbeat_ms,
                           native=native, shim=shim_values if shim else {}, shim_on=shim_on,
                           capacity_site=dict(capacity_site or {}), jhs_port=jhs_ports["jhs"],
                           jhs_webapp_port=jhs_ports["webapp"], jhs_admin_port=jhs_ports["admin"],
                           yarn_site={**(ha_site(host, zk_port, {"rm1": rm_ports, "rm2": rm2_ports}) if ha
                                         else recovery_site(self.dir) if recovery else {}), **(yarn_site or {})},
                           default_fs=f"hdfs://{host}:{nn_ports['rpc']}" if hdfs else "file:///",
                           # with HDFS, MapReduce staging and job history live on it, as in docker
                           fs_dir=HDFS_DIR if hdfs else None, nn_webapp_port=nn_ports.get("webapp", 50070),
                           hdfs_bind=host)
        templates = self.root / "hadoop-conf"
        # under HA each RM's own conf dir says which RM it is; the others say rm1, because Hadoop
        # (HAUtil.getRMHAId, in the NM too) refuses two RM addresses that are both local otherwise
        if ha:
            conf = _as_rm(conf, "rm1")
        conf_dir = render_conf_dir(templates, self.dir / "conf", conf)
        if ha:
            rm2_conf = dataclasses.replace(
                _as_rm(conf, "rm2"), rm_port=rm2_ports["rm"], rm_scheduler_port=rm2_ports["scheduler"],
                rm_tracker_port=rm2_ports["tracker"], rm_admin_port=rm2_ports["admin"],
                rm_webapp_port=rm2_ports["webapp"], shim={**conf.shim, "yarnctl.shim.port": str(serve2_port)})
            render_conf_dir(templates, self.dir / "rm2" / "conf", rm2_conf)
        for nm in nm_confs:
            render_conf_dir(templates, nm.dir / "conf", conf, nm)
            for sub in ("local", "logs"):
                (nm.dir / sub).mkdir(parents=True, exist_ok=True)
            if hdfs:
                hdfs_webapps(nm.dir / "conf")
        if hdfs:
            hdfs_webapps(conf_dir)

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
        if ha:
            rm2_url = f"http://{host}:{rm2_ports['webapp']}"
            info = dataclasses.replace(
                info, rm2=DaemonInfo("resourcemanager-rm2", 0, logs / "resourcemanager-rm2.log",
                                     logs / "resourcemanager-rm2.out", rm2_url, rm2_ports, self.dir / "rm2"),
                zookeeper=DaemonInfo("zookeeper", 0, logs / "zookeeper.log", logs / "zookeeper.out", "",
                                     {"client": zk_port}, self.dir / "zk"))
        if hdfs:
            info = dataclasses.replace(
                info, default_fs=conf.default_fs,
                namenode=DaemonInfo("namenode", 0, logs / "namenode.log", logs / "namenode.out",
                                    f"http://{host}:{nn_ports['webapp']}", nn_ports, self.dir / "dfs"),
                datanodes=tuple(DaemonInfo(f"datanode-{nm.index}", 0, logs / f"datanode-{nm.index}.log",
                                           logs / f"datanode-{nm.index}.out", f"http://{host}:{nm.dn_ports[2]}",
                                           dict(zip(("data", "ipc", "webapp"), nm.dn_ports)), nm.dir)
                                for nm in nm_confs if nm.dn_ports))
        write_hadoop_home(info.hadoop_home, cluster_dir=self.dir, conf_dir=conf_dir, classpath_file=cp_file,
                          java_home=java_home, jars=info.jars, bin_dir=self.daemon_script.parent)
        deadline = time.monotonic() + timeout_s
        try:
            if ha:
                info = self._start_zookeeper(info, cp_file, java_home, deadline)
            if shim:
                assert policy is not None
                load_token(token)  # creates it 0600, or refuses one others can read, before anything starts
                info = self._start_serve(info, policy, serve_port, serve_args, deadline)
                if ha:
                    info = self._start_serve(info, policy, serve2_port, _next_metrics_port(serve_args), deadline,
                                             rm_id="rm2")
            if hdfs:
                info = self._start_hdfs(info, cp_file, java_home, deadline)
            # the JobHistoryServer first: it always sleeps 10 s after creating its dirs
            # (HistoryFileManager.createHistoryDirs), so the RM and NMs start meanwhile
            info, jhs = self._start_history(info, cp_file, java_home)
            info = self._start_rm(info, cp_file, java_home, shim_jar, deadline)
            if ha:
                info = self._start_rm(info, cp_file, java_home, shim_jar, deadline, rm_id="rm2")
            info = self._start_nms(info, nm_confs, cp_file, java_home, deadline)
            if hdfs:
                self._wait_datanodes(info, deadline)
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

    def restart_rm(self, *, kill: bool = True, timeout_s: float = 180.0) -> ClusterInfo:
        """Stop the ResourceManager (SIGKILL by default: a crash) and start it again on its ports and conf.

        With `up(recovery=True)` running applications survive: the new RM reads them back from its
        state store and the NodeManagers re-register with their containers. Returns once every
        NodeManager is RUNNING again; ClusterError if the RM was not running or does not come back.
        """
        info = self.info()
        if not procs.owned(info.rm.pid, marker(info.rm, self.dir)):
            raise ClusterError(f"no resourcemanager of {self.dir} is running (pid {info.rm.pid}); nothing to restart")
        procs.stop([info.rm.pid], crash=kill)
        deadline = time.monotonic() + timeout_s
        info = self._start_rm(info, info.classpath_file, info.java_home, info.shim_jar, deadline)
        self._save(info)
        with closing(ResourceManager(info.rm_urls, settings=PROBE)) as rm:
            self._wait_registered(rm, [(None, d) for d in info.nodes], deadline)
        return info

    def failover(self, *, timeout_s: float = 180.0) -> tuple[str, ClusterInfo]:
        """RM HA: kill -9 the active RM, wait until the other is ACTIVE with every NM, start the killed one as standby.

        Returns the id of the RM that took over (rm1 or rm2); ClusterError on a cluster without HA,
        with no active RM, or when the standby does not take over in time.
        """
        info = self.info()
        if info.rm2 is None:
            raise ClusterError(f"the cluster in {self.dir} runs one ResourceManager: start it with `up --ha`")
        states = self.ha_states(info)
        active = [rm_id for rm_id, state in states.items() if state == "ACTIVE"]
        if len(active) != 1:
            raise ClusterError(f"no single active ResourceManager to fail over from: {states}")
        old = active[0]
        new = "rm2" if old == "rm1" else "rm1"
        victim, heir = (info.rm, info.rm2) if old == "rm1" else (info.rm2, info.rm)
        if not procs.owned(victim.pid, marker(victim, self.dir)):
            raise ClusterError(f"{victim.name} (pid {victim.pid}) is not this cluster's process; nothing killed")
        procs.kill([victim.pid])
        deadline = time.monotonic() + timeout_s
        with closing(ResourceManager([heir.url], settings=PROBE)) as rm:
            self._wait_until(None, heir, deadline, "become active", lambda: rm.cluster_info().ha_state == "ACTIVE")
        with closing(ResourceManager(info.rm_urls, settings=PROBE)) as rm:
            self._wait_registered(rm, [(None, d) for d in info.nodes], deadline)
        info = self._start_rm(info, info.classpath_file, info.java_home, info.shim_jar, deadline, rm_id=old)
        return new, info

    def active_rm(self) -> str:
        """Which RM is active ("rm1" or "rm2"; always "rm1" without HA); ClusterError when none says ACTIVE."""
        info = self.info()
        if info.rm2 is None:
            return "rm1"
        states = self.ha_states(info)
        for rm_id, state in states.items():
            if state == "ACTIVE":
                return rm_id
        raise ClusterError(f"no active ResourceManager: {states}")

    @staticmethod
    def ha_states(info: ClusterInfo) -> dict[str, str]:
        """Each RM's HA state by id ({"rm1": "ACTIVE", "rm2": "STANDBY"}), or why it could not be asked."""
        with closing(ResourceManager(info.rm_urls, settings=PROBE)) as rm:
            states = rm.ha_states()
        return {rm_id: states.get(url, "?") for rm_id, url in zip(("rm1", "rm2"), info.rm_urls)}

    def restart_nm(self, index: int, *, kill: bool = False, timeout_s: float = 180.0) -> ClusterInfo:
        """Stop NodeManager `index` (SIGTERM: it kills its containers; SIGKILL with `kill`) and start it again.

        Returns once the RM lists it RUNNING again; ClusterError for an unknown index or a node that does not come back.
        """
        info = self.info()
        if not 0 <= index < len(info.nodes):
            raise ClusterError(f"no nodemanager-{index}: the cluster has {len(info.nodes)} (0-{len(info.nodes) - 1})")
        old = info.nodes[index]
        if procs.owned(old.pid, marker(old, self.dir)):
            procs.stop([old.pid], crash=kill)
        assert old.dir is not None
        # a killed NM stays RUNNING at the RM until its successor registers: wait for that line in its log
        registered = _count(old.log, NM_REGISTERED)
        env = self._nm_env(old.dir / "conf", info.classpath_file, info.java_home, old.name)
        proc = procs.spawn([str(self.daemon_script), "nodemanager"], env, old.out, cwd=old.dir)
        new = dataclasses.replace(old, pid=proc.pid)
        info = dataclasses.replace(info, nodes=tuple(new if d is old else d for d in info.nodes))
        self._save(info)
        deadline = time.monotonic() + timeout_s
        self._wait_until(proc, new, deadline, "register with the resourcemanager again",
                         lambda: _count(old.log, NM_REGISTERED) > registered)
        with closing(ResourceManager(info.rm_urls, settings=PROBE)) as rm:
            self._wait_registered(rm, [(proc, new)], deadline)
        return info

    def restart_serve(self, *, kill: bool = True, timeout_s: float = 60.0) -> ClusterInfo:
        """Stop the policy server that decides (the active RM's, under HA; SIGKILL by default: a crash) and start it again.

        It restarts with the same arguments. Meanwhile the shim decides natively; once the new server
        listens, the shim's next call after its reconnect probe gets a resync and sends full state.
        ClusterError on a cluster without the shim.
        """
        info = self.info()
        if info.serve is None or info.policy is None:
            raise ClusterError(f"the cluster in {self.dir} runs a native scheduler: no policy server to restart")
        rm_id = self.active_rm()
        d = info.serve if rm_id == "rm1" else info.serve2
        assert d is not None
        if procs.owned(d.pid, marker(d, self.dir)):
            procs.stop([d.pid], crash=kill)
        args = info.serve_args if rm_id == "rm1" else _next_metrics_port(info.serve_args)
        return self._start_serve(info, info.policy, d.ports["py4j"], args, time.monotonic() + timeout_s, rm_id=rm_id)

    def _refuse_if_running(self) -> None:
        if not self.exists():
            return
        try:
            info = self.info()
        except ClusterError:
            self.down()
            return
        running = [d.name for d in info.daemons if procs.owned(d.pid, marker(d, self.dir))]
        if running:
            flag = "" if self.dir == DEFAULT_DIR else f" --dir {self.dir}"
            raise ClusterError(f"a cluster is already running in {self.dir} ({', '.join(running)}): "
                               f"run `yarnctl cluster down{flag}` first")
        self.down()

    def _clean_previous(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        extra = {str(p.relative_to(self.dir)) for p in serve_files(self.dir, "rm2").values()}
        for name in ("conf", "logs", "tmp", "staging", "history", "rm-state", "rm2", "zk", "state", "dfs", "decisions.jsonl",
                     "serve-status.json", POLICY_STATE, STATE_FILE, *extra):
            p = self.dir / name
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()
        for p in self.dir.glob("nm-*"):
            shutil.rmtree(p, ignore_errors=True)

    def _start_serve(self, info: ClusterInfo, policy: str, port: int, extra: Sequence[str],
                     deadline: float, rm_id: str = "rm1") -> ClusterInfo:
        logs = self.dir / "logs"
        assert info.token_file and info.decision_log and info.status_file
        files = serve_files(self.dir, rm_id)
        # through the daemon script, as the Docker image does; it execs this interpreter's yarnctl;
        # the control loop follows the active RM among all of them
        cmd = [str(self.daemon_script), "serve", "--policy", policy, "--port", str(port),
               "--token-file", str(info.token_file), "--decision-log", str(files["decisions"]),
               "--status-file", str(files["status"]), "--rm", ",".join(info.rm_urls), *extra]
        control = None
        if not {"--control-socket", "--no-control"} & set(extra):  # `yarnctl policy` finds it via the status file
            cmd += ["--control-socket", str(files["control"])]
            control = files["control"]
        if not {"--state-dir", "--no-state-file"} & set(extra):  # a policy swapped in keeps its history here, not in ~
            cmd += ["--state-dir", str(self.dir / "state")]
        if _stateful(policy) and not {"--state-file", "--no-state-file"} & set(extra):
            # the cluster's own history (H-MRF's accounting...), kept across restart_serve, gone with `down`
            cmd += ["--state-file", str(files["state"])]
        self._say(f"starting the policy server: yarnctl serve --policy {policy} --port {port}")
        name = "serve" if rm_id == "rm1" else f"serve-{rm_id}"
        proc = procs.spawn(cmd, {**os.environ, "YARNCTL_PYTHON": sys.executable}, logs / f"{name}.log", cwd=self.dir)
        d = DaemonInfo(name, proc.pid, logs / f"{name}.log", logs / f"{name}.log", "", {"py4j": port})
        info = (dataclasses.replace(info, serve=d, serve_args=tuple(extra)) if rm_id == "rm1"
                else dataclasses.replace(info, serve2=d))
        self._save(info)
        t0 = time.monotonic()
        self._wait_until(proc, d, deadline, "listen on its port", lambda: is_listening("127.0.0.1", port), 0.2)
        if control is not None:  # it opens after the port; `yarnctl policy` right after a restart-serve needs it
            self._wait_until(proc, d, deadline, "open its control socket", lambda: accepts(control, 0.2), 0.05)
        self._say(f"  policy server listening on 127.0.0.1:{port} ({time.monotonic() - t0:.1f} s)")
        return info

    def _daemon_env(self, conf_dir: Path, cp_file: Path, java_home: str, name: str) -> dict[str, str]:
        return procs.java_env(HADOOP_CONF_DIR=str(conf_dir), YARNCTL_CLASSPATH_FILE=str(cp_file), JAVA_HOME=java_home,
                              YARNCTL_LOG_DIR=str(self.dir / "logs"), YARNCTL_DAEMON_NAME=name)

    def _nm_env(self, conf_dir: Path, cp_file: Path, java_home: str, name: str) -> dict[str, str]:
        """A NodeManager's environment: with the shim jar built, Hadoop's NodeManager with its resync race closed."""
        env = self._daemon_env(conf_dir, cp_file, java_home, name)
        jar = cp.shim_jar_path(self.root)
        if not cp.shim_jar_stale(self.root):  # a jar older than the sources may predate io.yarnctl.nm
            # Hadoop 2.7.7 can lose an NM's heartbeat thread when it re-registers after an RM restart
            # (io.yarnctl.nm.ResyncSafeStatusUpdater; docs/cluster.md)
            env["YARNCTL_SHIM_JAR"] = str(jar)
            env["YARNCTL_NODEMANAGER_CLASS"] = NM_MAIN
        return env

    def _start_rm(self, info: ClusterInfo, cp_file: Path, java_home: str, shim_jar: Path | None,
                  deadline: float, rm_id: str = "rm1") -> ClusterInfo:
        d = info.rm if rm_id == "rm1" else info.rm2
        assert d is not None
        conf_dir = info.conf_dir if rm_id == "rm1" else d.dir / "conf" if d.dir else info.conf_dir
        env = self._daemon_env(conf_dir, cp_file, java_home, d.name)
        if shim_jar:
            env["YARNCTL_SHIM_JAR"] = str(shim_jar)
            py4j = py4j_jar_if_needed(shim_jar)
            if py4j:
                env["YARNCTL_EXTRA_CLASSPATH"] = str(py4j)
        which = "" if info.rm2 is None else f" {rm_id}"
        self._say(f"starting the resourcemanager{which} ({info.scheduler_class.rsplit('.', 1)[1]})")
        t0 = time.monotonic()
        proc = procs.spawn([str(self.daemon_script), "resourcemanager"], env, d.out, cwd=self.dir)
        d = dataclasses.replace(d, pid=proc.pid)
        info = dataclasses.replace(info, rm=d) if rm_id == "rm1" else dataclasses.replace(info, rm2=d)
        self._save(info)
        # a standby serves /ws/v1/cluster/info itself (state STARTED, haState STANDBY)
        with closing(ResourceManager([d.url], settings=PROBE)) as rm:
            self._wait_until(proc, d, deadline, "serve its REST API", lambda: rm.cluster_info().state == "STARTED")
        self._say(f"  resourcemanager{which} up at {d.url} ({time.monotonic() - t0:.1f} s)")
        return info

    def _start_zookeeper(self, info: ClusterInfo, cp_file: Path, java_home: str, deadline: float) -> ClusterInfo:
        zk = info.zookeeper
        assert zk is not None and zk.dir is not None
        port = zk.ports["client"]
        env = self._daemon_env(info.conf_dir, cp_file, java_home, zk.name)
        env["YARNCTL_HEAP"] = "128m"
        self._say(f"starting zookeeper on {port}")
        # tick 1000 ms: sessions of 2-20 s, so the RMs' 4 s session (HA_ZK_SESSION_MS) is allowed
        proc = procs.spawn([str(self.daemon_script), "zookeeper", str(port), str(zk.dir), "1000"], env, zk.out,
                           cwd=self.dir)
        info = dataclasses.replace(info, zookeeper=dataclasses.replace(zk, pid=proc.pid))
        self._save(info)
        self._wait_until(proc, zk, deadline, "listen on its port", lambda: is_listening("127.0.0.1", port), 0.2)
        return info

    def _start_hdfs(self, info: ClusterInfo, cp_file: Path, java_home: str, deadline: float) -> ClusterInfo:
        """Format and start the NameNode, then a DataNode in each NodeManager's conf dir (registered under its address)."""
        nn = info.namenode
        assert nn is not None and nn.dir is not None
        env = self._daemon_env(info.conf_dir, cp_file, java_home, nn.name)
        env["YARNCTL_HEAP"] = "256m"
        self._say(f"starting HDFS: a namenode and {len(info.datanodes)} datanode(s)")
        t0 = time.monotonic()
        fmt_out = self.dir / "logs" / "namenode-format.out"
        with fmt_out.open("wb") as out:
            try:
                fmt = subprocess.run([str(self.daemon_script), "namenode", "-format", "-nonInteractive", "-clusterId",
                                      "yarnctl"], env={**env, "YARNCTL_DAEMON_NAME": "namenode-format"}, cwd=self.dir,
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                     timeout=max(10.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise ClusterError(f"formatting HDFS in {nn.dir} did not finish in time; read {fmt_out}") from None
        if fmt.returncode != 0:
            raise ClusterError(f"formatting HDFS in {nn.dir} failed (exit {fmt.returncode}); read {fmt_out}")
        proc = procs.spawn([str(self.daemon_script), "namenode"], env, nn.out, cwd=self.dir)
        info = dataclasses.replace(info, namenode=dataclasses.replace(nn, pid=proc.pid))
        self._save(info)
        self._wait_until(proc, nn, deadline, "listen for clients", lambda: is_listening("127.0.0.1", nn.ports["rpc"]), 0.2)
        started: list[DaemonInfo] = []
        for dn in info.datanodes:
            assert dn.dir is not None
            env = self._daemon_env(dn.dir / "conf", cp_file, java_home, dn.name)
            env["YARNCTL_HEAP"] = "256m"
            started.append(dataclasses.replace(dn, pid=procs.spawn([str(self.daemon_script), "datanode"], env, dn.out,
                                                                   cwd=dn.dir).pid))
            # saved after each start: `down` after a failed one stops those already running
            info = dataclasses.replace(info, datanodes=(*started, *info.datanodes[len(started):]))
            self._save(info)
        self._say(f"  namenode up at {nn.url}, {info.default_fs} ({time.monotonic() - t0:.1f} s)")
        return info

    def _wait_datanodes(self, info: ClusterInfo, deadline: float) -> None:
        """Until the NameNode counts every DataNode live and is out of safe mode."""
        nn = info.namenode
        assert nn is not None
        t0 = time.monotonic()
        with closing(HdfsDaemon(nn.url, settings=PROBE)) as client:
            def ready() -> bool:
                for d in info.datanodes:
                    if not procs.alive(d.pid):
                        raise ClusterError(f"{d.name} (pid {d.pid}) exited: {reason(d)}; read {log_to_read(d)}")
                beans = client.jmx("Hadoop:service=NameNode,name=NameNodeInfo")
                if not beans:
                    return False
                doc = beans[0].attributes
                live = json.loads(str(doc.get("LiveNodes") or "{}"))
                return len(live) >= len(info.datanodes) and not doc.get("Safemode")
            self._wait_until(None, nn, deadline, "count every datanode live", ready)
        self._say(f"  {len(info.datanodes)} datanode(s) live ({time.monotonic() - t0:.1f} s)")

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
            env = self._nm_env(nm.dir / "conf", cp_file, java_home, name)
            proc = procs.spawn([str(self.daemon_script), "nodemanager"], env, logs / f"{name}.out", cwd=nm.dir)
            d = DaemonInfo(name, proc.pid, logs / f"{name}.log", logs / f"{name}.out",
                           f"http://{nm.host or info.rm_url.split('//')[1].split(':')[0]}:{nm.webapp_port}",
                           {"nm": nm.port, "localizer": nm.localizer_port, "webapp": nm.webapp_port,
                            "shuffle": nm.shuffle_port}, nm.dir)
            started.append((proc, d))
            info = dataclasses.replace(info, nodes=tuple(x for _, x in started))
            self._save(info)
        with closing(ResourceManager(info.rm_urls, settings=PROBE)) as rm:
            self._wait_registered(rm, started, deadline)
        self._say(f"  {len(nms)} node{'s' if len(nms) > 1 else ''} RUNNING ({time.monotonic() - t0:.1f} s)")
        return info

    def _wait_registered(self, rm: ResourceManager,
                         started: Sequence[tuple[subprocess.Popen[bytes] | None, DaemonInfo]], deadline: float) -> None:
        """Poll the RM's nodes until every NM is RUNNING; ClusterError like `_wait_until` (a None proc: not ours to watch)."""
        want = {str(d.ports["nm"]) for _, d in started}
        running: set[str] = set()
        while True:
            for proc, d in started:
                if proc is not None:
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

    def _wait_until(self, proc: subprocess.Popen[Any] | None, d: DaemonInfo, deadline: float, what: str,
                    ready: Callable[[], bool], poll_s: float = 0.5) -> None:
        """Poll `ready` until true; ClusterError naming the log if the daemon dies or `deadline` passes.

        `proc` None: a daemon this process did not start, watched by its pid.
        """
        while True:
            if proc is not None:
                self._check_alive(proc, d)
            elif not procs.alive(d.pid):
                raise ClusterError(f"{d.name} (pid {d.pid}) exited: {reason(d)}; read {log_to_read(d)}")
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
            raise ClusterError(f"{d.name} exited (code {rc}) while starting: {reason(d)}; read {log_to_read(d)}")

    def _check_deadline(self, deadline: float, d: DaemonInfo, what: str) -> None:
        if time.monotonic() > deadline:
            raise ClusterError(f"{d.name} did not {what} in time: {reason(d)}; read {log_to_read(d)}")

    def _save(self, info: ClusterInfo) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(info.to_json(), indent=1) + "\n")
        tmp.replace(self.state_file)

    @property
    def daemon_script(self) -> Path:
        """docker/bin/yarnctl-daemon, the start script every daemon goes through."""
        script: Path = self.root / "docker" / "bin" / "yarnctl-daemon"
        return script


def nm_address(index: int) -> str:
    """The loopback address NodeManager `index` and its DataNode go by when the local cluster runs HDFS."""
    return f"127.0.1.{index + 1}"


def _count(path: Path, needle: str) -> int:
    """How many times `needle` occurs in the file (0 when it does not exist yet)."""
    try:
        return path.read_text(errors="replace").count(needle)
    except OSError:
        return 0


def _stateful(policy: str) -> bool:
    """True when the named policy keeps a history `serve` saves (a class with save_state)."""
    from yarnctl.policies import REGISTRY

    return callable(getattr(REGISTRY.get(policy), "save_state", None))


def serve_files(cluster_dir: Path, rm_id: str) -> dict[str, Path]:
    """The decision log, status file, control socket and policy state of the policy server beside RM `rm_id`."""
    tag = "" if rm_id == "rm1" else f"-{rm_id}"
    # one policy state for both: the server that takes over decides on the history the other saved
    return {"decisions": cluster_dir / f"decisions{tag}.jsonl", "status": cluster_dir / f"serve-status{tag}.json",
            "control": cluster_dir / f"control{tag}.sock", "state": cluster_dir / POLICY_STATE}


def _as_rm(conf: ClusterConf, rm_id: str) -> ClusterConf:
    """The conf of RM `rm_id` under HA: yarn.resourcemanager.ha.id added."""
    return dataclasses.replace(conf, yarn_site={**conf.yarn_site, "yarn.resourcemanager.ha.id": rm_id})


def _next_metrics_port(serve_args: Sequence[str]) -> list[str]:
    """rm2's policy server arguments: `--metrics-port P` becomes P+1 (both servers run on this host)."""
    args = list(serve_args)
    for i, a in enumerate(args[:-1]):
        if a == "--metrics-port" and args[i + 1] != "0":  # 0: the OS picks, for both
            args[i + 1] = str(int(args[i + 1]) + 1)
    return args
