"""Python's copy of the ResourceManager's state, kept from full and delta requests (schema/README.md)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from yarnctl.bridge.wire import AskRow, WireRequest
from yarnctl.model import (
    ANY,
    App,
    AppId,
    ClusterSnapshot,
    Container,
    ContainerId,
    Locality,
    Node,
    NodeId,
    Request,
    Resources,
    ZERO,
)


class MirrorMismatch(Exception):
    """The mirror is not at the request's base or disagrees with the RM: the shim must resync."""


_EMPTY_APPS: Mapping[AppId, App] = MappingProxyType({})


class Mirror:
    """The RM state as the wire describes it, with cheap snapshots (dict copies, as the simulator does)."""

    def __init__(self) -> None:
        self.seq: int | None = None  # the last request applied whole; None until a full request
        self._reset()

    def _reset(self) -> None:
        self.min_allocation = Resources(1024, 1)
        self.capacity = ZERO
        self._racks: dict[NodeId, tuple[str, Resources]] = {}
        self._nodes: dict[NodeId, Node] = {}  # frozen, `allocated` kept current
        self._node_cs: dict[NodeId, dict[ContainerId, Container]] = {}
        self._node_views: dict[NodeId, tuple[Container, ...]] = {}
        self._dirty: set[NodeId] = set()
        self._apps: dict[AppId, App] = {}
        self._apps_view: Mapping[AppId, App] | None = _EMPTY_APPS
        self._tables: dict[AppId, dict[int, tuple[Request, ...]]] = {}
        self._requests: dict[AppId, tuple[Request, ...]] = {}
        self._containers: dict[ContainerId, Container] = {}
        self._app_cids: dict[AppId, set[ContainerId]] = {}
        self._app_alloc: dict[AppId, Resources] = {}

    def invalidate(self) -> None:
        """Forget the sequence position: the next delta gets a resync, the next full request rebuilds."""
        self.seq = None

    def apply(self, req: WireRequest) -> None:
        """Bring the mirror to `req` (full: replace; delta: apply) or raise MirrorMismatch.

        A mismatch found part-way leaves the mirror invalid until the next full request; a `base`
        mismatch leaves it as it was (the request may be a late duplicate).
        """
        if req.full:
            self._reset()
        elif self.seq is None:
            raise MirrorMismatch(f"no state yet (call {req.seq} is a delta on {req.base}): need full state")
        elif req.base != self.seq:
            raise MirrorMismatch(f"call {req.seq} is a delta on {req.base}, mirror is at {self.seq}")
        self.seq = None
        if req.min is not None:
            self.min_allocation = Resources(req.min[0], req.min[1])
        # order matters: rows describe events since the last call, so an app or container may both
        # arrive and leave in one request; arrivals first, then what uses them, then departures
        for n in req.nodes:
            self._put_node(n.id, n.rack, Resources(n.memory_mb, n.vcores), Resources(n.registered_mb, n.registered_vcores))
        if req.apps:
            for a in req.apps:
                self._apps[a.id] = App(a.id, a.queue, a.user, a.type, a.name, a.tags, a.submit_ms / 1000)
            self._apps_view = None
        for ask in req.asks:
            self._put_ask(ask)
        for c in req.alloc:
            self._add_container(Container(c.container, c.app, c.node, c.priority, Resources(c.memory_mb, c.vcores),
                                          c.ms / 1000, is_am=c.am))
        for d in req.done:
            gone_c = self._containers.get(d.container)
            if gone_c is not None:  # unknown: it belonged to an app or node removed earlier
                self._remove_container(gone_c)
        for app_id in req.gone:
            self._remove_app(app_id)
        for node_id in req.lost:
            self._remove_node(node_id)
        self._check_used(req)
        self.seq = req.seq

    def _put_node(self, node_id: NodeId, rack: str, cap: Resources, registered: Resources) -> None:
        old = self._nodes.get(node_id)
        if old is not None:
            self.capacity = self.capacity - old.capacity
            self._nodes[node_id] = Node(node_id, rack, cap, old.allocated, registered)
        else:
            self._nodes[node_id] = Node(node_id, rack, cap, registered=registered)
            self._node_cs[node_id] = {}
            self._node_views[node_id] = ()
        self.capacity = self.capacity + cap

    def _put_ask(self, ask: AskRow) -> None:
        if ask.app not in self._apps:
            raise MirrorMismatch(f"asks: unknown app {ask.app}")
        tables = self._tables.setdefault(ask.app, {})
        # a priority whose ANY count is 0 cannot be allocated (FifoScheduler skips it), whatever its
        # locals say, so it is dropped with the "count 0 and no locals" tables the README removes
        if ask.count == 0:
            tables.pop(ask.priority, None)
        else:
            cap = Resources(ask.memory_mb, ask.vcores)
            rows = [Request(ask.app, ask.priority, cap, ask.count, ANY, Locality.ANY, ask.relax)]
            for loc in ask.locals:
                level = Locality.RACK if loc.name.startswith("/") else Locality.NODE
                rows.append(Request(ask.app, ask.priority, cap, loc.count, loc.name, level, loc.relax))
            tables[ask.priority] = tuple(rows)
        if tables:
            self._requests[ask.app] = tuple(r for p in sorted(tables) for r in tables[p])
        else:
            del self._tables[ask.app]
            self._requests.pop(ask.app, None)

    def _add_container(self, c: Container) -> None:
        node = self._nodes.get(c.node_id)
        if node is None:
            raise MirrorMismatch(f"alloc: container {c.id} on unknown node {c.node_id}")
        if c.app_id not in self._apps:
            raise MirrorMismatch(f"alloc: container {c.id} of unknown app {c.app_id}")
        if c.id in self._containers:
            raise MirrorMismatch(f"alloc: container {c.id} allocated twice")
        self._containers[c.id] = c
        self._node_cs[c.node_id][c.id] = c
        self._nodes[c.node_id] = Node(node.id, node.rack, node.capacity, node.allocated + c.resource, node.registered)
        self._dirty.add(c.node_id)
        self._app_cids.setdefault(c.app_id, set()).add(c.id)
        self._app_alloc[c.app_id] = self._app_alloc.get(c.app_id, ZERO) + c.resource

    def _remove_container(self, c: Container) -> None:
        del self._containers[c.id]
        del self._node_cs[c.node_id][c.id]
        node = self._nodes[c.node_id]
        self._nodes[c.node_id] = Node(node.id, node.rack, node.capacity, node.allocated - c.resource, node.registered)
        self._dirty.add(c.node_id)
        cids = self._app_cids[c.app_id]
        cids.discard(c.id)
        if cids:
            self._app_alloc[c.app_id] = self._app_alloc[c.app_id] - c.resource
        else:  # absent rather than zero, exactly as a full request would build it
            del self._app_cids[c.app_id]
            del self._app_alloc[c.app_id]

    def _remove_app(self, app_id: AppId) -> None:
        if self._apps.pop(app_id, None) is None:
            return
        self._apps_view = None
        self._tables.pop(app_id, None)
        self._requests.pop(app_id, None)
        for cid in list(self._app_cids.get(app_id, ())):
            self._remove_container(self._containers[cid])

    def _remove_node(self, node_id: NodeId) -> None:
        node = self._nodes.get(node_id)
        if node is None:
            return
        for c in list(self._node_cs[node_id].values()):
            self._remove_container(c)
        del self._nodes[node_id], self._node_cs[node_id], self._node_views[node_id]
        self._dirty.discard(node_id)
        self.capacity = self.capacity - node.capacity

    def _check_used(self, req: WireRequest) -> None:
        node = self._nodes.get(req.node)
        if node is None:
            raise MirrorMismatch(f"heartbeating node {req.node} is unknown")
        mine = (node.allocated.memory_mb, node.allocated.vcores, len(self._node_cs[req.node]))
        if mine != req.used:
            raise MirrorMismatch(f"node {req.node}: RM has {list(req.used)} allocated, mirror {list(mine)}")

    def snapshot(self, now_s: float) -> ClusterSnapshot:
        """A read-only ClusterSnapshot of the mirror, in O(changes) plus dict copies."""
        for node_id in self._dirty:
            self._node_views[node_id] = tuple(self._node_cs[node_id].values())
        self._dirty.clear()
        if self._apps_view is None:  # rebuilt only when an app came or went
            ordered = sorted(self._apps.values(), key=lambda a: (a.submit_s, a.id))
            self._apps_view = MappingProxyType({a.id: a for a in ordered})
        return ClusterSnapshot(
            now_s,
            MappingProxyType(dict(self._nodes)),
            self._apps_view,
            MappingProxyType(dict(self._requests)),
            MappingProxyType(dict(self._node_views)),
            MappingProxyType(dict(self._app_alloc)),
            self.min_allocation,
            self.capacity,
        )
