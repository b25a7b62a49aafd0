"""Hot policy swap: a candidate policy checked beside the active one, then active; the one it replaced kept for rollback.

`yarnctl policy set` builds a candidate inside the running policy server, given the cluster as the
server's mirror holds it and the control loop's latest observation. For its check window (a number
of heartbeats or of seconds) it decides every call on the snapshot the active policy decides on: in
*shadow* its decisions are computed and logged, not applied; with a *canary* share, the heartbeats of
that share of the nodes (a stable hash of the node id) take its decision instead and the rest are
shadowed. At the first call (or status tick) after the window it takes over when it raised nothing,
validation refused none of its items, and its decide time stayed within its limit at the 95th
percentile; else it is dropped and the active policy stays. A policy that raises is dropped at once.
`yarnctl policy rollback` cancels a candidate under check, or returns to the policy the last swap
replaced. Every step is an `event` record in the decision log and is listed in the status file.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yarnctl.engine import Engine
from yarnctl.errors import ConfigError
from yarnctl.model import Decision

if TYPE_CHECKING:
    from yarnctl.bridge.service import Recording

DEFAULT_CHECK_S = 30.0  # with 1 s node heartbeats, a few dozen calls per node
DEFAULT_MAX_LATENCY_MS = 5.0  # half the shim's default 10 ms deadline: the answer must still leave room for the wire
KEEP_LATENCIES = 10_000  # decide times kept for the percentile; a long window keeps its latest


class SwapEvent(StrEnum):
    """What happened to a swap, as the decision log and the status file name it."""

    SHADOW = "shadow"  # a candidate started its check; its decisions are logged, not applied
    CANARY = "canary"  # ... and decides a share of the nodes' heartbeats
    ACTIVE = "active"  # the candidate took over
    DROPPED = "dropped"  # the candidate failed its check; the active policy stays
    CANCELLED = "cancelled"  # `yarnctl policy rollback` during the check
    ROLLED_BACK = "rolled-back"  # the policy a swap replaced took over again


@dataclass(frozen=True, slots=True)
class SwapPlan:
    """What `yarnctl policy set` asks for: the policy, its parameters and how it is checked."""

    policy: str
    params: Mapping[str, Any] = field(default_factory=dict)
    check_calls: int | None = None  # check for this many calls ...
    check_s: float | None = DEFAULT_CHECK_S  # ... or this many seconds (exactly one of the two)
    canary: float = 0.0  # share of the nodes whose heartbeats the candidate decides during the check
    max_latency_ms: float = DEFAULT_MAX_LATENCY_MS

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> SwapPlan:
        """The plan a control request carries; ConfigError naming the first bad field."""
        policy = doc.get("policy")
        if not isinstance(policy, str) or not policy.strip():
            raise ConfigError("policy: expected a policy name")
        params = doc.get("params", {})
        if not isinstance(params, dict):
            raise ConfigError("params: expected a mapping of parameter to value")
        calls, secs = doc.get("check_calls"), doc.get("check_s")
        if calls is not None and secs is not None:
            raise ConfigError("give check_calls or check_s, not both")
        if calls is None and secs is None:
            secs = DEFAULT_CHECK_S
        if calls is not None and (type(calls) is not int or calls < 1):
            raise ConfigError(f"check_calls {calls!r}: expected a whole number of heartbeats >= 1")
        if secs is not None and not (_number(secs) and 0 <= secs <= 86400):
            raise ConfigError(f"check_s {secs!r}: expected seconds in [0, 86400]")
        canary = doc.get("canary", 0.0)
        if not (_number(canary) and 0 <= canary < 1):
            raise ConfigError(f"canary {canary!r}: expected a share of the nodes in [0, 1)")
        limit = doc.get("max_latency_ms", DEFAULT_MAX_LATENCY_MS)
        if not (_number(limit) and limit > 0):
            raise ConfigError(f"max_latency_ms {limit!r}: expected milliseconds > 0")
        return cls(policy.strip(), dict(params), calls, None if secs is None else float(secs), float(canary),
                   float(limit))

    def as_doc(self) -> dict[str, Any]:
        """JSON-able, as `from_doc` reads it."""
        return {"policy": self.policy, "params": dict(self.params), "check_calls": self.check_calls,
                "check_s": self.check_s, "canary": self.canary, "max_latency_ms": self.max_latency_ms}


def _number(v: object) -> bool:
    return type(v) in (int, float) and math.isfinite(v)  # type: ignore[arg-type]


def in_canary(node: str, share: float) -> bool:
    """True when `node`'s heartbeats belong to a canary of `share` of the nodes (a stable hash, same in every run)."""
    return zlib.crc32(node.encode()) % 10_000 < share * 10_000


def decision_rows(d: Decision) -> tuple[Any, ...]:
    """A decision as plain rows (assignments, kills, resizes): equal rows, same decision."""
    return (tuple((a.app_id, a.priority, a.count) for a in d.assignments),
            tuple((k.container_id, k.reason) for k in d.kills),
            tuple((r.node_id, r.capacity.memory_mb, r.capacity.vcores) for r in d.resizes))


