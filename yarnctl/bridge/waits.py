"""Why pending applications wait, as the policy server last explained them (`yarnctl explain`, status, metrics).

Explaining is a read beside the decision (`Engine.explain`), not part of it: at most every
`every_s` seconds, on the call that falls due (after its answer is encoded and its latency taken),
the `top` oldest pending applications that got nothing at that heartbeat each get the reason the
policy gives, for at most `budget_s` seconds (the next due call goes on from the first app not
reached, so every one of the `top` is explained in turn on a large cluster); the last `keep` reasons
per application are kept, an application served (at any call) or no longer asking leaves the book. The shim asks
Python only about nodes with room for a container, so on a cluster full everywhere the last
reason stands until a node has room again.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from yarnctl.engine import Engine
from yarnctl.model import AppId, ClusterSnapshot, Decision, NodeId
from yarnctl.policies.waiting import Wait

EXPLAIN_TOP = 20  # the oldest pending applications explained at each due call
EXPLAIN_EVERY_S = 0.5  # at most this often: with 1 s node heartbeats, a reason within two heartbeats
EXPLAIN_BUDGET_S = 0.002  # at most this long per due call; the next one goes on where it stopped
KEEP = 10  # reasons kept per application


@dataclass(frozen=True, slots=True)
class Explained:
    """One reason an application got nothing at one call: when (epoch s), which node, why."""

    at: float
    node: NodeId
    wait: Wait

    def as_dict(self) -> dict[str, Any]:
        """JSON-able: at, node, code, text, values."""
        return {"at": round(self.at, 3), "node": self.node, **self.wait.as_dict()}


class WaitBook:
    """The last reasons of the oldest pending applications, refreshed at most every `every_s` seconds."""

    def __init__(self, top: int = EXPLAIN_TOP, every_s: float = EXPLAIN_EVERY_S, keep: int = KEEP,
                 budget_s: float = EXPLAIN_BUDGET_S, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, timer: Callable[[], float] = time.perf_counter) -> None:
        self.top, self.every_s, self.keep, self.budget_s = top, every_s, keep, budget_s
        self._timer = timer
        self._cursor = 0  # where in the oldest `top` the next due call starts
        self._clock, self._wall = clock, wall
        self._next = -float("inf")
        self._apps: dict[AppId, deque[Explained]] = {}
        # replaced whole after each refresh: the status writer and the metrics scrape read it without a lock
        self.latest: Mapping[AppId, tuple[Explained, ...]] = {}
        self.explained = 0  # reasons given since start

    def clear(self) -> None:
        """Forget every reason (a policy swap: the last policy's reasons are not the next one's)."""
        self._apps.clear()
        self._cursor = 0
        self._next = -float("inf")
        self.latest = {}

    def due(self) -> bool:
        """Whether the next `record` explains (and may take up to `budget_s`), not only drops the apps served."""
        return self.top > 0 and self._clock() >= self._next

    def record(self, engine: Engine, snap: ClusterSnapshot, node_id: NodeId, decision: Decision) -> dict[AppId, Wait]:
        """Explain the oldest pending apps left waiting by `decision` when due; this call's reasons by app."""
        if self.top <= 0:
            return {}
        if self._clock() < self._next:
            # not due, but an app served now waits no more: it leaves the book at once (O(assignments))
            now_served = [a.app_id for a in decision.assignments if a.app_id in self._apps]
            if now_served:
                for app_id in now_served:
                    del self._apps[app_id]
                # the others' reasons did not change since `latest` was built: keep its tuples
                self.latest = {a: t for a, t in self.latest.items() if a in self._apps}
            return {}
        self._next = self._clock() + self.every_s
        now = self._wall()
        top: list[AppId] = []
        for app in snap.iter_pending_apps():
            if len(top) >= self.top:
                break
            top.append(app.id)
        given: dict[AppId, Wait] = {}
        served: set[AppId] = {a.app_id for a in decision.assignments}
        start, stop_at = self._cursor % max(len(top), 1), self._timer() + self.budget_s
        reached = 0
        try:
            for i in range(len(top)):
                app_id = top[(start + i) % len(top)]
                why = engine.explain(snap, node_id, app_id, decision)
                reached += 1
                if why is None:
                    served.add(app_id)
                else:
                    given[app_id] = why
                if self._timer() > stop_at:
                    break
        finally:
            engine.end_explaining()
        self._cursor = start + reached
        # apps among the oldest keep their reasons until explained again; the served and the others leave
        keep = {a: q for a in top if (q := self._apps.get(a)) is not None and a not in served}
        for app_id, why in given.items():
            entries = keep.get(app_id)
            if entries is None:
                entries = keep[app_id] = deque(maxlen=self.keep)
            entries.append(Explained(now, node_id, why))
        self._apps = keep
        self.explained += len(given)
        self.latest = {a: tuple(q) for a, q in self._apps.items()}
        return given

    def as_status(self) -> dict[str, list[dict[str, Any]]]:
        """Per application, its kept reasons oldest first (the status file's `waiting`)."""
        return {a: [e.as_dict() for e in q] for a, q in self.latest.items()}

    def by_reason(self) -> Counter[str]:
        """The explained applications by their latest reason's code."""
        return Counter(q[-1].wait.code.value for q in self.latest.values() if q)
