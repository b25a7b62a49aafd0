"""GetNextTaskFromQueue ([OPERA], Alg. 3-4): the task queue in Fair order.

OPERA is built on the Fair scheduler (Sec. IV): queues, then apps, by memory usage (Hadoop 2.7's
FairSharePolicy with weight 1 and no min share, yarnctl/fairness/comparators.py), ties by
submit time then id; an app offers its highest-priority (lowest number) outstanding request. A
task is one container of that request. Usage counts what this heartbeat has already given, so an
app served once moves back in the order, as in FairScheduler. Not modelled: queue weights and
min shares, and FairScheduler's AM share limit.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from yarnctl.fairness.comparators import fair_share_key
from yarnctl.model import ZERO, App, ClusterSnapshot, Resources
from yarnctl.policies.head_lists import AskLists

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


class FairQueue:
    """The pending tasks of one snapshot in Fair order, less what this heartbeat has taken."""

    def __init__(self, snap: ClusterSnapshot, asks: AskLists | None = None) -> None:
        self.snap = snap
        self.asks = asks  # the open asks by size, synced to `snap` by the caller (None: walk the apps)
        self.taken: dict[TaskKey, int] = {}
        # what each app and queue holds, the store's own sums: `take` adds this heartbeat's grants to copies
        self.usage: dict[str, Resources] = dict(snap.app_allocated)
        self.q_usage: dict[str, Resources] = dict(snap.queue_allocated)
        self.by_queue: dict[str, list[App]] = {}
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
        def q_key(q: str) -> tuple[object, ...]:
            used = self.q_usage.get(q, ZERO)
            return fair_share_key(used, used, ZERO, 1.0, 0.0, q)

        def a_key(a: App) -> tuple[object, ...]:
            used = self.usage.get(a.id, ZERO)
            return fair_share_key(used, used, ZERO, 1.0, a.submit_s, a.id)

        for q in sorted(self.by_queue, key=q_key):
            for app in sorted(self.by_queue[q], key=a_key):
                t = self.head(app)
                if t is not None and t.key not in exclude:
                    return t
        return None

    def take(self, task: Task) -> None:
        """Count one container of `task` as given in this heartbeat."""
        self.taken[task.key] = self.taken.get(task.key, 0) + 1
        app = self.snap.apps[task.app_id]
        self.usage[task.app_id] = self.usage.get(task.app_id, ZERO) + task.demand
        self.q_usage[app.queue] = self.q_usage.get(app.queue, ZERO) + task.demand

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
