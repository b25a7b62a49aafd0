"""Run Hadoop 2.7.7's Scheduler Load Simulator once, under a stock scheduler or the shim with a policy."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yarnctl.bridge.server import load_token
from yarnctl.cluster import classpath as cp
from yarnctl.cluster import procs
from yarnctl.cluster.local import find_java_home, py4j_jar_if_needed
from yarnctl.cluster.ports import free_ports, is_listening
from yarnctl.errors import ClusterError
from yarnctl.sls.conf import SlsConf, scheduler_class, write_conf_dir

Say = Callable[[str], None]

NATIVE_PREFIX = "native-"
SLS_MAIN = "org.apache.hadoop.yarn.sls.SLSRunner"
# JDK 17: Guice/cglib in the RM web app needs java.lang opened; Hadoop's SecurityUtil reads
# sun.net.dns.ResolverConfiguration (IllegalAccessError at RM init without the export)
JAVA_FLAGS = ("-XX:+IgnoreUnrecognizedVMOptions", "--add-opens=java.base/java.lang=ALL-UNNAMED",
              "--add-exports=java.base/sun.net.dns=ALL-UNNAMED", "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
              "-Duser.timezone=UTC", "-Djava.net.preferIPv4Stack=true", "-XX:+UseSerialGC")


@dataclass(frozen=True, slots=True)
class SlsRunFiles:
    """Where one run's inputs and outputs live (all under its work dir)."""

    work: Path
    conf: Path
    output: Path           # SLSRunner -output: jobruntime.csv, realtimetrack.json, metrics/
    log: Path              # the SLS JVM's stdout+stderr: the RM's INFO log
    serve_log: Path | None
    serve_status: Path | None


@dataclass(frozen=True, slots=True)
class SlsRunInfo:
    """What was run and how long it took."""

    label: str
    scheduler_class: str
    policy: str | None
    files: SlsRunFiles
    wall_s: float
    conf: SlsConf
    timed_out: bool = False  # stopped at the timeout: the jobs SLS had not finished are reported unfinished


def scheduler_of(label: str) -> tuple[str | None, str | None]:
    """(stock scheduler, shim policy) for a label like `native-fifo` or `haste`."""
    return (label[len(NATIVE_PREFIX):], None) if label.startswith(NATIVE_PREFIX) else (None, label)


def check_labels(labels: Sequence[str], queues: bool = False) -> None:
    """Refuse unknown schedulers and policies, and stock ones a queue tree means nothing to, before anything starts."""
    from yarnctl.cluster.conf import NATIVE_SCHEDULERS
    from yarnctl.policies import REGISTRY

    if not labels:
        raise ClusterError("--scheduler: give at least one scheduler, e.g. native-fifo,fifo")
    if len(set(labels)) != len(labels):
        raise ClusterError(f"--scheduler: {','.join(labels)} lists a scheduler twice")
    natives = ", ".join(NATIVE_PREFIX + n for n in NATIVE_SCHEDULERS)
    for label in labels:
        native, policy = scheduler_of(label)
        if native is not None and native not in NATIVE_SCHEDULERS:
            raise ClusterError(f"unknown stock scheduler {label!r}; valid: {natives}")
        if policy is not None and policy not in REGISTRY:
            raise ClusterError(f"unknown policy {policy!r}; valid: {natives} or a policy: {', '.join(sorted(REGISTRY))}")
        if queues and native not in (None, "capacity"):
            raise ClusterError(f"{label}: --capacity-scheduler gives a CapacityScheduler queue tree; run "
                               f"{NATIVE_PREFIX}capacity or a policy (the shim on CapacityScheduler)")


def resolve_jars(root: Path | None = None, say: Say | None = None) -> tuple[list[str], Path]:
    """hadoop-sls 2.7.7 and its runtime jars (java-bridge/sls/pom.xml), resolved by Maven once and cached."""
    root = root or cp.repo_root()
    return cp.resolve_classpath(root / "java-bridge" / "sls" / "pom.xml", progress=say)