@dataclass
class Candidate:
    """A policy under check: its engine, and what its decisions did so far."""

    plan: SwapPlan
    policy: Recording
    engine: Engine
    state_file: Path | None
    replacing: str  # the active policy's name when the check began
    swap: int = 0  # its number among the server's swaps: its events carry it
    started: float = field(default_factory=time.monotonic)
    started_at: float = field(default_factory=time.time)
    calls: int = 0  # calls it decided (shadowed or applied)
    applied: int = 0  # of which the canary's, applied
    differ: int = 0  # shadowed calls it decided otherwise than the active policy
    rejected: int = 0  # its decision items validation refused
    tune_errors: int = 0  # control-loop observations it failed to take in
    failure: str = ""  # why it raised, if it did (it is dropped at once)
    latency_us: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The candidate policy's name."""
        return self.policy.name

    @property
    def phase(self) -> SwapEvent:
        """shadow, or canary when it decides a share of the nodes."""
        return SwapEvent.CANARY if self.plan.canary else SwapEvent.SHADOW

    def applies(self, node: str) -> bool:
        """True when the candidate's decision is the one applied at `node`'s heartbeat (the canary's nodes)."""
        return bool(self.plan.canary) and in_canary(node, self.plan.canary)

    def observe(self, us: int) -> None:
        """Count one of its decide times."""
        self.calls += 1
        self.latency_us.append(us)
        if len(self.latency_us) > KEEP_LATENCIES:
            del self.latency_us[: len(self.latency_us) - KEEP_LATENCIES]

    def p95_us(self) -> int | None:
        """Its decide time at the 95th percentile (None before any call)."""
        if not self.latency_us:
            return None
        ordered = sorted(self.latency_us)
        return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]

    def due(self, now: float) -> bool:
        """True when its window is over and it decided at least one call (no call, nothing to judge it by)."""
        if self.calls == 0:
            return False
        if self.plan.check_calls is not None:
            return self.calls >= self.plan.check_calls
        return now - self.started >= (self.plan.check_s or 0.0)

    def verdict(self) -> str | None:
        """Why it must not take over (None: it may)."""
        if self.failure:
            return self.failure
        if self.rejected:
            return f"validation refused {self.rejected} of its decision items (see the decision log's shadow rows)"
        if self.tune_errors:
            return f"it failed to take in {self.tune_errors} control-loop observations (see the server log)"
        p95 = self.p95_us()
        if p95 is not None and p95 > self.plan.max_latency_ms * 1000:
            return (f"its decide time at the 95th percentile is {p95 / 1000:.1f} ms, over the "
                    f"{self.plan.max_latency_ms:g} ms limit")
        return None

    def as_status(self, now: float) -> dict[str, Any]:
        """JSON-able, for the status file and `yarnctl policy show`."""
        p95 = self.p95_us()
        return {"policy": self.name, "phase": self.phase.value, "replacing": self.replacing, "swap": self.swap,
                **self.plan.as_doc(),
                "started": round(self.started_at, 3), "elapsed_s": round(now - self.started, 1),
                "calls": self.calls, "applied": self.applied, "differ": self.differ, "rejected": self.rejected,
                "p95_us": p95, "failure": self.failure or None}


def event_text(doc: Mapping[str, Any]) -> str:
    """A swap event in one line, as the server log and `yarnctl policy` print it."""
    how, cand = doc["event"], doc.get("candidate")
    if how in (SwapEvent.SHADOW, SwapEvent.CANARY):
        plan = doc["plan"]
        share = f", deciding {plan['canary'] * 100:g}% of the nodes" if how == SwapEvent.CANARY else ""
        return (f"{cand} under check for {_window(plan)}{share} ({doc['replacing']} decides meanwhile; "
                f"limit {plan['max_latency_ms']:g} ms at p95)")
    stats = (f"{doc.get('calls', 0)} calls in {doc.get('elapsed_s', 0):.1f} s, {doc.get('differ', 0)} decided otherwise, "
             f"{doc.get('rejected', 0)} items refused, p95 {as_ms(doc.get('p95_us'))}")
    if how == SwapEvent.ACTIVE:
        return f"{cand} active, replacing {doc['replacing']} ({stats})"
    if how == SwapEvent.ROLLED_BACK:
        return f"{doc['policy']} active again ({doc.get('why', '')})"
    return f"{cand} {how}: {doc.get('why', '')} ({stats}); {doc['policy']} stays"


def _window(plan: Mapping[str, Any]) -> str:
    return f"{plan['check_calls']} heartbeats" if plan.get("check_calls") is not None else f"{plan['check_s']:g} s"


def as_ms(us: int | None) -> str:
    """Microseconds as "0.42 ms" ("-" for none)."""
    return "-" if us is None else f"{us / 1000:.2f} ms"


def check_text(c: Mapping[str, Any]) -> str:
    """A candidate under check in one line, from its status (`Candidate.as_status`)."""
    window = f"{c['calls']}/{c['check_calls']} heartbeats" if c.get("check_calls") else \
        f"{c['elapsed_s']:.1f}/{c['check_s']:g} s"
    return (f"{c['policy']} in {c['phase']}: {window}, {c['calls']} calls, {c['differ']} decided otherwise, "
            f"{c['rejected']} refused, p95 {as_ms(c.get('p95_us'))}")
