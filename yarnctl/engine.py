"""One scheduling cycle: snapshot -> estimators -> policy -> validation -> accepted decision."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from yarnctl.model import (
    AM_PRIORITY,
    ANY,
    AppId,
    EMPTY_DECISION,
    Assignment,
    ClusterSnapshot,
    Decision,
    Kill,
    NodeId,
    NodeResize,
    Observation,
    RejectCode,
    Ask,
    Resources,
)
from yarnctl.model.frozen import quick_init
from yarnctl.policies import am_limit, queue_limit, waiting
from yarnctl.policies.contract import Estimator, Policy, Tunable, is_tunable
from yarnctl.policies.waiting import Wait, WaitCode

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Rejection:
    """One part of a decision the validator refused: its code (the shim's too) and the particulars."""

    item: Assignment | Kill | NodeResize
    code: RejectCode
    detail: str

    @property
    def reason(self) -> str:
        """The code and the particulars, as the log prints them."""
        return f"{self.code.value}: {self.detail}"


@quick_init
@dataclass(frozen=True, slots=True)
class Validation:
    """The part of a decision that may be applied, and the parts that may not."""

    accepted: Decision
    rejected: tuple[Rejection, ...] = ()


def validate(snap: ClusterSnapshot, decision: Decision, node_id: NodeId | None = None,
             held_back: frozenset[AppId] = frozenset()) -> Validation:
    """Split `decision` into what is safe to apply to `snap` and what is not, saying why.

    Applied in order resizes, kills, assignments (as the shim does). An assignment is refused
    whole when it names an unknown node, app or (app, priority) ask, asks for more
    containers than are outstanding, would exceed the node's capacity, (with `node_id`)
    targets any node but the one heartbeating, starts the AM of an app in `held_back`
    (beyond the AM-share limit, `policies/am_limit.py`), gives anything to an app its queue has not
    activated (`snap.inactive`), or would take its queue or an ancestor past its maximum capacity.
    """
    if decision.is_empty():
        return Validation(decision)
    rejected: list[Rejection] = []
    capacity: dict[NodeId, Resources] = {}
    used: dict[NodeId, Resources] = {}

    def node_state(nid: NodeId) -> tuple[Resources, Resources]:
        if nid not in used:
            node = snap.nodes[nid]
            capacity.setdefault(nid, node.capacity)
            used[nid] = node.allocated
        return capacity[nid], used[nid]

    resizes = []
    for r in decision.resizes:
        if r.node_id not in snap.nodes:
            rejected.append(Rejection(r, RejectCode.UNKNOWN_NODE, f"unknown node {r.node_id}"))
        elif r.capacity.any_negative():
            rejected.append(Rejection(r, RejectCode.BAD_SIZE, f"negative capacity {r.capacity}"))
        else:
            capacity[r.node_id] = r.capacity
            resizes.append(r)

    queue_used = queue_limit.usage(snap) if snap.queues and decision.assignments else {}
    kills, killed = [], set()
    for k in decision.kills:
        c = snap.containers.get(k.container_id)
        if c is None:
            rejected.append(Rejection(k, RejectCode.UNKNOWN_CONTAINER, f"unknown container {k.container_id}"))
        elif k.container_id in killed:
            rejected.append(Rejection(k, RejectCode.UNKNOWN_CONTAINER, f"container {k.container_id} killed twice"))
        else:
            killed.add(k.container_id)
            cap, u = node_state(c.node_id)
            used[c.node_id] = u - c.resource
            if queue_used and (app := snap.apps.get(c.app_id)) is not None:
                for path in queue_limit.paths(snap, app.queue, queue_used):  # the shim kills before it assigns
                    queue_used[path] = queue_used[path] - c.resource
            kills.append(k)

    assignments = []
    granted: dict[tuple[str, int], int] = {}
    for a in decision.assignments:
        problem = _assignment_problem(snap, a, node_id, granted, held_back)
        if problem is None:
            cap, u = node_state(a.node_id)
            req = _any_request(snap, a)
            assert req is not None  # _assignment_problem found it
            more = req.capability * a.count
            after = u + more
            if not after.fits_in(cap):
                problem = (RejectCode.NO_FIT, f"{a.count} x {req.capability} for {a.app_id} would exceed node "
                                              f"{a.node_id}: {u} of {cap} allocated")
            elif snap.queues and (over := queue_limit.over(snap, queue_used, a.app_id, more)) is not None:
                problem = RejectCode.QUEUE_MAX, over
            else:
                for path in queue_limit.paths(snap, snap.apps[a.app_id].queue, queue_used):
                    queue_used[path] = queue_used[path] + more
                used[a.node_id] = after
                granted[(a.app_id, a.priority)] = granted.get((a.app_id, a.priority), 0) + a.count
                assignments.append(a)
                continue
        rejected.append(Rejection(a, *problem))

    if not rejected:
        return Validation(decision)
    accepted = Decision(tuple(assignments), tuple(kills), tuple(resizes), decision.reasons)
    return Validation(accepted, tuple(rejected))


def _any_request(snap: ClusterSnapshot, a: Assignment) -> Ask | None:
    for r in snap.asks.get(a.app_id, ()):
        if r.priority == a.priority and r.resource_name == ANY:
            return r
    return None


def _assignment_problem(
    snap: ClusterSnapshot, a: Assignment, node_id: NodeId | None, granted: dict[tuple[str, int], int],
    held_back: frozenset[AppId] = frozenset(),
) -> tuple[RejectCode, str] | None:
    # checked in the shim's DecisionApplier order, so both refuse a row with the same code
    if a.count <= 0:
        return RejectCode.BAD_COUNT, f"non-positive count {a.count} for {a.app_id}"
    if a.node_id not in snap.nodes:
        return RejectCode.UNKNOWN_NODE, f"unknown node {a.node_id}"
    if node_id is not None and a.node_id != node_id:
        return RejectCode.WRONG_NODE, f"assignment to {a.node_id} while {node_id} is heartbeating"
    if a.app_id not in snap.apps:
        return RejectCode.UNKNOWN_APP, f"unknown app {a.app_id}"
    if a.app_id in snap.inactive:
        return RejectCode.AM_LIMIT, f"{a.app_id} is not yet activated by its queue (its AM limit)"
    if a.priority == AM_PRIORITY and a.app_id in held_back:
        return RejectCode.AM_LIMIT, f"the AM of {a.app_id} would take the AMs past their share of the cluster"
    req = _any_request(snap, a)
    if req is None:
        return RejectCode.UNKNOWN_PRIORITY, f"{a.app_id} has no outstanding request at priority {a.priority}"
    total = granted.get((a.app_id, a.priority), 0) + a.count
    if total > req.count:
        return (RejectCode.OVER_OUTSTANDING,
                f"{total} containers for {a.app_id} priority {a.priority}, only {req.count} requested")
    if not req.relax_locality and not waiting.named(snap, a.app_id, a.priority, a.node_id):
        return RejectCode.LOCALITY, f"{a.app_id} priority {a.priority} does not relax locality to {a.node_id}"
    return None


@dataclass
class Engine:
    """Runs one policy (and its estimators) and validates everything it returns."""

    policy: Policy
    estimators: Sequence[Estimator] = ()
    stats: Counter[str] = field(default_factory=Counter)
    max_am_share: float | None = None  # None: the policy's own (Policy.max_am_share)
    # decision items refused, by RejectCode value: the one count the bridge's metrics and status report
    rejected_by: Counter[str] = field(default_factory=Counter)
    # the snapshot `explain` last read, with its held-back apps and queue-capped view (several apps per snapshot)
    _explained: tuple[ClusterSnapshot, frozenset[AppId], ClusterSnapshot] | None = field(default=None, repr=False)

    @property
    def am_share(self) -> float:
        """The share of cluster memory AMs may hold: the engine's override, else the policy's own."""
        return self.policy.max_am_share if self.max_am_share is None else self.max_am_share

    @property
    def tunable(self) -> bool:
        """True when the policy takes control-loop observations."""
        return is_tunable(self.policy)

    @property
    def observes(self) -> bool:
        """True when the policy is tunable and its `tune` reads the observation (`PolicyBase.observes`)."""
        return self.tunable and self.policy.observes

    def tune(self, obs: Observation) -> bool:
        """Feed `obs` to a tunable policy; True when its tuning values changed (a failing tune is logged and counted)."""
        policy = self.policy
        if not isinstance(policy, Tunable):
            return False
        self.stats["tunes"] += 1
        try:
            before = dict(policy.tuning())
            policy.tune(am_limit.observed(obs, self.am_share))
            return dict(policy.tuning()) != before
        except Exception:  # like decide: a policy bug must not stop the control loop
            self.stats["tune_errors"] += 1
            log.exception("policy %s failed to tune at t=%.1f; keeping its previous values", self.policy.name, obs.at_s)
            return False

    def tuning(self) -> dict[str, float]:
        """The policy's current tuning values ({} for a policy that does not tune, or one that fails to say)."""
        policy = self.policy
        if not isinstance(policy, Tunable):
            return {}
        try:
            return {str(k): float(v) for k, v in policy.tuning().items()}
        except Exception:
            log.exception("policy %s failed to report its tuning values", self.policy.name)
            return {}

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Validation:
        """The validated decision for `node_id`'s heartbeat; a failing policy yields an empty one."""
        self.stats["decisions"] += 1
        node = snap.nodes.get(node_id)
        if node is not None and node.capacity != (node.registered or node.capacity) and not self.policy.resizes_nodes:
            # an earlier policy (feedback, OPERA, a restarted server) left this node rescaled and this one does
            # not manage capacity: give the node back its registered size before placing anything on it, so
            # a policy that knows nothing of resizes never fills room nobody means to offer any more
            self.stats["restores"] += 1
            return Validation(Decision(resizes=(NodeResize(node_id, node.registered or node.capacity),)))
        for e in self.estimators:
            e.observe(snap)
        held = am_limit.held_back(snap, self.am_share)
        if snap.inactive:
            held = held | snap.inactive  # the scheduler's own AM limit (CapacityScheduler's activation)
        try:
            decision = self.policy.decide(queue_limit.within(am_limit.without(snap, held)), node_id)
        except Exception:  # a policy bug must not stop the scheduler; it is logged and counted
            self.stats["policy_errors"] += 1
            log.exception("policy %s failed on node %s; deciding nothing", self.policy.name, node_id)
            return Validation(EMPTY_DECISION)
        if not isinstance(decision, Decision):
            self.stats["policy_errors"] += 1
            log.error("policy %s returned %r, not a Decision", self.policy.name, type(decision))
            return Validation(EMPTY_DECISION)
        result = validate(snap, decision, node_id, held)
        if result.rejected:
            self.stats["rejections"] += len(result.rejected)
            for r in result.rejected:
                self.rejected_by[r.code.value] += 1
                log.warning("policy %s: rejected %s: %s", self.policy.name, r.item, r.reason)
        return result

    def explain(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait | None:
        """Why `app_id` got nothing at `node_id`'s heartbeat under `decision` (None: it asks for nothing, or got some).

        The reasons that hold for every policy first (AM limit, queue maximum, placement: `policies/waiting.py`),
        then the policy's own, on the snapshot it saw.
        """
        ask = waiting.head_ask(snap, app_id)
        if ask is None or app_id not in snap.apps or any(a.app_id == app_id for a in decision.assignments):
            return None
        held, view = self._explain_view(snap)
        if app_id in held:
            return _am_limit_wait(snap, app_id, ask, self.am_share)
        if (capped := waiting.head_ask(view, app_id)) is None or capped.priority != ask.priority:
            queue = snap.apps[app_id].queue
            room = queue_limit.room(snap).get(queue, 0)
            return waiting.wait(WaitCode.QUEUE_MAX, f"queue {queue} (or one above it) is at its maximum capacity: "
                                f"{room} MB of room left, its ask is {waiting.size(ask.capability)}",
                                queue=queue, room_mb=room, ask_mb=ask.capability.memory_mb)
        placed = waiting.placement(snap, node_id, app_id, ask)
        if placed is not None:
            return placed
        try:
            return self.policy.why_waiting(am_limit.without(view, held), node_id, app_id, decision)
        except Exception:  # as in decide: a policy bug must not stop the scheduler
            self.stats["explain_errors"] += 1
            if self.stats["explain_errors"] == 1 or self.stats["explain_errors"] % 1000 == 0:  # not 40 a second
                log.exception("policy %s failed to say why %s waits (%d times so far)", self.policy.name, app_id,
                              self.stats["explain_errors"])
            return waiting.wait(WaitCode.HELD, f"{self.policy.name} placed nothing on {node_id} (it failed to say why)",
                                node=node_id)

    def end_explaining(self) -> None:
        """Forget the view `explain` keeps for its snapshot: call after explaining several apps on one snapshot.

        Kept, it would hold that snapshot's maps, and the store would copy each before writing it (`ClusterState._own`).
        """
        self._explained = None

    def _explain_view(self, snap: ClusterSnapshot) -> tuple[frozenset[AppId], ClusterSnapshot]:
        """The apps held back by an AM limit and the snapshot capped at the queues' room, once per snapshot."""
        cached = self._explained
        if cached is not None and cached[0] is snap:
            return cached[1], cached[2]
        held = am_limit.held_back(snap, self.am_share) | snap.inactive
        view = queue_limit.within(snap) if snap.queues else snap
        self._explained = (snap, held, view)
        return held, view


def _am_limit_wait(snap: ClusterSnapshot, app_id: AppId, ask: Ask, am_share: float) -> Wait:
    if app_id in snap.inactive:
        queue = snap.apps[app_id].queue
        return waiting.wait(WaitCode.AM_LIMIT, f"queue {queue} has not activated it: its AMs are at the queue's "
                            f"maximum-am-resource-percent", queue=queue)
    limit_mb = int(am_share * snap.capacity.memory_mb)
    # held back in submit order: an earlier AM that does not fit keeps a later, smaller one waiting too
    whose = ("its AM" if snap.am_allocated.memory_mb + ask.capability.memory_mb > limit_mb
             else "an earlier app's AM, ahead of its own,")
    return waiting.wait(WaitCode.AM_LIMIT, f"{whose} would take the AMs past their share: AMs hold "
                        f"{snap.am_allocated.memory_mb} MB of the {limit_mb} MB allowed ({am_share:.0%} of the cluster); "
                        f"its AM is {waiting.size(ask.capability)}", am_mb=ask.capability.memory_mb,
                        am_held_mb=snap.am_allocated.memory_mb, limit_mb=limit_mb, share=am_share)
