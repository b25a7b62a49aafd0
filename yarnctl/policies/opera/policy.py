"""OPERA ([OPERA] Sec. III, Alg. 1-4): lend the idle part of running containers to short pending tasks.

Implements Sec. III: the task classifier (Sec. III-B, Eq. 1-3, yarnctl/estimation/classifier.py),
the NodeManager monitor with CRes and the AGGRESSIVE / NEUTRAL / PRESERVE relief policies
(Sec. III-C, Alg. 1, Eq. 4; relief.py), guaranteed and opportunistic availability (Eq. 6-7;
availability.py), normal-then-opportunistic assignment (Alg. 2) and strict or multi-chance
reservation (Alg. 3-4; reservation.py) over the Fair task queue (queue.py).

Approximations for YARN 2.7, which has neither opportunistic containers nor usage in heartbeats:
- Usage TU_t is what the control loop reads at each tick (live: NodeManager JMX; simulator:
  SimCluster.observe()); a container launched since the last tick counts its whole demand D_t.
- Opportunistic allocation rescales the node: each heartbeat offers C_i + Σ_{t ∈ OT_i} D_t (plus
  this heartbeat's opportunistic grants) through a NodeResize, so YARN's own free space is GA_i,
  and at least one minimum allocation more than the node then holds (never granted by OPERA: the
  shim only asks Python about nodes with room for one, and a full node must hear of new OA_i).
  C_i is the node's configured capacity: the size it registered with or an admin set, which the
  shim sends beside the capacity (Node.registered) and OPERA's resizes never change; a node never
  offers more than `max_overcommit` × C_i.
- Which containers are opportunistic is read from the snapshot (Container.kind: the simulator and
  the shim both record the kind an assignment asked for). A node whose last grants did not all
  appear by its next heartbeat lost one at launch (refused, or killed for want of memory).
- The monitor runs at every control-loop tick (its MonitorInterval) and a relief kill is sent
  through Decision.kills at the node's next heartbeat; its own kills are not learned from.
- The classifier learns at ticks: a container gone since the last tick ended, by estimate, half
  way between the two ticks. Tasks the RM killed or preempted are indistinguishable from
  finished ones in a snapshot and are learned as such.
- AM containers are never opportunistic (an AM lives as long as its job).
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from yarnctl.errors import ConfigError
from yarnctl.estimation.classifier import (
    Confusion, FinishedTask, TaskClassifier, TaskFeatures, app_name, demand,
)
from yarnctl.estimation.feedback import Usage
from yarnctl.model import (
    AM_PRIORITY, AppId, Assignment, ClusterSnapshot, Container, ContainerKind, Decision, Kill, NodeId, NodeResize,
    Observation, Resources,
)
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.bounds import bounded
from yarnctl.policies.waiting import Wait, WaitCode, head_ask, wait
from yarnctl.policies.waiting import size as waiting_size
from yarnctl.policies.opera.availability import fits, guaranteed, opportunistic
from yarnctl.policies.head_lists import AskLists
from yarnctl.policies.opera.queue import FairQueue, PendingOrder, Task
from yarnctl.policies.opera.relief import Block, Contention, Relief, cres, kills, relieve, victim
from yarnctl.policies.opera.reservation import Reserved, Room, multi_chance, strict

log = logging.getLogger(__name__)

MB = 1 << 20
HISTORY = 100_000  # finished tasks kept for reports


@dataclass(frozen=True, slots=True)
class OperaConfig:
    """OPERA's parameters: the paper's ρ, threshold and α; the rest are assumed (see relief.py)."""

    relief: str = "preserve"  # aggressive | neutral | preserve (Alg. 1)
    reservation: str = "multi-chance"  # strict (Alg. 3) | multi-chance (Alg. 4)
    rho: float = bounded(0.95, 0, 1, lo_open=True)  # CRes threshold (Sec. III-C)
    threshold_s: float = bounded(60.0, 0, lo_open=True)  # short/long task threshold (Sec. III-B: "e.g., 1 minute")
    alpha: float = bounded(2.0, 1, lo_open=True)  # PRESERVE's growth factor of BR_i, BT_i (Sec. III-C: "double")
    block: Resources = bounded(Resources(1024, 2), 0)  # initial and least BR_i (assumed; Fig. 12 starts at 2 vCores)
    block_time_s: float = bounded(30.0, 0, lo_open=True)  # initial and least BT_i (assumed)
    max_block_time_s: float = bounded(480.0, 0, lo_open=True, infinite=True)  # largest BT_i (assumed)
    max_reserved: int = bounded(3, 0)  # ε_r (assumed)
    max_skips: int = bounded(3, 0)  # ε_s (assumed)
    max_overcommit: float = bounded(2.0, 1)  # a node never offers more than this times its configured capacity


@dataclass(slots=True)
class _Tracked:
    features: TaskFeatures
    kind: ContainerKind
    start_s: float
    predicted: str | None


class _Sums(NamedTuple):
    """What a heartbeat reads of one set of a node's containers (all tracked), until it changes or a tick."""

    containers: tuple[Container, ...]  # the store's tuple for the node, compared by identity: a new one on any change
    guaranteed: Usage  # GA_i (Eq. 6)
    opportunistic: Usage  # OA_i (Eq. 7, or Eq. 4 with the node's BR_i)
    held: Usage  # Σ D_t over the opportunistic ones
    allocated: Resources  # Σ D_t over all


