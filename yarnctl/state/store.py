"""The ResourceManager's bookkeeping, kept by one store that the simulator and the bridge's mirror both drive.

`ClusterState` owns nodes, applications, ask tables, containers and per-app allocation, and
offers the RM's few mutations: a node added, resized or removed; an app added or removed; an app's
asks set; a container allocated or released (a kill is a release the scheduler chose). It is the
only code that builds a `ClusterSnapshot`, so a policy sees the same state whichever path drove it.

Two answers that used to differ between paths, fixed here:
- Apps iterate in submit order, then id (`ClusterSnapshot.apps`), whatever order they arrived in.
- `app_allocated` lists only apps that hold something: an app without containers is absent, never
  zero (so "running" means "present", as the RM counts it).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from types import MappingProxyType
from typing import Any, TypeVar

from yarnctl.model import (AM_PRIORITY, ANY, ZERO, App, AppId, ClusterSnapshot, Container, ContainerId, Held, Journal,
                           Node, NodeId, Queue, Ask, Resources)


class StateError(Exception):
    """A mutation that does not fit the state (unknown node or app, a container allocated twice)."""


K = TypeVar("K")
_tuple_new = tuple.__new__
_EMPTY_APPS: Mapping[AppId, App] = MappingProxyType({})


def _refs_when_sole() -> int:
    """What `getrefcount` reads in `ClusterState._own` for a map only the store holds (-1: unknown, always copy)."""
    refs = getattr(sys, "getrefcount", None)
    if refs is None:  # not CPython: no way to tell that nobody else reads a map
        return -1

    def probe() -> int:
        holder = type("Holder", (), {})()
        holder.m = {}
        m = getattr(holder, "m")  # the very shape of `_own`: the attribute, a local and the argument
        return int(refs(m))

    # a tracer that reads a frame's locals (a debugger's variable view) adds a reference: counted here, it would
    # pass a map a snapshot still reads for one only the store holds. At run time it only makes `_own` copy more
    trace, profile = sys.gettrace(), sys.getprofile()
    sys.settrace(None)
    sys.setprofile(None)
    try:
        return probe()
    finally:
        sys.settrace(trace)
        sys.setprofile(profile)


_SOLE = _refs_when_sole()
_getrefcount = getattr(sys, "getrefcount", lambda m: _SOLE + 1)


def _app_key(app: App) -> tuple[float, AppId]:
    return app.submit_s, app.id


def _add(sums: dict[K, Resources], key: K, r: Resources) -> None:
    old = sums.get(key)
    total = r if old is None else old + r  # Resources is immutable: the first one is shared, not copied
    if total.is_zero():
        sums.pop(key, None)
    else:
        sums[key] = total


def _take(sums: dict[K, Resources], key: K, r: Resources) -> None:
    """`_add` of `r * -1`, without building that vector."""
    total = sums.get(key, ZERO) - r
    if total.is_zero():
        sums.pop(key, None)
    else:
        sums[key] = total


def _plus_n(sums: dict[K, list[int]], key: K, mb: int, vc: int) -> None:
    """Add `mb` and `vc` to a running [MB, vcores] sum."""
    s = sums.get(key)
    if s is None:
        sums[key] = [mb, vc]
    else:
        s[0] += mb
        s[1] += vc


_by_node = attrgetter("node_id", "resource.memory_mb", "resource.vcores")
_by_app = attrgetter("app_id", "priority", "resource.memory_mb", "resource.vcores", "is_am")


def _merge(sums: dict[K, Resources], added: dict[K, list[int]]) -> None:
    """`_add` of each running sum, in the order its key first came."""
    for key, (mb, vc) in added.items():
        _add(sums, key, Resources(mb, vc))


class _Sums:
    """What a batch of containers adds to the store's sums, as plain integers, keyed in first-seen order.

    A key enters a map where `launch` would first put it: at once for node allocation, at its first
    non-empty container for the app's and the `_add` sums.
    """

    def __init__(self) -> None:
        self.node: dict[NodeId, list[int]] = {}
        self.app: dict[AppId, list[int]] = {}
        self.queue: dict[str, list[int]] = {}
        self.user: dict[tuple[str, str], list[int]] = {}
        self.prio: dict[AppId, dict[int, list[int]]] = {}  # [containers, MB, vcores]
        self.am: list[int] = [0, 0]
        self.app_am: dict[AppId, list[int]] = {}
        self.queue_am: dict[str, list[int]] = {}
        self.ams = 0

    def add_all(self, listed: Sequence[Container], apps: Mapping[AppId, App]) -> None:
        """Count the containers, grouped first: a full sync's thousands come in a few sizes per node and app."""
        node_sums = self.node
        # Counter counts at C speed and keeps each key where it first came, so every sum below gets its keys
        # in the order one container at a time would have given them
        for (node_id, mb, vc), n in Counter(map(_by_node, listed)).items():
            s = node_sums.get(node_id)
            if s is None:
                node_sums[node_id] = [n * mb, n * vc]
            else:
                s[0] += n * mb
                s[1] += n * vc
        app_sums, queue_sums, user_sums, prio, app_am, queue_am = (
            self.app, self.queue, self.user, self.prio, self.app_am, self.queue_am)
        for (app_id, priority, mb, vc, is_am), n in Counter(map(_by_app, listed)).items():
            n_mb, n_vc = n * mb, n * vc
            nonzero = mb or vc
            if nonzero:
                app = apps[app_id]
                _plus_n(app_sums, app_id, n_mb, n_vc)
                _plus_n(queue_sums, app.queue, n_mb, n_vc)
                _plus_n(user_sums, (app.queue, app.user), n_mb, n_vc)
            by_priority = prio.get(app_id)
            if by_priority is None:
                by_priority = prio[app_id] = {}
            held = by_priority.get(priority)
            if held is None:
                by_priority[priority] = [n, n_mb, n_vc]
            else:
                held[0] += n
                held[1] += n_mb
                held[2] += n_vc
            if is_am:
                self.ams += n
                self.am[0] += n_mb
                self.am[1] += n_vc
                if nonzero:  # `app` read above
                    _plus_n(app_am, app_id, n_mb, n_vc)
                    _plus_n(queue_am, app.queue, n_mb, n_vc)

    def merge_into(self, state: ClusterState) -> None:
        """Add the sums to `state`'s, as `launch` would have one container at a time."""
        for node_id, (mb, vc) in self.node.items():
            state._node_alloc[node_id] = state._node_alloc[node_id] + Resources(mb, vc)
            state._dirty.add(node_id)
        app_alloc, prio_alloc = state._own("_app_alloc"), state._own("_prio_alloc")
        for app_id, (mb, vc) in self.app.items():
            held = app_alloc.get(app_id)
            app_alloc[app_id] = Resources(mb, vc) if held is None else held + Resources(mb, vc)
        _merge(state._own("_queue_alloc"), self.queue)
        _merge(state._own("_user_alloc"), self.user)
        for app_id, added in self.prio.items():
            old = prio_alloc.get(app_id)
            by_priority = {} if old is None else old.copy()
            for p, (n, mb, vc) in added.items():
                was, total = by_priority.get(p, (0, ZERO))
                by_priority[p] = Held(was + n, total + Resources(mb, vc))
            prio_alloc[app_id] = MappingProxyType(by_priority)
        if self.ams:
            state._am_allocated = state._am_allocated + Resources(self.am[0], self.am[1])
            _merge(state._app_am, self.app_am)
            _merge(state._queue_am, self.queue_am)
            state._am_views = None


