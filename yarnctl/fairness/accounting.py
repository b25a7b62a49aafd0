"""Long-term accounting of [H-MRF]: the Queue Tracker of Sec. 6 and Alg. 1 lines 2-7, 20-24.

Per queue (or user) it integrates over time, from the snapshots a policy sees, the allocation
u_i (accumulated resources ü_i, split as Alg. 1 line 23 into the part within the share S_i of
Eq. 1 and the part borrowed beyond it) and the allocation it would have without sharing (the
denominator of Eq. 2), each inside the configured window (Sec. 6). Allocation is piecewise
constant between snapshots and charged from the policy's own grants on, so while anyone has
pending demand (every heartbeat is then seen) the integrals are exact to the heartbeat; a
container that ends while nobody waits is charged until the next snapshot the policy sees.

Accumulated resources are "historical plus currently allocated" (Sec. 5.1): to compare users
the current allocation is charged ahead for the entity's mean holding time (∫u dt over the
resources granted, Little's law; everyone's mean for an entity not measured yet, 1 s before any
time has passed over a grant), which is what makes one
heartbeat's grants move the balance as Alg. 1 line 23 does after every ALLOC.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarnctl.fairness.shares import (
    ZERO_VECTOR,
    Vector,
    add,
    aggregate,
    nonsharing_allocation,
    share_vector,
    stored_vector,
    vector,
)
from yarnctl.fairness.sharing_degree import sharing_degree
from yarnctl.fairness.windows import Window, WindowedSum
from yarnctl.model import ZERO, App, AppId, ClusterSnapshot, JournalCursor, Resources

QUEUE = "queue"
USER = "user"
DEFAULT_HOLDING_S = 1.0  # before any grant: any positive value just orders by current allocation


def split_allocation(u: Vector, s: Vector) -> tuple[Vector, Vector]:
    """Alg. 1 line 23: u = min{u, s} + max{0, u - s}, the part within the share and the part borrowed."""
    return (min(u[0], s[0]), min(u[1], s[1])), (max(0.0, u[0] - s[0]), max(0.0, u[1] - s[1]))


@dataclass(slots=True)
class Account:
    """One queue's (or user's) running totals; mutable, owned by a QueueTracker."""

    used: WindowedSum  # ∫u dt in the window: accumulated resources ü_i
    fair: WindowedSum  # ∫ allocation-without-sharing dt in the window (Eq. 2's denominator)
    borrowed: WindowedSum  # ∫max{0, u - s} dt in the window
    alloc: Vector = ZERO_VECTOR  # u_i now, including this heartbeat's grants
    nonsharing: Vector = ZERO_VECTOR
    pending: bool = False
    life_used: float = 0.0  # Σ_j ∫u_j/r_j dt since the start (not windowed): holding-time numerator
    life_granted: float = 0.0  # Σ_j g_j/r_j over every grant since the start, but those made now
    fresh: float = 0.0  # Σ_j g_j/r_j granted at last_s: no time has passed over them yet
    last_grant_s: float = -math.inf
    waiting_since: float = math.inf


@dataclass(frozen=True, slots=True)
class Standing:
    """An entity as a policy compares it at one moment: shares, accumulated resources, β, wait."""

    name: str
    weight: float
    share: Vector
    alloc: Vector  # u_i now
    accumulated: Vector  # windowed ∫u dt plus the current allocation charged ahead
    fair: Vector  # windowed ∫ allocation without sharing, charged ahead likewise
    beta: float  # Eq. 3 on the two vectors above
    borrowed: Vector
    waiting_s: float  # time since its last grant while it had pending demand (0 if none pending)


class EntitySums:
    """What each queue (or user) holds and asks for in a store's snapshot, kept from its journal, not re-added.

    Holdings are the store's own per-queue (per queue and user) sums; the asks of each app are kept
    with the entity they were counted to and re-read only for the apps the journal names since. A
    snapshot not taken by the store (a view hiding some asks) is not read: the caller adds it up.
    """

    def __init__(self) -> None:
        self.cursor = JournalCursor()
        self.apps: Mapping[AppId, App] | None = None
        self.names: list[str] = []  # every app's entity, in the order the apps first name them
        self.counted: dict[AppId, tuple[str, Resources]] = {}  # each app with asks: its entity and pending demand
        self.asked: dict[str, Resources] = {}

    def read(self, snap: ClusterSnapshot, entity: str) -> tuple[list[str], Mapping[str, Resources],
                                                                 dict[str, Resources]] | None:
        """The entities in first-named order, what each holds and what each asks for; None for a view."""
        if snap.version < 0 or snap.journal is None:
            return None
        of = _queue_of if entity == QUEUE else _user_of
        if snap.apps is not self.apps:
            self.apps, self.names = snap.apps, list(dict.fromkeys(of(a) for a in snap.apps.values()))
        with self.cursor.read(snap) as touched:
            if touched is None:
                self.counted, self.asked = {}, {}
                touched = list(snap.asks)
            counted, asked = self.counted, self.asked
            for app_id in dict.fromkeys(touched):
                old = counted.pop(app_id, None)
                if old is not None:
                    asked[old[0]] = asked[old[0]] - old[1]
                app = snap.apps.get(app_id)
                if app is not None and app_id in snap.asks:
                    name, p = of(app), snap.pending(app_id)
                    counted[app_id] = name, p
                    asked[name] = asked.get(name, ZERO) + p
        if entity == QUEUE:
            return self.names, snap.queue_allocated, asked
        held: dict[str, Resources] = {}
        for (_, user), r in snap.user_allocated.items():
            held[user] = held.get(user, ZERO) + r
        return self.names, held, asked


def _queue_of(app: App) -> str:
    return app.queue


def _user_of(app: App) -> str:
    return app.user


@dataclass
class QueueTracker:
    """Accumulated resources and sharing degree per queue or user, over time (MRYARN's QT, Sec. 6)."""

    window: Window = field(default_factory=Window)
    entity: str = QUEUE
    weights: Mapping[str, float] = field(default_factory=dict)  # replaced whole, never changed in place (`shares`)
    accounts: dict[str, Account] = field(default_factory=dict)
    capacity: Resources = ZERO
    last_s: float | None = None
    # the store version of the snapshot last read (-1: read the next one), and that store's journal (versions of
    # two stores may be equal: the policy server's mirror starts a new store at each full sync); a grant made
    # since sets it back, as it changed `alloc` ahead of the store
    read_version: int = field(default=-1, repr=False, compare=False)
    read_journal: object = field(default=None, repr=False, compare=False)
    sums: EntitySums = field(default_factory=EntitySums, repr=False, compare=False)
    # Eq. 1's shares as of (capacity, entities known, weights): they change only when one of these does
    shares: tuple[tuple[Resources, int, Mapping[str, float]], dict[str, Vector]] | None = field(
        default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.entity not in (QUEUE, USER):
            raise ValueError(f"entity {self.entity!r}: expected {QUEUE} or {USER}")

    def entity_of(self, app: App) -> str:
        """The queue or user `app` is accounted to."""
        return app.queue if self.entity == QUEUE else app.user

    def weight(self, name: str) -> float:
        """w_i: the configured contribution, 1 by default."""
        return float(self.weights.get(name, 1.0))

    def share(self, name: str) -> Vector:
        """Eq. 1 over every entity known (configured or seen)."""
        # accounts are only ever opened and weights replaced whole, so their count and identity say when to redo it
        key = self.capacity, len(self.accounts), self.weights
        kept = self.shares
        if kept is None or kept[0][0] != key[0] or kept[0][1] != key[1] or kept[0][2] is not key[2]:
            kept = self.shares = key, {}
        share = kept[1].get(name)
        if share is None:
            names = set(self.accounts) | set(self.weights)
            share = kept[1][name] = share_vector(self.capacity, self.weight(name), sum(self.weight(n) for n in names))
        return share

    def _account(self, name: str) -> Account:
        acc = self.accounts.get(name)
        if acc is None:
            acc = self.accounts[name] = Account(WindowedSum(self.window), WindowedSum(self.window),
                                                WindowedSum(self.window))
        return acc

    def advance(self, snap: ClusterSnapshot) -> None:
        """Integrate the state held since the last snapshot up to `snap.now_s`, then read `snap`."""
        now = snap.now_s
        if self.last_s is not None and now > self.last_s:
            for name, acc in self.accounts.items():
                own, borrowed = split_allocation(acc.alloc, self.share(name))
                acc.used.add(self.last_s, now, add(own, borrowed))
                acc.borrowed.add(self.last_s, now, borrowed)
                acc.fair.add(self.last_s, now, acc.nonsharing)
                acc.life_used += aggregate(acc.alloc, self.capacity) * (now - self.last_s)
                acc.life_granted, acc.fresh = acc.life_granted + acc.fresh, 0.0
        self.last_s = now if self.last_s is None else max(self.last_s, now)
        self.capacity = snap.capacity
        if snap.version >= 0 and snap.version == self.read_version and snap.journal is self.read_journal:
            return  # the state read last time, unchanged: only time has passed (most heartbeats)
        self.read_version, self.read_journal = snap.version, snap.journal
        read = self.sums.read(snap, self.entity)
        held: Mapping[str, Resources]
        if read is not None:
            names, held, asked = read
            for name in names:
                self._account(name)  # opened in the order the apps name them, as the walk below does
        else:
            held, asked = {}, {}
            for app in snap.apps.values():
                name = self.entity_of(app)
                self._account(name)
                held[name] = held.get(name, ZERO) + snap.allocated(app.id)
                if app.id in snap.asks:
                    asked[name] = asked.get(name, ZERO) + snap.pending(app.id)
        for name, acc in self.accounts.items():
            u, p = held.get(name, ZERO), asked.get(name, ZERO)
            acc.alloc = vector(u)
            acc.nonsharing = nonsharing_allocation(vector(u + p), self.share(name))
            pending = not p.is_zero()
            if pending and not acc.pending:
                acc.waiting_since = now
            acc.pending = pending

    def grant(self, name: str, r: Resources, now: float) -> None:
        """Count a container just given to `name` (Alg. 1 lines 20-24)."""
        acc = self._account(name)
        self.read_version = -1
        acc.alloc = add(acc.alloc, vector(r))
        acc.fresh += aggregate(vector(r), self.capacity)
        acc.last_grant_s = now

    def holding_s(self, name: str) -> float:
        """Mean time a granted container is held by `name` (all entities' mean until it has had one)."""
        acc = self.accounts.get(name)
        # grants made now are left out until time passes over them: counting them at once would
        # shrink the mean with every container given in one heartbeat
        if acc is not None and acc.life_used > 0 and acc.life_granted > 0:
            return acc.life_used / acc.life_granted
        used = sum(a.life_used for a in self.accounts.values())
        granted = sum(a.life_granted for a in self.accounts.values())
        return used / granted if used > 0 and granted > 0 else DEFAULT_HOLDING_S

    def standing(self, name: str, now: float) -> Standing:
        """How `name` stands at `now`, with its current allocation charged ahead (see the module doc)."""
        acc = self._account(name)
        # memoryless (a zero window): all that counts is the allocation now, the same for everyone
        ahead = self.holding_s(name) if self.window.length_s > 0 else DEFAULT_HOLDING_S
        used = add(acc.used.value(now), acc.alloc, ahead)
        fair = add(acc.fair.value(now), acc.nonsharing, ahead)
        waiting = now - max(acc.last_grant_s, acc.waiting_since) if acc.pending else 0.0
        return Standing(name, self.weight(name), self.share(name), acc.alloc, used, fair, sharing_degree(used, fair),
                        acc.borrowed.value(now), max(waiting, 0.0))

    def measured(self, now: float) -> dict[str, tuple[float, Vector]]:
        """Per entity, β_i(t) (Eq. 3) and the accumulated resources over the window up to `now`, nothing charged ahead."""
        return {name: (sharing_degree(acc.used.value(now), acc.fair.value(now)), acc.used.value(now))
                for name, acc in sorted(self.accounts.items())}

    # ------------------------------------------------------------ persistence

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON state (infinities as null), enough to resume after a restart."""
        return {
            "window": {"kind": self.window.kind, "length_s": _num(self.window.length_s)},
            "entity": self.entity,
            "weights": dict(sorted(self.weights.items())),
            "capacity": self.capacity.as_dict(),
            "last_s": self.last_s,
            "accounts": {name: {
                "used": a.used.to_json(), "fair": a.fair.to_json(), "borrowed": a.borrowed.to_json(),
                "alloc": list(a.alloc), "nonsharing": list(a.nonsharing), "pending": a.pending,
                "life_used": a.life_used, "life_granted": a.life_granted, "fresh": a.fresh,
                "last_grant_s": _num(a.last_grant_s), "waiting_since": _num(a.waiting_since),
            } for name, a in sorted(self.accounts.items())},
        }

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> QueueTracker:
        """The tracker `to_json` wrote."""
        w = d["window"]
        window = Window(w["kind"], _inf(w["length_s"], math.inf))
        accounts = {name: Account(
            WindowedSum.from_json(window, a["used"]), WindowedSum.from_json(window, a["fair"]),
            WindowedSum.from_json(window, a["borrowed"]), stored_vector(a["alloc"], f"account {name} alloc"),
            stored_vector(a["nonsharing"], f"account {name} nonsharing"),
            bool(a["pending"]), float(a["life_used"]), float(a["life_granted"]), float(a["fresh"]),
            _inf(a["last_grant_s"], -math.inf), _inf(a["waiting_since"], math.inf),
        ) for name, a in d["accounts"].items()}
        return QueueTracker(window, d["entity"], dict(d["weights"]), accounts, Resources(**d["capacity"]),
                            d["last_s"])

    def save(self, path: Path) -> None:
        """Write the state to `path` atomically (a temporary file in the same directory, then os.replace)."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(self.to_json(), f, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    @staticmethod
    def load(path: Path) -> QueueTracker:
        """The tracker `save` wrote to `path`."""
        return QueueTracker.from_json(json.loads(Path(path).read_text()))


def _num(x: float) -> float | None:
    return None if math.isinf(x) else x


def _inf(x: float | None, default: float) -> float:
    return default if x is None else float(x)