@dataclass(slots=True)
class _NodeState:
    registered: Resources  # C_i
    expected: int = 0  # containers granted at the last heartbeat that have not appeared yet
    granted_at: float = -math.inf
    reserved: list[Reserved] = field(default_factory=list)
    block: Block | None = None
    kill: str | None = None
    stale: bool = False  # a grant died at launch: usage is out of date until the next tick
    # the last heartbeat's sums: its walks over 20-30 containers were most of OPERA's time on the synthetic case,
    # and a node's containers are often the same at its next heartbeat; usage, blocks and kinds change at ticks
    sums: _Sums | None = None


class Opera(PolicyBase):
    """Normal, then opportunistic assignment of short tasks; contention relieved by killing opportunistic ones."""

    name = "opera"
    Config = OperaConfig
    # what it offers a node moves with each tick (usage, blocks, kills), not only with the node's containers
    time_dependent = True
    resizes_nodes = True  # the engine leaves node capacities to it (see yarnctl/engine.py)

    def __init__(self, config: OperaConfig = OperaConfig()) -> None:
        try:
            self.relief = Relief(config.relief)
        except ValueError:
            raise ConfigError(f"policy opera: relief must be one of {', '.join(r.value for r in Relief)}, "
                              f"got {config.relief!r}") from None
        if config.reservation not in ("strict", "multi-chance"):
            raise ConfigError(f"policy opera: reservation must be strict or multi-chance, got {config.reservation!r}")
        if config.block.is_zero():
            raise ConfigError("policy opera: block: give it some memory or vcores (both are 0)")
        if config.max_block_time_s < config.block_time_s:
            raise ConfigError(f"policy opera: max_block_time_s ({config.max_block_time_s:g}) is below block_time_s "
                              f"({config.block_time_s:g})")
        self.config = config
        self.classifier = TaskClassifier(config.threshold_s)
        self.nodes: dict[NodeId, _NodeState] = {}
        # both change only in `tune`, which clears every node's `sums` (kept from them): keep it so
        self.tracked: dict[str, _Tracked] = {}
        self.usage: dict[str, Usage] = {}  # TU_t at the last tick
        self.killed: set[str] = set()
        self.kills = 0
        self.last_tick_s: float | None = None
        self.confusion = Confusion()  # online predictions (at grant) against what the task turned out to be
        self.finished: deque[FinishedTask] = deque(maxlen=HISTORY)
        self.asks = AskLists()  # the open asks by size, for MinTaskDemand without walking the backlog
        self.order = PendingOrder()  # the asking apps in Fair order, so GetNextTaskFromQueue need not sort them

    # ------------------------------------------------------------ bookkeeping

    def _node(self, snap: ClusterSnapshot, node_id: NodeId) -> _NodeState:
        node = snap.nodes[node_id]
        st = self.nodes.get(node_id)
        # a source that does not know the registered size (node.registered None) keeps the one last heard
        registered = node.registered or (node.capacity if st is None else st.registered)
        if st is None or registered != st.registered:
            st = self.nodes[node_id] = _NodeState(registered)  # new, or resized by someone else
        if st.block is None:
            st.block = Block(Usage.of(self.config.block), self.config.block_time_s, snap.now_s)
        return st

    def features(self, snap: ClusterSnapshot, app_id: str, priority: int, size: Resources) -> TaskFeatures:
        """F_t, A_t, S_t, P_t, D_t of a task of `app_id` at `priority` (see yarnctl/estimation/classifier.py)."""
        app = snap.apps.get(app_id)
        others = any(r.priority not in (priority, AM_PRIORITY) for r in snap.any_asks(app_id))
        if not others:
            # a task container at another priority, from the store's per-priority sums: AMs run at priority
            # 0 (RMAppAttemptImpl.AM_CONTAINER_PRIORITY), so one there beside the AMs is a task (a shell's)
            held = snap.priority_allocated.get(app_id, {})
            others = any(p != priority and (p != AM_PRIORITY or h.resource != snap.app_am.get(app_id))
                         for p, h in held.items())
        return TaskFeatures((app.type if app else "").lower(), app_name(app.name if app else "", app_id),
                            "am" if priority == AM_PRIORITY else str(priority), "overlap" if others else "alone",
                            demand(size.memory_mb, size.vcores))

    def _track(self, snap: ClusterSnapshot, node_id: NodeId, st: _NodeState, heartbeat: bool,
               known: bool = False) -> None:
        """Start tracking the node's new containers: what they are (features, kind) and what was predicted.

        On the node's own heartbeat, grants of the last one that never appeared are given up: their
        containers were refused or died at launch (an OOM kill: the node uses more than its last
        measurement says, so it gets no opportunistic grant until the next tick measures it again).
        """
        for c in () if known else snap.node_containers.get(node_id, ()):  # known: all tracked at the cached sums
            if c.id in self.tracked:
                continue
            f = self.features(snap, c.app_id, c.priority, c.resource)
            self.tracked[c.id] = _Tracked(f, c.kind, c.start_s, self.classifier.classify(f))
            if c.start_s >= st.granted_at - 1e-6 and st.expected:
                st.expected -= 1
        if heartbeat:
            st.stale = st.stale or st.expected > 0
            st.expected = 0

    def is_opportunistic(self, cid: str) -> bool:
        """True when this policy placed container `cid` on opportunistic resources."""
        t = self.tracked.get(cid)
        return t is not None and t.kind is ContainerKind.OPPORTUNISTIC

    def task_usage(self, c: Container) -> Usage:
        """TU_t: the usage measured at the last tick, or the demand of a container not measured yet."""
        return self.usage.get(c.id) or Usage.of(c.resource)

    # ------------------------------------------------------------ control loop: NodeManager monitor (Alg. 1)

    def tune(self, obs: Observation) -> None:
        """Learn finished tasks, read usage, and run Alg. 1 on every node."""
        snap = obs.snapshot
        if snap is None:
            return
        mid = obs.at_s if self.last_tick_s is None else (self.last_tick_s + obs.at_s) / 2
        for st in self.nodes.values():
            st.sums = None  # usage, blocks and the tracked containers move at a tick
        for nid in sorted(snap.nodes):
            self._track(snap, nid, self._node(snap, nid), heartbeat=False)
        for cid in sorted(set(self.tracked) - set(snap.containers)):
            t = self.tracked.pop(cid)
            self.usage.pop(cid, None)
            if cid in self.killed:
                self.killed.discard(cid)
                continue
            end = max(mid, t.start_s)
            actual = self.classifier.learn(t.features, end - t.start_s)
            if t.predicted is not None:
                self.confusion = self.confusion.add(actual, t.predicted)
            self.finished.append(FinishedTask(cid, t.features, t.start_s, end))
        self.last_tick_s = obs.at_s
        if not obs.usage_measured:
            return  # nothing measured: an empty table means unknown, not idle
        self.usage = {cid: Usage(ld.memory_mb, ld.vcores) for cid, ld in obs.containers.items()
                      if cid in snap.containers}
        for nid in sorted(snap.nodes):
            self.nodes[nid].stale = False
            self._monitor(snap, nid, obs.at_s)

    def _monitor(self, snap: ClusterSnapshot, nid: NodeId, now_s: float) -> None:
        st = self._node(snap, nid)
        cs = snap.node_containers.get(nid, ())
        opp = {c.id for c in cs if self.is_opportunistic(c.id) and c.id not in self.killed}
        used = Usage()
        for x in cs:
            used = used + self.task_usage(x)
        c = cres(used, st.registered, self.config.rho) if opp else Contention.NONE
        if kills(self.relief, c):
            v = victim(cs, opp)
            st.kill = v.id if v is not None else None
        if self.relief is Relief.PRESERVE and st.block is not None:
            st.block = relieve(st.block, c, now_s, self.config.alpha,
                               Block(Usage.of(self.config.block), self.config.block_time_s, now_s),
                               st.registered, self.config.max_block_time_s)

    def tuning(self) -> Mapping[str, float]:
        """Opportunistic containers running, PRESERVE's blocked resources, relief kills so far."""
        blocked = Usage()
        if self.relief is Relief.PRESERVE:
            for st in self.nodes.values():
                if st.block is not None:
                    blocked = blocked + st.block.blocked
        return {
            "opera_opportunistic_containers": float(sum(self.is_opportunistic(c) for c in self.tracked)),
            "opera_blocked_vcores": blocked.vcores,
            "opera_blocked_bytes": blocked.memory_mb * MB,
            "opera_relief_kills_total": float(self.kills),
        }

    # ------------------------------------------------------------ heartbeats: Alg. 2-4

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """Relief kill if one is due, then Alg. 3 or 4 on the node's GA_i and OA_i, and the capacity that admits them."""
        st = self._node(snap, node_id)
        tup = snap.node_containers.get(node_id, ())
        sums = st.sums if st.sums is not None and st.sums.containers is tup else None
        self._track(snap, node_id, st, heartbeat=True, known=sums is not None)
        cs = list(tup)
        doomed: list[Kill] = []
        if st.kill is not None and st.kill in snap.containers:
            doomed.append(Kill(st.kill, f"opera {self.relief.value}: contention"))
            cs = [c for c in cs if c.id != st.kill]
        st.kill = None
        c_i = st.registered
        blocked = st.block.blocked if self.relief is Relief.PRESERVE and st.block is not None else Usage()
        k = self.config.max_overcommit
        ceiling = Resources(math.floor(c_i.memory_mb * k), math.floor(c_i.vcores * k))
        if len(cs) == len(tup):  # the node's own set, none killed: kept for its next heartbeat
            now = st.sums = sums if sums is not None else self._sums(tup, c_i, blocked)
        else:
            now = self._sums(tuple(cs), c_i, blocked)
        oa = now.opportunistic if not st.stale else Usage()
        room = Room(now.guaranteed, oa, Usage.of(ceiling) - Usage.of(c_i) - now.held)
        journaled = self.asks.sync(snap) and self.order.sync(snap)  # both or neither: they need the store's snapshot
        queue = FairQueue(snap, self.asks, self.order) if journaled else FairQueue(snap)

        def eligible(t: Task) -> bool:
            return t.priority != AM_PRIORITY and self.classifier.is_short(
                self.features(snap, t.app_id, t.priority, t.demand))

        if self.config.reservation == "strict":
            out = strict(room, queue, st.reserved, eligible)
        else:
            out = multi_chance(room, queue, st.reserved, eligible, self.config.max_reserved, self.config.max_skips)
        st.reserved = out.reserved
        if any(kind is ContainerKind.NORMAL for _, kind in out.grants):
            for v in self._guarantee(cs, [t.demand for t, _ in out.grants], c_i):
                doomed.append(Kill(v.id, f"opera {self.relief.value}: guaranteed memory"))
                cs.remove(v)
        if len(cs) != len(now.containers):
            now = self._sums(tuple(cs), c_i, blocked)  # some killed for the grants' memory
        self.killed.update(kl.container_id for kl in doomed)
        self.kills += len(doomed)
        counts: dict[tuple[str, int, ContainerKind], int] = {}
        opp_new = Usage()
        for t, kind in out.grants:
            counts[(t.app_id, t.priority, kind)] = counts.get((t.app_id, t.priority, kind), 0) + 1
            if kind is ContainerKind.OPPORTUNISTIC:
                opp_new = opp_new + Usage.of(t.demand)
        st.expected, st.granted_at = len(out.grants), snap.now_s
        # normal grants first: guaranteed resources before lent ones
        order = sorted(counts, key=lambda key: key[2] is ContainerKind.OPPORTUNISTIC)
        assignments = tuple(Assignment(a, p, node_id, counts[(a, p, kd)], kd) for a, p, kd in order)
        held = now.held + opp_new
        cap = Resources(c_i.memory_mb + round(held.memory_mb), c_i.vcores + round(held.vcores))
        # one minimum allocation of room above what the node holds after this heartbeat (never granted by
        # OPERA): live, the shim asks Python only about nodes with room for one, and a full node must still
        # hear about new OA_i at its next heartbeat (as feedback.py does)
        after = now.allocated + sum((t.demand for t, _ in out.grants), Resources(0, 0))
        cap = cap.componentwise_max(after + snap.min_allocation)
        resizes: tuple[NodeResize, ...] = ()
        if cap != snap.nodes[node_id].capacity:
            resizes = (NodeResize(node_id, cap),)
        if not (assignments or doomed or resizes):
            return Decision()
        return Decision(assignments, tuple(doomed), resizes)

    def why_waiting(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait:
        """A relief kill now, no guaranteed or opportunistic room for the ask (GA_i, OA_i), a reservation, else PolicyBase's."""
        if decision.kills:
            k = decision.kills[0]
            return wait(WaitCode.OPERA_RELIEF, f"OPERA killed {k.container_id} on {node_id} ({k.reason})",
                        node=node_id, relief=self.relief.value)
        st, ask = self.nodes.get(node_id), head_ask(snap, app_id)
        if st is not None and ask is not None:
            cs = snap.node_containers.get(node_id, ())
            ga = guaranteed(st.registered, (c.resource for c in cs if not self.is_opportunistic(c.id)))
            usages = [self.task_usage(c) for c in cs]
            blocked = st.block.blocked if self.relief is Relief.PRESERVE and st.block is not None else Usage()
            oa = opportunistic(st.registered, usages, blocked) if not st.stale else Usage()
            short = ask.priority != AM_PRIORITY and self.classifier.is_short(
                self.features(snap, app_id, ask.priority, ask.capability))
            if not fits(ask.capability, ga) and not (short and fits(ask.capability, oa)):
                if short and fits(ask.capability, opportunistic(st.registered, usages)):
                    return wait(WaitCode.OPERA_RELIEF, f"OPERA blocks {blocked.memory_mb:.0f} MB / {blocked.vcores:.1f} "
                                f"vcores of {node_id} after contention (PRESERVE): without them its ask would fit the "
                                f"idle room", node=node_id, blocked_mb=blocked.memory_mb)
                lend = f"opportunistic {oa.memory_mb:.0f} MB / {oa.vcores:.1f} vcores" + (
                    "" if short else " (lent to short tasks only; this ask is not one)")
                return wait(WaitCode.NODE_FULL, f"OPERA's room on {node_id}: guaranteed {ga.memory_mb:.0f} MB / "
                            f"{ga.vcores:.1f} vcores, {lend}; its ask is {waiting_size(ask.capability)}",
                            node=node_id, guaranteed_mb=ga.memory_mb, opportunistic_mb=oa.memory_mb, short=int(short))
            other = next((r.key for r in st.reserved if r.key[0] != app_id), None)
            if other is not None and not decision.assignments:
                return wait(WaitCode.RESERVED, f"{node_id} is reserved for {other[0]}'s priority {other[1]} task",
                            node=node_id, reserved_for=other[0])
        return super().why_waiting(snap, node_id, app_id, decision)

    def _sums(self, cs: tuple[Container, ...], c_i: Resources, blocked: Usage) -> _Sums:
        """GA_i, OA_i, Σ_{t ∈ OT_i} D_t (the opportunistic ones' grants) and Σ D_t of `cs`, in one walk."""
        # the same subtractions and additions, in the same order, as `guaranteed`, `opportunistic` and sums of
        # the demands (tests/policies/test_opera.py checks it to the bit): one walk instead of four
        g_mb, g_vc = float(c_i.memory_mb), float(c_i.vcores)
        o_mb, o_vc = float(c_i.memory_mb) - blocked.memory_mb, float(c_i.vcores) - blocked.vcores
        h_mb = h_vc = 0.0
        a_mb = a_vc = 0
        tracked, usage, opp = self.tracked, self.usage, ContainerKind.OPPORTUNISTIC
        for c in cs:
            r = c.resource
            t = tracked.get(c.id)
            if t is not None and t.kind is opp:
                h_mb, h_vc = h_mb + float(r.memory_mb), h_vc + float(r.vcores)
            else:
                g_mb, g_vc = g_mb - float(r.memory_mb), g_vc - float(r.vcores)
            u = usage.get(c.id)  # TU_t, or the demand of a container not measured yet (task_usage)
            if u is None:
                o_mb, o_vc = o_mb - float(r.memory_mb), o_vc - float(r.vcores)
            else:
                o_mb, o_vc = o_mb - u.memory_mb, o_vc - u.vcores
            a_mb, a_vc = a_mb + r.memory_mb, a_vc + r.vcores
        return _Sums(cs, Usage(g_mb, g_vc), Usage(o_mb, o_vc), Usage(h_mb, h_vc), Resources(a_mb, a_vc))

    def _guarantee(self, cs: list[Container], granted: list[Resources], capacity: Resources) -> list[Container]:
        """Opportunistic containers to kill so that the memory of this heartbeat's grants is really there.

        Sec. III-A: resources assigned as guaranteed are available throughout the task's lifetime.
        With usage read only at ticks, a normal grant can land on memory that opportunistic tasks use
        (OA_i < 0 after Alg. 2 line 10); Alg. 1 would find that memory contention only at the next
        tick, after the memory ran out, so the heartbeat applies its memory rule (every relief policy
        kills the most recently launched opportunistic task on memory contention) at once.
        """
        used = sum((self.task_usage(c).memory_mb for c in cs), 0.0) + sum(d.memory_mb for d in granted)
        opp = {c.id for c in cs if self.is_opportunistic(c.id)}
        out: list[Container] = []
        while used > capacity.memory_mb and opp:
            v = victim(cs, opp)
            assert v is not None
            opp.discard(v.id)
            out.append(v)
            used -= self.task_usage(v).memory_mb
        return out