class ClusterState:
    """Nodes, apps, asks and containers as the RM keeps them, with cheap snapshots."""

    def __init__(self, min_allocation: Resources = Resources(1024, 1)) -> None:
        self.min_allocation = min_allocation
        self.capacity = ZERO
        # a node's frozen record is rebuilt when read after its allocation changed (`_dirty`), not on
        # every launch and release: most heartbeats launch one or two containers and read one node
        self._nodes: dict[NodeId, Node] = {}
        self._node_alloc: dict[NodeId, Resources] = {}
        self._node_cs: dict[NodeId, dict[ContainerId, Container]] = {}
        self._node_views: dict[NodeId, tuple[Container, ...]] = {}
        self._dirty: set[NodeId] = set()
        self._apps: dict[AppId, App] = {}
        self._apps_view: Mapping[AppId, App] | None = _EMPTY_APPS
        self._in_order = True  # `_apps` iterates in submit order then id (arrivals almost always come so)
        self._tables: dict[AppId, dict[int, tuple[Ask, ...]]] = {}
        self._asks: dict[AppId, tuple[Ask, ...]] = {}
        # the apps with asks, in submit order: rebuilt only when an app comes, goes or starts or stops asking
        # (thousands of times in a run with tens of thousands of snapshots), not walked out of every app at each
        self._pending_view: tuple[App, ...] | None = ()
        self._containers: dict[ContainerId, Container] = {}
        self._app_alloc: dict[AppId, Resources] = {}
        # what each queue and each (queue, user) holds, kept as containers come and go: the sums every
        # queue-aware policy used to rebuild from `app_allocated` at each heartbeat
        self._queue_alloc: dict[str, Resources] = {}
        self._user_alloc: dict[tuple[str, str], Resources] = {}
        # per app, per priority: count and sum; each app's inner map is replaced, never changed in place, so a
        # snapshot's shallow copy stays what it was
        self._prio_alloc: dict[AppId, MappingProxyType[int, Held]] = {}
        # what ApplicationMasters hold and ask for, kept as totals so the AM-share limit costs O(1) when far
        self._am_allocated = ZERO
        self._app_am: dict[AppId, Resources] = {}
        self._queue_am: dict[str, Resources] = {}
        # their read-only copies, rebuilt only after an AM came or went: far rarer than snapshots
        self._am_views: tuple[Mapping[AppId, Resources], Mapping[str, Resources]] | None = None
        self._am_asks: dict[AppId, Resources] = {}
        self._am_asked = ZERO
        # the scheduler's queue tree (replaced whole when it changes) and the apps it has not activated
        self._queues: Mapping[str, Queue] = MappingProxyType({})
        self._inactive: set[AppId] = set()
        self._inactive_view: frozenset[AppId] = frozenset()
        # bumped by every mutation: two snapshots with one version hold the same state (the long-term
        # queue tracker skips re-reading the heartbeats that changed nothing)
        self.version = 0
        self.journal = Journal()  # which app each app-level mutation touched, for orderings kept across heartbeats
        # the last snapshot's version, minimum allocation, fields and container index: one state's snapshots share them
        # (its maps are the store's own, read-only: `_own` copies one before writing it only while someone reads it)
        self._views: tuple[int, Resources, tuple[Any, ...], list[Mapping[ContainerId, Container]]] | None = None
        self.copies = 0  # maps copied by `_own` because a snapshot (or anyone) still read them

    def _own(self, name: str) -> dict[Any, Any]:
        """The store's map `name`, ready to write: first replaced by a copy if anything besides the store holds it.

        Snapshots are handed the store's maps themselves, read-only (`_fields`), so every write to one of
        them goes through here. A map nobody else holds (the snapshot that read it is gone, as in the
        simulator, which drops it before applying the decision) is written in place; one still held
        (a kept snapshot, a view or an iterator over it) keeps its contents, and the store writes a copy.
        CPython's reference count tells the two apart (`_SOLE`, calibrated on this very shape at import).
        """
        self._views = None  # the last snapshot's fields hold the map too, and go stale with this write
        m: dict[Any, Any] = getattr(self, name)
        if _getrefcount(m) > _SOLE:
            m = m.copy()
            setattr(self, name, m)
            self.copies += 1
        return m

    # ------------------------------------------------------------------ reads

    def node(self, node_id: NodeId) -> Node | None:
        """The node as a policy would see it now, or None."""
        if node_id in self._dirty:
            self._refresh(node_id)
        return self._nodes.get(node_id)

    def node_allocated(self, node_id: NodeId) -> Resources:
        """What the node's containers hold now (zero for an unknown node)."""
        return self._node_alloc.get(node_id, ZERO)

    def node_container_count(self, node_id: NodeId) -> int:
        """How many live containers `node_id` holds."""
        return len(self._node_cs.get(node_id, ()))

    def container(self, container_id: ContainerId) -> Container | None:
        """A live container, or None."""
        return self._containers.get(container_id)

    def app_ids(self) -> list[AppId]:
        """Every app, in submit order then id."""
        if not self._in_order:
            self._ordered_apps()
        return list(self._apps)

    def asks(self, app_id: AppId) -> tuple[Ask, ...]:
        """The app's outstanding asks, ascending priority (ANY first within one)."""
        return self._asks.get(app_id, ())

    def allocated(self, app_id: AppId) -> Resources:
        """What the app holds now."""
        return self._app_alloc.get(app_id, ZERO)

    # ------------------------------------------------------------------ nodes

    def put_node(self, node_id: NodeId, rack: str, capacity: Resources, registered: Resources | None = None) -> None:
        """A node joins, or an existing one changes rack, capacity or registered size (what it holds stays).

        `registered` is the size the node joined with or an admin set; None for a new node means the
        source does not know it (the RM REST API), for a known node that it did not change.
        """
        old = self.node(node_id)
        if old is None:
            self._own("_nodes")[node_id] = Node(node_id, rack, capacity, ZERO, registered)
            self._node_alloc[node_id] = ZERO
            self._node_cs[node_id] = {}
            self._own("_node_views")[node_id] = ()
        else:
            self.capacity = self.capacity - old.capacity
            self._own("_nodes")[node_id] = Node(node_id, rack, capacity, old.allocated,
                                       old.registered if registered is None else registered)
        self.capacity = self.capacity + capacity
        self.version += 1

    def put_nodes(self, nodes: Iterable[tuple[NodeId, str, Resources, Resources | None]]) -> None:
        """`put_node` of each (id, rack, capacity, registered) in turn, new nodes' capacity summed once (a full sync)."""
        known, views = self._own("_nodes"), self._own("_node_views")
        alloc, on_node = self._node_alloc, self._node_cs
        mb = vc = added = 0
        for node_id, rack, capacity, registered in nodes:
            if node_id in known:
                known = views = None  # type: ignore[assignment]  # held here, put_node's `_own` would copy them
                self.put_node(node_id, rack, capacity, registered)
                known, views = self._own("_nodes"), self._own("_node_views")
                continue
            known[node_id] = Node(node_id, rack, capacity, ZERO, registered)
            alloc[node_id] = ZERO
            on_node[node_id] = {}
            views[node_id] = ()
            mb += capacity.memory_mb
            vc += capacity.vcores
            added += 1
        if added:
            self.capacity = self.capacity + Resources(mb, vc)
            self.version += added

    def resize_node(self, node_id: NodeId, capacity: Resources) -> None:
        """A policy (or an admin) sets the capacity a node offers; its registered size stays."""
        node = self._node_or_fail(node_id)
        self.put_node(node_id, node.rack, capacity, node.registered)

    def remove_node(self, node_id: NodeId) -> list[Container]:
        """A node is lost: it and its containers go; returns those containers."""
        node = self._nodes.get(node_id)
        if node is None:
            return []
        gone = list(self._node_cs[node_id].values())
        for c in gone:
            self._release(c)
        del self._own("_nodes")[node_id], self._node_alloc[node_id], self._node_cs[node_id]
        del self._own("_node_views")[node_id]
        self._dirty.discard(node_id)
        self.capacity = self.capacity - node.capacity
        self.version += 1
        return gone

    # ------------------------------------------------------------------ apps and asks

    def add_app(self, app: App) -> None:
        """An app is accepted, or its record changes (an iterative job's next stage): it keeps its place."""
        old = self._apps.get(app.id)
        if old is not None:
            if _app_key(old) != _app_key(app):
                self._in_order = False
            held = self._app_alloc.get(app.id)
            if held is not None and (old.queue, old.user) != (app.queue, app.user):
                self._count(old, -1, held)  # a moved app takes what it holds to its new queue
                self._count(app, 1, held)
                am = self._app_am.get(app.id)
                if am is not None:
                    _take(self._queue_am, old.queue, am)
                    _add(self._queue_am, app.queue, am)
                    self._am_views = None
        elif self._in_order and self._apps and _app_key(app) < _app_key(next(reversed(self._apps.values()))):
            self._in_order = False
        self._apps[app.id] = app
        self._apps_view = self._pending_view = None
        self.version += 1
        self.journal.note(app.id)

    def set_queues(self, queues: Iterable[Queue]) -> None:
        """The scheduler's whole queue tree, replacing the one before (none: a scheduler without queues)."""
        # apps name leaves by short name, and only leaves' names are unique in Hadoop 2.7: a parent sharing one
        # gives way (the shim still checks that parent's maximum)
        self._queues = MappingProxyType({q.name: q for q in sorted(queues, key=lambda q: q.leaf)})
        self.version += 1

    def set_active(self, app_id: AppId, active: bool) -> None:
        """Whether the scheduler has activated the app (within its queue's AM limit); unknown apps are ignored."""
        if app_id not in self._apps or (app_id not in self._inactive) == active:
            return
        if active:
            self._inactive.discard(app_id)
        else:
            self._inactive.add(app_id)
        self._inactive_view = frozenset(self._inactive)
        self.version += 1
        self.journal.note(app_id)

    def remove_app(self, app_id: AppId) -> list[Container]:
        """An app leaves with its asks and containers; returns those containers."""
        if app_id not in self._apps:
            return []
        # an app with no container has no per-priority count (empty containers have one): no scan for finished apps
        gone = [c for c in self._containers.values() if c.app_id == app_id] if app_id in self._prio_alloc else []
        for c in gone:
            self._release(c)  # while the app is known, so its queue's and user's sums go down
        del self._apps[app_id]
        self._apps_view = self._pending_view = None
        if app_id in self._inactive:
            self._inactive.discard(app_id)
            self._inactive_view = frozenset(self._inactive)
        self.version += 1
        self.journal.note(app_id)
        self._tables.pop(app_id, None)
        if app_id in self._asks:
            del self._own("_asks")[app_id]
        self._note_am_ask(app_id, ())
        return gone

    def set_asks(self, app_id: AppId, priority: int, rows: Iterable[Ask]) -> None:
        """Replace the app's ask table at `priority` (its ANY row first); no rows removes it."""
        if app_id not in self._apps:
            raise StateError(f"asks: unknown app {app_id}")
        tables = self._tables.get(app_id)
        if tables is None:  # none yet, or only the flat form set_any_asks keeps: split it by priority
            tables = self._tables[app_id] = {}
            for r in self._asks.get(app_id, ()):
                tables[r.priority] = tables.get(r.priority, ()) + (r,)
        table = tuple(rows)
        if table:
            tables[priority] = table
        else:
            tables.pop(priority, None)
        self._publish(app_id, tables)

    def set_app_asks(self, app_id: AppId, rows: Iterable[Ask]) -> None:
        """Replace every ask table of the app at once."""
        if app_id not in self._apps:
            raise StateError(f"asks: unknown app {app_id}")
        tables: dict[int, list[Ask]] = {}
        for r in rows:
            tables.setdefault(r.priority, []).append(r)
        self._tables[app_id] = {p: tuple(sorted(rs, key=lambda r: r.resource_name != ANY)) for p, rs in tables.items()}
        self._publish(app_id, self._tables[app_id])

    def set_any_asks(self, app_id: AppId, rows: tuple[Ask, ...]) -> None:
        """Replace every ask table of the app with off-switch asks only, one per priority, ascending.

        The simulator's asks (it places no locality); the caller keeps that form, which is already the
        published one, so this is the cheap path of `set_app_asks`.
        """
        if app_id not in self._apps:
            raise StateError(f"asks: unknown app {app_id}")
        self._tables.pop(app_id, None)  # rebuilt from the flat form if the per-priority path needs it
        if (app_id in self._asks) != bool(rows):
            self._pending_view = None
        if rows:
            self._own("_asks")[app_id] = rows
        elif app_id in self._asks:
            del self._own("_asks")[app_id]
        self._note_am_ask(app_id, rows)
        self.version += 1
        self.journal.note(app_id)

    def _publish(self, app_id: AppId, tables: dict[int, tuple[Ask, ...]]) -> None:
        if (app_id in self._asks) != bool(tables):
            self._pending_view = None
        if tables:
            rows = self._own("_asks")[app_id] = tuple(r for p in sorted(tables) for r in tables[p])
        else:
            rows = ()
            self._tables.pop(app_id, None)
            if app_id in self._asks:
                del self._own("_asks")[app_id]
        self._note_am_ask(app_id, rows)
        self.version += 1
        self.journal.note(app_id)

    def _note_am_ask(self, app_id: AppId, rows: tuple[Ask, ...]) -> None:
        # rows ascend by priority with ANY first, so an AM ask is the first row or none
        first = rows[0] if rows else None
        am = (first.capability * first.count if first is not None and first.priority == AM_PRIORITY
              and first.resource_name == ANY else ZERO)
        old = self._am_asks.get(app_id, ZERO)
        if am != old:
            self._am_asked = self._am_asked - old + am
            if am.is_zero():
                del self._am_asks[app_id]
            else:
                self._am_asks[app_id] = am

    # ------------------------------------------------------------------ containers

    def allocate(self, c: Container) -> None:
        """A container is allocated (by a policy, the native fallback or the simulator), with its kind."""
        self._check_new(c)
        self.launch(c)

    def _check_new(self, c: Container, batch: frozenset[ContainerId] | set[ContainerId] = frozenset()) -> None:
        """Raise the StateError `allocate` gives `c` (also when it is already in `batch`, the ids before it)."""
        if c.node_id not in self._nodes:
            raise StateError(f"alloc: container {c.id} on unknown node {c.node_id}")
        if c.app_id not in self._apps:
            raise StateError(f"alloc: container {c.id} of unknown app {c.app_id}")
        if c.id in self._containers or c.id in batch:
            raise StateError(f"alloc: container {c.id} allocated twice")

    def allocate_all(self, containers: Iterable[Container]) -> None:
        """`allocate` of each container in turn, the sums added up in one pass (a full sync's thousands).

        The state ends exactly as after the calls one by one, the order of every map included; on a
        StateError (the first container `allocate` would refuse) it is left as it was.
        """
        listed = list(containers)
        batch = {c.id: c for c in listed}
        # every check first, at C speed (a refused batch changes nothing); the loop names the first refused
        if (len(batch) != len(listed) or not batch.keys().isdisjoint(self._containers)
                or not {c.node_id for c in listed} <= self._nodes.keys()
                or not {c.app_id for c in listed} <= self._apps.keys()):
            self._refuse(listed)
        self._containers.update(batch)
        node_cs = self._node_cs
        for c in listed:
            node_cs[c.node_id][c.id] = c
        sums = _Sums()
        sums.add_all(listed, self._apps)
        self.journal.note_all([c.app_id for c in listed])
        self.version += len(batch)
        sums.merge_into(self)

    def _refuse(self, containers: list[Container]) -> None:
        """Raise the StateError of the first container `allocate` would refuse, one after the other."""
        seen: set[ContainerId] = set()
        for c in containers:
            self._check_new(c, seen)
            seen.add(c.id)
        raise AssertionError("a batch refused with no container to blame")

    def launch(self, c: Container) -> None:
        """`allocate` without its checks, for a caller that placed the container itself (the simulator)."""
        app, node_id, r = c.app_id, c.node_id, c.resource
        record, on_node = self._apps[app], self._node_cs[node_id]  # an unknown app or node fails before any change
        self._containers[c.id] = c
        on_node[c.id] = c
        self._node_alloc[node_id] = self._node_alloc[node_id] + r
        self._dirty.add(node_id)
        held = self._app_alloc.get(app)
        if held is not None:
            self._own("_app_alloc")[app] = held + r
        elif r.memory_mb or r.vcores:  # an app that holds nothing is absent, even with empty containers
            self._own("_app_alloc")[app] = r
        _add(self._own("_queue_alloc"), record.queue, r)
        _add(self._own("_user_alloc"), (record.queue, record.user), r)
        self._hold(c, 1)
        if c.is_am:
            self._am_allocated = self._am_allocated + r
            _add(self._app_am, app, r)
            _add(self._queue_am, record.queue, r)
            self._am_views = None
        self.version += 1
        self.journal.note(app)

    def release(self, container_id: ContainerId) -> Container | None:
        """A container completed, was released or killed: its resources go back; None if it was not live."""
        c = self._containers.get(container_id)
        if c is not None:
            self._release(c)
        return c

    def _release(self, c: Container) -> None:
        app, node_id, r = c.app_id, c.node_id, c.resource
        del self._containers[c.id]
        del self._node_cs[node_id][c.id]
        self._node_alloc[node_id] = self._node_alloc[node_id] - r
        self._dirty.add(node_id)
        self.version += 1
        self.journal.note(app)
        record = self._apps[app]
        if c.is_am:
            self._am_allocated = self._am_allocated - r
            _take(self._app_am, app, r)
            _take(self._queue_am, record.queue, r)
            self._am_views = None
        self._count(record, -1, r)
        self._hold(c, -1)
        held = self._app_alloc.get(app)
        if held is None:
            pass  # what is left of the app is empty containers (the wire allows 0 MB, 0 vcores): absent already
        elif held == r:  # all it held: absent, see the module docstring
            del self._own("_app_alloc")[app]
        else:
            self._own("_app_alloc")[app] = held - r

    def _count(self, app: App, sign: int, r: Resources) -> None:
        """Add (sign 1) or take (-1) `r` to the sums of the app's queue and user, dropping sums that reach zero."""
        change = _add if sign > 0 else _take
        change(self._own("_queue_alloc"), app.queue, r)
        change(self._own("_user_alloc"), (app.queue, app.user), r)

    def _hold(self, c: Container, sign: int) -> None:
        """Count `c` in (sign 1) or out of (-1) its app's per-priority sums, dropping what reaches zero."""
        app, p = c.app_id, c.priority
        old = self._prio_alloc.get(app)
        by_priority = {} if old is None else old.copy()  # a new map: snapshots share the old one
        n, total = by_priority.get(p, (0, ZERO))
        if n + sign == 0:
            del by_priority[p]
        else:
            # a NamedTuple's own __new__ is a Python-level wrapper around tuple.__new__: this runs per container
            by_priority[p] = _tuple_new(Held, (n + sign, total + c.resource if sign > 0 else total - c.resource))
        if by_priority:
            self._own("_prio_alloc")[app] = MappingProxyType(by_priority)
        else:
            del self._own("_prio_alloc")[app]

    def _refresh(self, node_id: NodeId) -> None:
        node = self._nodes[node_id]
        self._own("_nodes")[node_id] = Node(node.id, node.rack, node.capacity, self._node_alloc[node_id],
                                           node.registered)
        self._own("_node_views")[node_id] = tuple(self._node_cs[node_id].values())
        self._dirty.discard(node_id)

    def _node_or_fail(self, node_id: NodeId) -> Node:
        node = self.node(node_id)
        if node is None:
            raise StateError(f"unknown node {node_id}")
        return node

    # ------------------------------------------------------------------ snapshots

    def _ordered_apps(self) -> Mapping[AppId, App]:
        if self._apps_view is None:
            if not self._in_order:
                self._apps = {a.id: a for a in sorted(self._apps.values(), key=_app_key)}
                self._in_order = True
            self._apps_view = MappingProxyType(self._apps.copy())
        return self._apps_view

    def _pending_apps(self) -> tuple[App, ...]:
        if self._pending_view is None:
            asks = self._asks
            self._pending_view = tuple(a for a in self._ordered_apps().values() if a.id in asks)
        return self._pending_view

    def snapshot(self, now_s: float) -> ClusterSnapshot:
        """A read-only ClusterSnapshot of the state, in O(changes) plus dict copies (none if nothing changed)."""
        views = self._views
        # a policy that leaves room on purpose (DRESS's pool) is asked again and again at one state: 65% of
        # its snapshots on the synthetic case; they share the copies and the container index of the last one
        if views is None or views[0] != self.version or views[1] is not self.min_allocation:
            views = self._views = (self.version, self.min_allocation, self._fields(), [])
        snap = ClusterSnapshot(now_s, *views[2])
        object.__setattr__(snap, "version", self.version)  # frozen, and no init field (see ClusterSnapshot)
        object.__setattr__(snap, "_by_id", views[3])  # the container index, built by the first one that reads it
        return snap

    def _fields(self) -> tuple[Any, ...]:
        """The snapshot's fields after its time, in ClusterSnapshot's order: read-only views of the store's maps (see `_own`)."""
        for node_id in list(self._dirty):
            self._refresh(node_id)
        if self._am_views is None:
            self._am_views = MappingProxyType(self._app_am.copy()), MappingProxyType(self._queue_am.copy())
        app_am, queue_am = self._am_views
        apps, asks = self._ordered_apps(), MappingProxyType(self._asks)
        # positional, as a snapshot per heartbeat cannot afford keywords (test_snapshots_of_one_state_share_its_fields_and_match_a_fresh_one
        # checks each field's place)
        return (
            MappingProxyType(self._nodes),  # nodes
            apps,
            asks,
            MappingProxyType(self._node_views),  # node_containers
            MappingProxyType(self._app_alloc),  # app_allocated
            self.min_allocation,
            self.capacity,
            self._am_allocated,
            self._am_asked,
            app_am,
            queue_am,
            MappingProxyType(self._queue_alloc),  # queue_allocated
            MappingProxyType(self._user_alloc),  # user_allocated
            MappingProxyType(self._prio_alloc),  # priority_allocated
            self._queues,
            self._inactive_view,
            self.journal,
            self.journal.end,
            (apps, asks, self._pending_apps()),  # _pending
        )


def snapshot_of(
    now_s: float,
    nodes: Iterable[Node],
    apps: Iterable[App],
    asks: Iterable[Ask] = (),
    containers: Iterable[Container] = (),
    min_allocation: Resources = Resources(1024, 1),
) -> ClusterSnapshot:
    """A snapshot from plain lists (tests, benchmarks): the same mutations, in arrival order.

    A node's `allocated` is ignored: it is what its containers hold.
    """
    state = ClusterState(min_allocation)
    for n in nodes:
        state.put_node(n.id, n.rack, n.capacity, n.registered)
    for a in apps:
        state.add_app(a)
    by_app: dict[AppId, list[Ask]] = {}
    for r in asks:
        by_app.setdefault(r.app_id, []).append(r)
    for app_id, rows in by_app.items():
        state.set_app_asks(app_id, rows)
    for c in containers:
        state.allocate(c)
    return state.snapshot(now_s)
