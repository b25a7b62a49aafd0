"""Python's copy of the ResourceManager's state, kept from full and delta requests (schema/README.md)."""

from __future__ import annotations

from yarnctl.bridge.wire import AskRow, NodeRow, QueueRow, WireRequest
from yarnctl.model import ANY, App, ClusterSnapshot, Locality, Ask, Queue, Resources
from yarnctl.state import ClusterState, StateError


# from this many alloc rows on (a full sync's thousands) one pass adds up the sums; below, each container's
# own `allocate` costs less than setting up that pass (both leave the same state: tests/state/test_bulk.py)
BULK = 16


class MirrorMismatch(Exception):
    """The mirror is not at the request's base or disagrees with the RM: the shim must resync."""


class Mirror:
    """Translates wire requests into the mutations of one ClusterState (the RM's state as the wire describes it)."""

    def __init__(self) -> None:
        self.seq: int | None = None  # the last request applied whole; None until a full request
        self.state = ClusterState()

    def invalidate(self) -> None:
        """Forget the sequence position: the next delta gets a resync, the next full request rebuilds."""
        self.seq = None

    def apply(self, req: WireRequest) -> None:
        """Bring the mirror to `req` (full: replace; delta: apply) or raise MirrorMismatch.

        A mismatch found part-way leaves the mirror invalid until the next full request; a `base`
        mismatch leaves it as it was (the request may be a late duplicate).
        """
        if req.full:
            self.state = ClusterState()
        elif self.seq is None:
            raise MirrorMismatch(f"no state yet (call {req.seq} is a delta on {req.base}): need full state")
        elif req.base != self.seq:
            raise MirrorMismatch(f"call {req.seq} is a delta on {req.base}, mirror is at {self.seq}")
        self.seq = None
        state = self.state
        if req.min is not None:
            state.min_allocation = Resources(req.min[0], req.min[1])
        # order matters: rows describe events since the last call, so an app or container may both
        # arrive and leave in one request; arrivals first, then what uses them, then departures
        try:
            if req.nodes:
                state.put_nodes(_nodes(req.nodes))
            if req.queues is not None:
                state.set_queues(_queue(q) for q in req.queues)
            for a in req.apps:
                state.add_app(App(a.id, a.queue, a.user, a.type, a.name, a.tags, a.submit_ms / 1000))
                state.set_active(a.id, a.active)
            for ask in req.asks:
                state.set_asks(ask.app, ask.priority, _ask_rows(ask))
            if len(req.alloc) >= BULK:
                state.allocate_all(req.alloc)
            else:
                for c in req.alloc:
                    state.allocate(c)
        except StateError as e:
            raise MirrorMismatch(str(e)) from None
        for d in req.done:
            state.release(d.container)  # unknown: it belonged to an app or node removed earlier
        for app_id in req.gone:
            state.remove_app(app_id)
        for node_id in req.lost:
            state.remove_node(node_id)
        self._check_used(req)
        self.seq = req.seq

    def _check_used(self, req: WireRequest) -> None:
        node = self.state.node(req.node)
        if node is None:
            raise MirrorMismatch(f"heartbeating node {req.node} is unknown")
        mine = (node.allocated.memory_mb, node.allocated.vcores, self.state.node_container_count(req.node))
        if mine != req.used:
            raise MirrorMismatch(f"node {req.node}: RM has {list(req.used)} allocated, mirror {list(mine)}")

    def snapshot(self, now_s: float) -> ClusterSnapshot:
        """A read-only ClusterSnapshot of the mirror, in O(changes) plus dict copies."""
        return self.state.snapshot(now_s)


def _ask_rows(ask: AskRow) -> tuple[Ask, ...]:
    """The asks of one (app, priority) table; none when its ANY count is 0.

    A priority whose ANY count is 0 cannot be allocated (FifoScheduler skips it), whatever its
    locals say, so it is dropped with the "count 0 and no locals" tables the README removes.
    """
    if ask.count == 0:
        return ()
    cap = Resources(ask.memory_mb, ask.vcores)
    rows = [Ask(ask.app, ask.priority, cap, ask.count, ANY, Locality.ANY, ask.relax)]
    for loc in ask.locals:
        level = Locality.RACK if loc.name.startswith("/") else Locality.NODE
        rows.append(Ask(ask.app, ask.priority, cap, loc.count, loc.name, level, loc.relax))
    return tuple(rows)


def _nodes(rows: tuple[NodeRow, ...]) -> list[tuple[str, str, Resources, Resources]]:
    """The node rows as `put_nodes` takes them; nodes of one size share one Resources (a full sync has a thousand)."""
    sizes: dict[tuple[int, int], Resources] = {}
    out = []
    for node_id, rack, mb, vc, reg_mb, reg_vc in rows:
        capacity = sizes.get((mb, vc))
        if capacity is None:
            capacity = sizes[mb, vc] = Resources(mb, vc)
        registered = sizes.get((reg_mb, reg_vc))
        if registered is None:
            registered = sizes[reg_mb, reg_vc] = Resources(reg_mb, reg_vc)
        out.append((node_id, rack, capacity, registered))
    return out


def _queue(q: QueueRow) -> Queue:
    return Queue(q.name, q.path, q.parent or None, q.leaf, q.running, q.capacity, q.max_capacity, q.abs_capacity,
                 q.abs_max_capacity, q.user_limit_percent, q.user_limit_factor, Resources(q.max_mb, q.max_vcores))
