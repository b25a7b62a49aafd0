"""Helpers for the integration tests: the live cluster handle, its shim counters and decision logs, bench specs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from yarnctl.bench.spec import builtin_dir
from yarnctl.bridge.decisionlog import LogReader
from yarnctl.cluster.local import ClusterInfo, LocalCluster, app_ids
from yarnctl.rm import SHIM_BEAN, AppInfo, HttpSettings, ResourceManager, ShimMetrics

HERE = Path(__file__).parent
# generous: the test machine also runs the MR JVMs on 2 cores, and a burst of JVM starts can keep the policy
# server off the CPU for tens of ms; the live clusters of `make test` whose asserts count on Python deciding use it
DEADLINE_MS = 250


@dataclass
class Live:
    """The running cluster plus the policy server currently behind its shim."""

    lc: LocalCluster
    info: ClusterInfo
    serve: subprocess.Popen[str] | None = None
    decision_log: Path | None = None
    logs: list[Path] = field(default_factory=list)
    rm: ResourceManager = field(init=False)

    def __post_init__(self) -> None:
        self.rm = self.lc.rm(HttpSettings(read_timeout_s=10))

    @property
    def port(self) -> int:
        assert self.info.serve is not None
        return self.info.serve.ports["py4j"]

    def shim(self) -> ShimMetrics:
        """The shim's counters from the RM's /jmx."""
        counters = self.rm.shim_metrics()
        assert counters is not None, f"{SHIM_BEAN} is not registered: is the shim the RM's scheduler?"
        return counters

    def stop_serve(self, sig: int = signal.SIGTERM) -> None:
        """Stop whichever policy server is running (the cluster's own, or one a test started)."""
        if self.serve is None:
            assert self.info.serve is not None
            os.kill(self.info.serve.pid, sig)
            _wait_port_closed(self.port)
            return
        self.serve.send_signal(sig)
        self.serve.wait(timeout=30)
        self.serve = None

    def start_serve(self, mode: str) -> Path:
        """Start tests/integration/policy_server.py in `mode` on the shim's port; return its decision log."""
        assert self.info.token_file is not None
        log = self.info.dir / f"decisions-{mode}-{len(self.logs)}.jsonl"
        self.serve = subprocess.Popen([sys.executable, str(HERE / "policy_server.py"), mode, str(self.port),
                                       str(self.info.token_file), str(log)], stdout=subprocess.PIPE, text=True)
        assert self.serve.stdout is not None
        line = self.serve.stdout.readline()
        assert line.startswith("listening"), f"policy server did not start: {line!r}"
        self.logs.append(log)
        self.decision_log = log
        self.wait_delegating()
        return log

    def start_yarnctl_serve(self, args: list[str], log: Path, policy: str = "fifo") -> None:
        """Start the real `yarnctl serve --policy POLICY ARGS` on the shim's port, output to `log`."""
        assert self.info.token_file is not None
        with log.open("w") as out:
            self.serve = subprocess.Popen(
                [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", policy, "--port", str(self.port),
                 "--token-file", str(self.info.token_file), *args],
                stdout=out, stderr=subprocess.STDOUT, text=True)

    def wait_delegating(self, timeout_s: float = 20) -> None:
        """Wait until the shim has had an answer from the current server (its breaker probes every 5 s)."""
        before = self.shim().delegated
        deadline = time.monotonic() + timeout_s
        while True:
            if self.shim().delegated > before:  # an answer was applied: breaker closed, mirror synced
                return
            assert time.monotonic() < deadline, f"the shim did not delegate to the new server in {timeout_s} s"
            time.sleep(0.25)

    def records(self, log: Path | None = None) -> list[dict[str, Any]]:
        """Every call in a decision log (flushed at least once a second)."""
        return list(LogReader(log or self.decision_log or self.info.decision_log))  # type: ignore[arg-type]

    def run(self, args: list[str], main_class: str | None = None, timeout: float = 300) -> tuple[str, AppInfo]:
        """Run a client to completion; return its app id and the RM's final record of the app."""
        # in the cluster dir: pi writes its QuasiMonteCarlo_* scratch dir into the client's cwd
        done = self.lc.run(args, main_class, timeout=timeout, cwd=self.info.dir)
        ids = app_ids(done.stderr + done.stdout)
        assert ids, f"no application id in the client output:\n{done.stderr[-3000:]}"
        app = self.lc.wait_app(ids[-1], timeout_s=timeout)
        assert done.returncode == 0, f"client exit {done.returncode}:\n{done.stderr[-3000:]}"
        return ids[-1], app

    def start(self, args: list[str], main_class: str | None = None) -> subprocess.Popen[str]:
        """Start a client in the background."""
        return self.lc.start_client(args, main_class)


def wait_until(what: str, check: Any, timeout_s: float = 60.0) -> Any:
    """`check()`'s first true result, polled every 0.5 s (an OSError counts as not yet); fails after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            got = check()
        except OSError:
            got = None
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout_s:.0f} s")
        time.sleep(0.5)


def _wait_port_closed(port: int, timeout_s: float = 30) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"port {port} still open after {timeout_s} s")


def assigned_by_app(records: list[dict[str, Any]]) -> dict[str, int]:
    """Containers each app got from the policy's answers (what Python decided)."""
    out: dict[str, int] = {}
    for r in records:
        for app, _prio, n in (r["resp"] or {}).get("a", []):
            out[app] = out.get(app, 0) + n
    return out


def allocated_by_app(records: list[dict[str, Any]]) -> dict[str, int]:
    """Containers the RM reported as allocated to each app (the alloc rows of deltas, not full syncs)."""
    out: dict[str, int] = {}
    for r in records:
        req = r["req"] or {}
        if not req.get("full"):
            for row in req.get("alloc", []):
                out[row[1]] = out.get(row[1], 0) + 1
    return out


def spec_copy(name: str, out: Path, keep: tuple[str, ...] | None = None,
              args: dict[str, dict[str, str]] | None = None) -> Path:
    """Write built-in bench spec `name` to `out` with only the `keep` jobs and some job arguments changed.

    `args` maps a job id to {flag: value}: the value replaces the argument after that flag (e.g. -m's map count).
    """
    doc = yaml.safe_load((builtin_dir() / f"{name}.yaml").read_text())
    if keep is not None:
        doc["jobs"] = [j for j in doc["jobs"] if j["id"] in keep]
    for job in doc["jobs"]:
        for flag, value in (args or {}).get(job["id"], {}).items():
            job["args"][job["args"].index(flag) + 1] = value
    out.write_text(yaml.safe_dump(doc))
    return out
