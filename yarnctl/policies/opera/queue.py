"""GetNextTaskFromQueue ([OPERA], Alg. 3-4): the task queue in Fair order.

OPERA is built on the Fair scheduler (Sec. IV): queues, then apps, by memory usage (Hadoop 2.7's
FairSharePolicy with weight 1 and no min share, yarnctl/fairness/comparators.py), ties by
submit time then id; an app offers its highest-priority (lowest number) outstanding request. A
task is one container of that request. Usage counts what this heartbeat has already given, so an
app served once moves back in the order, as in FairScheduler. Not modelled: queue weights and
min shares, and FairScheduler's AM share limit. On the store's own snapshots the asking apps are
kept in that order across heartbeats (`PendingOrder`, from the store's journal) rather than sorted
at each call.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Set
from dataclasses import dataclass

from yarnctl.fairness.comparators import SortKey, fair_share_key
from yarnctl.model import ZERO, App, AppId, ClusterSnapshot, JournalCursor, Resources
from yarnctl.policies.head_lists import AskLists, QueueOrder

TaskKey = tuple[str, int]  # (app id, priority): the task of a request, as a reservation names it


@dataclass(frozen=True, slots=True)
class Task:
    """One container of an app's outstanding request at a priority."""

    app_id: str
    priority: int
    demand: Resources

    @property
    def key(self) -> TaskKey:
        """(app id, priority)."""
        return (self.app_id, self.priority)


def app_key(used: Resources, app: App) -> SortKey:
    """An app's place in its queue: FairSharePolicy with weight 1 and no min share, on what it holds."""
    return fair_share_key(used, used, ZERO, 1.0, app.submit_s, app.id)


class PendingOrder(QueueOrder):
    """Each queue's asking apps in Fair order as the store's snapshot has them, kept from its journal."""

    def __init__(self) -> None:
        super().__init__()
        self.cursor = JournalCursor()

    def sync(self, snap: ClusterSnapshot) -> bool:
        """Bring the order up to `snap`: re-key the apps touched since; False for a snapshot no store took."""
        if snap.version < 0 or snap.journal is None:
            return False
        with self.cursor.read(snap) as touched:
            if touched is None:
                self.clear()
                touched = list(snap.asks)  # only asking apps are listed
            for app_id in dict.fromkeys(touched):
                self.unlist(app_id)
                app = snap.apps.get(app_id)
                if app is not None and app_id in snap.asks:
                    self.put(app_id, app.queue, app_key(snap.app_allocated.get(app_id, ZERO), app))
        return True


class FairQueue:
    """The pending tasks of one snapshot in Fair order, less what this heartbeat has taken."""

    def __init__(self, snap: ClusterSnapshot, asks: AskLists | None = None, order: PendingOrder | None = None) -> None:
        self.snap = snap
        self.asks = asks  # the open asks by size, synced to `snap` by the caller (None: walk the apps)
        self.order = order  # the asking apps in Fair order, synced to `snap` by the caller (None: sort them)
        self.taken: dict[TaskKey, int] = {}
        # what the apps and queues given something in this heartbeat now hold (the rest: the store's sums)
        self.usage: dict[str, Resources] = {}
        self.q_usage: dict[str, Resources] = {}
        self.by_queue: dict[str, list[App]] = {}  # the asking apps by queue, for `next` or `smallest` without lists
        if order is None or asks is None:
            for app in snap.iter_pending_apps():
                self.by_queue.setdefault(app.queue, []).append(app)

    def left(self, key: TaskKey) -> int:
        """Containers still outstanding for `key` after this heartbeat's grants."""
        app_id, priority = key
        for r in self.snap.any_asks(app_id):
            if r.priority == priority:
                return r.count - self.taken.get(key, 0)
        return 0

    def task(self, key: TaskKey) -> Task | None:
        """The task `key` names, or None when its request is no longer outstanding."""
        if self.left(key) <= 0:
            return None
        for r in self.snap.any_asks(key[0]):
            if r.priority == key[1]:
                return Task(key[0], key[1], r.capability)
        return None

    def head(self, app: App) -> Task | None:
        """The app's highest-priority task still outstanding."""
        for r in self.snap.any_asks(app.id):
            if r.count - self.taken.get((app.id, r.priority), 0) > 0:
                return Task(app.id, r.priority, r.capability)
        return None

    def next(self, exclude: Set[TaskKey] = frozenset()) -> Task | None:
        """GetNextTaskFromQueue: the head task of the first app in Fair order (apps whose head is in `exclude` skipped)."""
        def q_key(q: str) -> SortKey:
            used = self._used(q, self.q_usage, self.snap.queue_allocated)
            return fair_share_key(used, used, ZERO, 1.0, 0.0, q)

        def a_key(a: App) -> SortKey:
            return app_key(self._used(a.id, self.usage, self.snap.app_allocated), a)

        listed = self.order.by_queue if self.order is not None else None
        for q in sorted(listed if listed is not None else self.by_queue, key=q_key):
            for app in self._in_order(q, a_key) if listed is not None else sorted(self.by_queue[q], key=a_key):
                t = self.head(app)
                if t is not None and t.key not in exclude:
                    return t
        return None

    def _in_order(self, q: str, a_key: Callable[[App], SortKey]) -> Iterator[App]:
        """Queue `q`'s apps in Fair order: the kept order, the apps given something in this heartbeat re-keyed."""
        assert self.order is not None
        apps, moved, placed = self.snap.apps, self.usage, self.order.placed
        stayed = (entry for entry in self.order.by_queue[q] if entry[1] not in moved)
        regiven = sorted((a_key(apps[a]), a) for a in moved if a in placed and placed[a][1] == q)
        for _, app_id in heapq.merge(stayed, regiven):
            yield apps[app_id]

    @staticmethod
    def _used(name: str, given: dict[str, Resources], held: Mapping[str, Resources]) -> Resources:
        """What an app or queue holds: as given in this heartbeat, else the store's sum."""
        used = given.get(name)
        return used if used is not None else held.get(name, ZERO)

    def take(self, task: Task) -> None:
        """Count one container of `task` as given in this heartbeat."""
        self.taken[task.key] = self.taken.get(task.key, 0) + 1
        app = self.snap.apps[task.app_id]
        self.usage[task.app_id] = self._used(task.app_id, self.usage, self.snap.app_allocated) + task.demand
        self.q_usage[app.queue] = self._used(app.queue, self.q_usage, self.snap.queue_allocated) + task.demand

    def smallest(self) -> Resources | None:
        """MinTaskDemand (Alg. 3-4 line 3): the per-resource minimum of every outstanding demand."""
        out: Resources | None = None
        if self.asks is not None:
            count, taken = self.asks.count, self.taken
            for d, entries in self.asks.by_size.items():
                # a size is outstanding while one of its asks is not all taken (nearly always its first)
                if any(count[(a, p)] - taken.get((a, p), 0) > 0 for _, a, p in entries):
                    out = d if out is None else Resources(min(out.memory_mb, d.memory_mb), min(out.vcores, d.vcores))
            return out
        for apps in self.by_queue.values():
            for app in apps:
                for r in self.snap.any_asks(app.id):
                    if r.count - self.taken.get((app.id, r.priority), 0) > 0:
                        d = r.capability
                        out = d if out is None else Resources(min(out.memory_mb, d.memory_mb), min(out.vcores, d.vcores))
        return out