def run_once(trace: Path, label: str, work: Path, *, nodes_file: Path | None = None, nm_memory_mb: int = 4096,
             nm_vcores: int = 4, container_memory_mb: int = 1024, container_vcores: int = 1,
             serve_args: Sequence[str] = (), timeout_s: float = 600.0, timer_window: int = 100_000,
             capacity_site: str | None = None, say: Say = lambda s: None) -> SlsRunInfo:
    """Run SLSRunner on `trace` under `label` in `work` (emptied first); ClusterError naming the log on failure.

    `capacity_site` (a capacity-scheduler.xml's text) gives the RM a queue tree: stock CapacityScheduler
    reads it, and the shim then runs on CapacityScheduler, so its policy sees the tree.
    """
    native, policy = scheduler_of(label)
    jars, _ = resolve_jars(say=say)
    shim_jar = cp.ensure_shim_jar(progress=say) if policy else None
    java = Path(find_java_home()) / "bin" / "java"
    if work.exists():
        for p in ("conf", "output", "sls.log", "serve.log", "serve-status.json", "decisions.jsonl", "bridge.token"):
            _remove(work / p)
    work.mkdir(parents=True, exist_ok=True)
    ports = free_ports(7)
    rm_ports = dict(zip(("rm", "scheduler", "tracker", "admin", "webapp"), ports[:5]))
    token = work / "bridge.token"
    shim = {"yarnctl.shim.enabled": "true", "yarnctl.shim.address": "127.0.0.1",
            "yarnctl.shim.port": str(ports[6]), "yarnctl.shim.token-file": str(token)} if policy else {}
    conf = SlsConf(scheduler_class(native, "capacity" if capacity_site is not None else "fifo"), rm_ports, ports[5],
                   nm_memory_mb, nm_vcores, container_memory_mb, container_vcores, timer_window=timer_window, shim=shim,
                   capacity_site=capacity_site)
    files = SlsRunFiles(work, write_conf_dir(work / "conf", conf), work / "output", work / "sls.log",
                        work / "serve.log" if policy else None, work / "serve-status.json" if policy else None)
    files.output.mkdir()
    classpath = [str(files.conf), *jars]
    serve = None
    started = time.monotonic()
    try:
        if policy:
            assert shim_jar is not None and files.serve_log is not None and files.serve_status is not None
            classpath.append(str(shim_jar))
            py4j = py4j_jar_if_needed(shim_jar)
            if py4j:
                classpath.append(str(py4j))
            load_token(token)
            serve = _start_serve(policy, ports[6], token, work, files.serve_log, files.serve_status, serve_args, say)
        cmd = [str(java), "-Xmx768m", *JAVA_FLAGS, "-cp", os.pathsep.join(classpath), SLS_MAIN,
               "-inputsls", str(trace.resolve()), "-output", str(files.output)]
        if nodes_file is not None:
            cmd += ["-nodes", str(nodes_file.resolve())]
        say(f"{label}: running SLS ({conf.scheduler_class.rsplit('.', 1)[1]}{', policy ' + policy if policy else ''}); "
            f"it replays the trace in wall-clock time")
        finished = _run_java(cmd, files.log, work, timeout_s, label)
    finally:
        if serve is not None:
            _stop(serve)
    if not finished:
        say(f"{label}: SLS did not finish within {timeout_s:.0f} s and was stopped; its unfinished jobs are "
            f"reported as such (read {files.log})")
    return SlsRunInfo(label, conf.scheduler_class, policy, files, time.monotonic() - started, conf, not finished)


def _remove(p: Path) -> None:
    if p.is_dir():
        shutil.rmtree(p, ignore_errors=True)
    elif p.exists():
        p.unlink()


def _start_serve(policy: str, port: int, token: Path, work: Path, log: Path, status: Path, extra: Sequence[str],
                 say: Say) -> subprocess.Popen[bytes]:
    # no --rm: under SLS the RM's /ws/v1/cluster/apps answers HTTP 500 (ResourceSchedulerWrapper keeps no
    # applications map), so a control loop would only ever be stale
    cmd = [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", policy, "--port", str(port),
           "--token-file", str(token), "--decision-log", str(work / "decisions.jsonl"), "--status-file", str(status),
           "--no-state-file", *extra]
    proc = procs.spawn(cmd, os.environ, log, cwd=work)
    deadline = time.monotonic() + 30
    while not is_listening("127.0.0.1", port):
        if proc.poll() is not None:
            raise ClusterError(f"yarnctl serve --policy {policy} exited (code {proc.returncode}): "
                               f"{_last_error(log) or 'no error logged'}; read {log}")
        if time.monotonic() > deadline:
            _stop(proc)
            raise ClusterError(f"yarnctl serve --policy {policy} did not listen on {port} within 30 s; read {log}")
        time.sleep(0.2)
    say(f"  policy server {policy} listening on 127.0.0.1:{port}")
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _run_java(cmd: list[str], log: Path, work: Path, timeout_s: float, label: str) -> bool:
    """Run SLS to its end (True) or to the timeout (False); ClusterError when it fails."""
    env = procs.java_env()
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=work,
                                env=env, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return False
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    if rc != 0:
        raise ClusterError(f"{label}: SLS exited with code {rc}: {_last_error(log) or 'no error logged'}; read {log}")
    return True


def _last_error(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    for pattern in (r"\b(FATAL|ERROR)\b", r"(Exception|Error)\b"):
        for line in reversed(lines):
            if re.search(pattern, line):
                return re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ", "", line.strip())[:240]
    return ""


def serve_status(path: Path | None) -> dict[str, Any]:
    """The policy server's last status file (calls, ok, errors, assigned, latency), {} when absent."""
    if path is None:
        return {}
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}
