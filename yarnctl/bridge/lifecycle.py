"""The policy server's life: serve until SIGTERM or SIGINT, keep the status file and the policy's state, stop cleanly.

`yarnctl serve` builds the parts (the service, the py4j server, the control loop, the exporter) and
hands them here; this module owns what happens between "serving" and "stopped".
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from yarnctl.bridge.control import ControlServer
from yarnctl.bridge.decisionlog import DecisionLog
from yarnctl.bridge.server import PolicyServer, write_status
from yarnctl.bridge.service import PolicyService
from yarnctl.rm.observe import ControlLoop

log = logging.getLogger("yarnctl.serve")

STATS_EVERY_S = 10.0
SAVE_EVERY_S = 10.0  # how often a stateful policy's state is saved (and once more on stop)
RATE_WINDOW_S = 10.0  # decisions/s in the status file: calls over the last this many seconds


class Stoppable(Protocol):
    """Something with a shutdown(), as the metrics exporter's HTTP server."""

    def shutdown(self) -> None:
        """Stop serving."""
        ...


@dataclass
class Serving:
    """A started policy server and what runs beside it, until a signal stops it."""

    service: PolicyService
    server: PolicyServer
    port: int
    address: str
    token_path: Path
    dlog: DecisionLog | None
    loop: ControlLoop | None
    loop_text: str | None  # what the loop polls, for the start-up line
    state_file: Path | None
    status_file: Path | None
    metrics: Stoppable | None
    control: ControlServer | None = None  # `yarnctl policy` commands (bridge/control.py)
    metrics_port: int | None = None  # where the exporter listens (the OS's choice for --metrics-port 0)

    def run(self) -> None:
        """Serve until SIGTERM or SIGINT: status file every second, state every SAVE_EVERY_S, stats lines."""
        stop = threading.Event()

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        # before "serving" is announced: whoever waits for that line may stop the server at once
        old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        self.started = time.time()
        self.calls = deque([(time.monotonic(), 0)])
        log.info("serving policy %s on %s:%d (token file %s, decision log %s)", self.service.policy_name,
                 self.address, self.port, self.token_path, self.dlog.path if self.dlog else "off")
        if self.loop is not None:
            self.loop.start()
            log.info("%s", self.loop_text)
        if self.control is not None:
            log.info("control socket %s (yarnctl policy show|set|rollback)", self.control.path)
        last_save = last_stats = time.monotonic()
        try:
            if self.status_file:  # at once, so tooling sees the server before its first second is up
                write_status(self.status_file, self.status())
            while not stop.wait(1.0):
                self.calls.append((time.monotonic(), self.service.stats.calls))
                while self.calls[-1][0] - self.calls[0][0] > RATE_WINDOW_S:
                    self.calls.popleft()
                self.service.check_swap()  # a check window can end while no heartbeat comes
                if self.status_file:
                    write_status(self.status_file, self.status())
                if time.monotonic() - last_save >= SAVE_EVERY_S:
                    last_save = time.monotonic()
                    self.save()
                if time.monotonic() - last_stats >= STATS_EVERY_S:
                    last_stats = time.monotonic()
                    log.info("stats %s", json.dumps(self.service.stats.as_dict(), separators=(",", ":")))
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            self.stop()

    def stop(self) -> None:
        """Stop everything, save the state once more and mark the status file stopped."""
        if self.control is not None:
            self.control.stop()
        if self.loop is not None:
            self.loop.stop()
        self.server.stop()
        self.service.close()  # the last call's decision-log row, before the log closes
        self.save()
        if self.metrics is not None:
            self.metrics.shutdown()
        if self.dlog is not None:
            self.dlog.close()
        if self.status_file:
            write_status(self.status_file, {**self.status(), "stopped": time.time()})
        log.info("stopped; stats %s", json.dumps(self.service.stats.as_dict(), separators=(",", ":")))

    def save(self) -> None:
        """Save a stateful policy's state (nothing without a state file, or when it decided nothing since the last save)."""
        self.service.save_state_file()

    def status(self) -> dict[str, Any]:
        """The status file's document: who serves what, how fast, the tuning values and the control loop."""
        (t_then, n_then), (t_now, n_now) = self.calls[0], self.calls[-1]
        rate = (n_now - n_then) / (t_now - t_then) if t_now > t_then else 0.0
        return {"pid": os.getpid(), "policy": self.service.policy_name, "address": self.address, "port": self.port,
                "started": self.started, "uptime_s": round(time.time() - self.started, 1),
                "decisions_per_s": round(rate, 2), "tuning": self.service.tuning,
                "state_file": str(self.state_file) if self.state_file else None,
                "control_loop": loop_status(self.loop, time.time()) if self.loop else None,
                "waiting": self.service.waits.as_status(),
                "token_file": str(self.token_path), "control": str(self.control.path) if self.control else None,
                "metrics_port": self.metrics_port,
                "swap": self.service.swap_status(),
                **self.service.stats.as_dict()}


def _polled(source: Any) -> str:
    rm = getattr(source, "rm", None)
    return str(source.where) if rm is None else str(rm.active_url or rm.urls[0])


def loop_status(loop: Any, now: float) -> dict[str, Any]:
    """The control loop's state as plain JSON for the status file."""
    st = loop.state
    reading = st.reading
    obs = reading.observation if reading else None
    age = st.age_s(now)
    return {
        "rm": _polled(loop.observer), "interval_s": st.interval_s,
        "stale": st.stale_at(now), "error": st.error, "age_s": None if age is None else round(age, 1),
        "polls": st.polls, "failures": st.failures, "feed_errors": st.feed_errors, "poll_s": round(st.poll_s, 3),
        "nodes": len(obs.nodes) if obs else None, "apps": len(obs.apps) if obs else None,
        "containers_measured": len(obs.containers) if obs and obs.usage_measured else None,
        "nm_failures": reading.nm_failures if reading else None,
        "shim": dataclasses.asdict(reading.shim) if reading and reading.shim else None,
    }
