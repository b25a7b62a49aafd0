"""Frozen value types for the cluster state a policy sees: nodes, apps, asks, containers."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping
from typing import NamedTuple, TypeVar
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType, TracebackType

from yarnctl.model.resources import ZERO, Resources
from yarnctl.model.frozen import quick_init

AppId = str
NodeId = str
ContainerId = str

K = TypeVar("K")
V = TypeVar("V")

ANY = "*"  # ResourceRequest.ANY: the resource name of an off-switch request

AM_PRIORITY = 0  # RMAppAttemptImpl.AM_CONTAINER_PRIORITY
REDUCE_PRIORITY = 10  # RMContainerAllocator.PRIORITY_REDUCE
MAP_PRIORITY = 20  # RMContainerAllocator.PRIORITY_MAP

# Application tags an iterative job carries (HaSTE-A, policies/alignment.py): how many iterations the
# whole job runs and which one this application is, from 1, e.g. "yarnctl.iterations=6", "yarnctl.stage=2"
ITERATIONS_TAG = "yarnctl.iterations"
STAGE_TAG = "yarnctl.stage"


class Locality(str, Enum):
    """The level a request (or an assignment) is made at: a host, a rack, or anywhere."""

    NODE = "node"
    RACK = "rack"
    ANY = "any"


class ContainerKind(str, Enum):
    """Whether a container holds guaranteed resources or idle ones lent opportunistically."""

    NORMAL = "normal"
    OPPORTUNISTIC = "opportunistic"


@quick_init
@dataclass(frozen=True, slots=True)
class Node:
    """A NodeManager: its rack, the capacity it offers and what is allocated on it."""

    id: NodeId
    rack: str
    capacity: Resources
    allocated: Resources = ZERO
    # the size the node registered with (or an admin set), which a policy's NodeResize never changes;
    # None where the source does not know it (the RM REST API): then the capacity is all there is,
    # so `node.registered or node.capacity` is the node's own size
    registered: Resources | None = None

    @property
    def available(self) -> Resources:
        """Capacity not yet allocated (may be negative after a capacity cut)."""
        return self.capacity - self.allocated


@dataclass(frozen=True, slots=True)
class App:
    """A submitted application as the scheduler knows it."""

    id: AppId
    queue: str = "default"
    user: str = "user"
    type: str = "MAPREDUCE"
    name: str = ""
    tags: tuple[str, ...] = ()
    submit_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Queue:
    """A queue of the scheduler's tree as the operator configured it (CapacityScheduler's; shares are fractions)."""

    name: str  # the short name apps are submitted to (Hadoop 2.7 keys every queue by it)
    path: str  # "root.a"
    parent: str | None  # the parent's path; None for root
    leaf: bool
    running: bool  # False: STOPPED, it takes no new applications
    capacity: float  # guaranteed share of the parent
    max_capacity: float  # share of the parent it may grow to
    abs_capacity: float  # the same of the cluster
    abs_max_capacity: float
    user_limit_percent: int  # minimum-user-limit-percent (100 for a parent)
    user_limit_factor: float
    # abs_max_capacity of the cluster in whole minimum allocations, as CapacityScheduler rounds it: what the
    # queue and everything under it may hold at most
    max_resources: Resources


@quick_init
@dataclass(frozen=True, slots=True)
class Ask:
    """An outstanding ResourceRequest: `count` containers of `capability` at `priority`."""

    app_id: AppId
    priority: int
    capability: Resources
    count: int
    resource_name: str = ANY
    locality: Locality = Locality.ANY
    relax_locality: bool = True


# a NamedTuple, not a frozen dataclass like the other records: one is built per task in the simulator and per
# live container in a full sync (thousands), and `tuple.__new__` builds it in a quarter of the time
class Container(NamedTuple):
    """An allocated container and where and when it started."""

    id: ContainerId
    app_id: AppId
    node_id: NodeId
    priority: int
    resource: Resources
    start_s: float
    kind: ContainerKind = ContainerKind.NORMAL
    is_am: bool = False


def _frozen(d: Mapping[K, V] | None) -> Mapping[K, V]:
    return MappingProxyType(dict(d) if d else {})


class Journal:
    """The app each store mutation touched, in order: a reader that kept an ordering catches up on what changed.

    Only the store writes it; a reader keeps the position it read up to (a snapshot's `journal_end`)
    and asks `since` for the apps touched after it. Old entries are dropped: a reader that fell that
    far behind gets None and rebuilds.
    """

    def __init__(self, keep: int = 1 << 16) -> None:
        self._ids: list[AppId] = []
        self._base = 0  # the position of _ids[0]
        self._keep = keep
        self._limit = 2 * keep

    @property
    def end(self) -> int:
        """The position after the last entry."""
        return self._base + len(self._ids)

    def note(self, app_id: AppId) -> None:
        """Record that `app_id`'s record, asks or allocation changed."""
        ids = self._ids
        ids.append(app_id)
        if len(ids) > self._limit:
            del self._ids[:self._keep]
            self._base += self._keep

    def note_all(self, app_ids: list[AppId]) -> None:
        """`note` of each app in turn (a full sync's thousands of containers)."""
        ids = self._ids
        ids.extend(app_ids)
        while self._keep and len(ids) > self._limit:  # keep 0 keeps everything, as `note` does
            del ids[:self._keep]
            self._base += self._keep

    def since(self, start: int, end: int) -> list[AppId] | None:
        """The apps touched between positions `start` and `end` (repeats included), or None if no longer kept."""
        if start < self._base or start > end:
            return None
        return self._ids[start - self._base:end - self._base]


class JournalCursor:
    """A reader's place in a store's journal: which apps were touched since it last read, or None to rebuild."""

    # `with cursor.read(snap, *same, equal=x) as touched:` is None on the first read, for a snapshot
    # without a journal or from another journal, once the journal dropped entries not yet read, or
    # when an input in `same` is not the very object it was (the store replaces a mapping when it
    # changes, so identity is the cheap test) or `equal` is not equal to what it was (a value)
    __slots__ = ("_journal", "_read_to", "_same", "_equal", "_touched", "_next_journal", "_next_end", "_next_same",
                 "_next_equal")

    def __init__(self) -> None:
        self._journal: Journal | None = None
        self._read_to = 0
        self._same: tuple[object, ...] = ()
        self._equal: object = None
        self._touched: list[AppId] | None = None
        # what the read in progress saw, taken as read when its block completes (not before: see __exit__)
        self._next_journal: Journal | None = None
        self._next_end = 0
        self._next_same: tuple[object, ...] = ()
        self._next_equal: object = None

    def read(self, snap: ClusterSnapshot, *same: object, equal: object = None) -> JournalCursor:
        """Read up to `snap`: the `with` block gets the apps touched since the last read, None to rebuild."""
        journal, end = snap.journal, snap.journal_end
        touched = None
        if (journal is self._journal and journal is not None and equal == self._equal
                and (same == () or (len(same) == len(self._same) and all(map(operator.is_, same, self._same))))):
            touched = journal.since(self._read_to, end)
        self._touched = touched
        self._next_journal, self._next_end, self._next_same, self._next_equal = journal, end, same, equal
        return self

    def __enter__(self) -> list[AppId] | None:
        return self._touched

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        # a block that raised may have left the reader's cache half-built (a rebuild empties it
        # first): forget the place, so the next read rebuilds rather than catch up on what is left
        if kind is None:
            self._journal, self._read_to = self._next_journal, self._next_end
            self._same, self._equal = self._next_same, self._next_equal
        else:
            self._journal = None
        self._touched = None


class Held(NamedTuple):
    """How many live containers one app holds at one priority, and what they add up to."""

    containers: int
    resource: Resources


@quick_init
@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """Everything a policy may look at when one node heartbeats: the RM's state then, read-only and never changing.

    Its maps are the store's own until the store writes one, which it then writes as a copy while the
    snapshot is alive (`ClusterState._own`): a snapshot kept stays as it was taken.

    `apps` iterates in submit order (then id), as the RM keeps them; `asks[app]` holds that
    app's outstanding asks in ascending priority and only apps with outstanding asks
    appear in it; `node_containers[node]` holds the live containers on each node, in launch order;
    `app_allocated` lists only apps that hold something. Built only by `yarnctl.state.ClusterState`.
    """

    now_s: float
    nodes: Mapping[NodeId, Node]
    apps: Mapping[AppId, App]
    asks: Mapping[AppId, tuple[Ask, ...]]
    node_containers: Mapping[NodeId, tuple[Container, ...]]
    app_allocated: Mapping[AppId, Resources]
    min_allocation: Resources = Resources(1024, 1)
    capacity: Resources = field(default=ZERO)
    am_allocated: Resources = ZERO  # what live ApplicationMaster containers hold
    am_asked: Resources = ZERO  # what the AM asks (priority 0, off-switch) of every app add up to
    # what each app's live ApplicationMaster holds (apps without one are absent), so the AM limits of
    # CapacityScheduler and FairScheduler need not scan every container
    app_am: Mapping[AppId, Resources] = field(default_factory=lambda: MappingProxyType({}))
    queue_am: Mapping[str, Resources] = field(default_factory=lambda: MappingProxyType({}))  # the same by queue
    # what each queue, and each user within a queue, holds (those holding nothing are absent)
    queue_allocated: Mapping[str, Resources] = field(default_factory=lambda: MappingProxyType({}))
    user_allocated: Mapping[tuple[str, str], Resources] = field(default_factory=lambda: MappingProxyType({}))
    # per app (those holding nothing are absent), per container priority: how many containers and what they
    # hold, so a policy reading job progress (HaSTE's Eq. 2-3) need not scan every container
    priority_allocated: Mapping[AppId, Mapping[int, Held]] = field(default_factory=lambda: MappingProxyType({}))
    # the scheduler's queue tree by name (empty when it has none: FifoScheduler, the simulator so far)
    queues: Mapping[str, Queue] = field(default_factory=lambda: MappingProxyType({}))
    # apps the scheduler has accepted but not activated (CapacityScheduler's AM limit): they get nothing yet
    inactive: frozenset[AppId] = frozenset()
    # the store's mutation count, stamped by ClusterState.snapshot: equal versions, equal state. Not an
    # init field, so a snapshot built or `replace`d anywhere else (a policy's view) is -1, never the store's
    version: int = field(default=-1, init=False, compare=False)
    # the store's journal and its end when this was taken: a policy keeping an ordering across heartbeats
    # reads which apps changed since it last looked (None: a snapshot built without a store)
    journal: Journal | None = field(default=None, compare=False, repr=False)
    journal_end: int = field(default=0, compare=False)
    # the container index, built on first use; not an init field, so a view `replace`d with other containers gets
    # its own (the store hands one index to every snapshot of one state)
    _by_id: list[Mapping[ContainerId, Container]] = field(default_factory=list, init=False, repr=False, compare=False)
    # the store's apps with asks, in submit order, and the `apps` and `asks` it read them from: a snapshot
    # `replace`d with other asks (a policy's view, the AM limit's) no longer holds those two, and walks its apps
    _pending: tuple[Mapping[AppId, App], Mapping[AppId, tuple[Ask, ...]], tuple[App, ...]] | None = field(
        default=None, repr=False, compare=False)

    @property
    def containers(self) -> Mapping[ContainerId, Container]:
        """Every live container by id (built on first use)."""
        if not self._by_id:
            self._by_id.append(MappingProxyType(
                {c.id: c for cs in self.node_containers.values() for c in cs}))
        return self._by_id[0]

    def iter_pending_apps(self) -> Iterator[App]:
        """Apps with outstanding asks, in submit order (then id), lazily."""
        kept = self._pending
        if kept is not None and kept[0] is self.apps and kept[1] is self.asks:
            return iter(kept[2])
        asks = self.asks
        return (app for app in self.apps.values() if app.id in asks)

    def pending_apps(self) -> list[App]:
        """Apps with outstanding asks, in submit order (then id)."""
        return list(self.iter_pending_apps())

    def allocated(self, app_id: AppId) -> Resources:
        """What `app_id` holds now (zero if nothing)."""
        return self.app_allocated.get(app_id, ZERO)

    def any_asks(self, app_id: AppId) -> list[Ask]:
        """The app's off-switch (ANY) asks, ascending priority: one per priority."""
        return [r for r in self.asks.get(app_id, ()) if r.resource_name == ANY]

    def pending(self, app_id: AppId) -> Resources:
        """The total outstanding demand of `app_id` (sum of its ANY asks)."""
        total = ZERO
        for r in self.any_asks(app_id):
            total = total + r.capability * r.count
        return total
