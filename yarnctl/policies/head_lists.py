"""The asking apps in a policy's order, one list per head ask, kept from the store's journal.

Policies that give one container per heartbeat to the first app, in their order, whose head ask
(its first off-switch ask: FSAppAttempt and LeafQueue try the highest priority only) fits the node
walk every pending app on a node with room for few of them. Apps whose head asks are alike are
skipped or served alike, so the first that fits heads one of a few lists: one per (group, head
size, AM or not), each in the policy's order. Reading those list heads gives the walk's answer.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from yarnctl.model import AM_PRIORITY, ANY, App, AppId, Ask, ClusterSnapshot, JournalCursor, Resources

Kind = tuple[Resources, bool]  # a head ask's size, and whether it is an AM's
G = TypeVar("G", bound=Hashable)  # what apps are grouped by: a queue, a pool


def first_any(asks: tuple[Ask, ...]) -> Ask | None:
    """The first off-switch ask, in ascending priority."""
    if asks and asks[0].resource_name == ANY:
        return asks[0]  # nearly always: a table starts with its ANY row, and the simulator asks off-switch only
    return next((r for r in asks if r.resource_name == ANY), None)


class HeadLists(Generic[G]):
    """Each group's asking apps in `key` order, one list per head ask kind, kept from the store's journal.

    Read from the store's own snapshots only: a view hides asks, and their return is in no journal.
    """

    def __init__(self, head: Callable[[tuple[Ask, ...]], Ask | None] = first_any) -> None:
        self.head = head
        self.cursor = JournalCursor()
        # each listed app's group, kind, key and head priority
        self.placed: dict[AppId, tuple[G, Kind, Any, int]] = {}
        self.groups: dict[G, dict[Kind, list[tuple[Any, AppId]]]] = {}
        self.sizes: dict[Resources, int] = {}  # head size -> apps with it (sizes no app has are dropped)

    def sync(self, snap: ClusterSnapshot, group: Callable[[App], G], key: Callable[[App], Any],
             equal: object = None) -> bool:
        """Bring the lists up to `snap`, rebuilt when `equal` changes; False for a snapshot no store took."""
        if snap.version < 0 or snap.journal is None:
            return False
        with self.cursor.read(snap, equal=equal) as touched:
            if touched is None:
                self.placed, self.groups, self.sizes = {}, {}, {}
                touched = list(snap.asks)
            asks, apps = snap.asks, snap.apps
            for app_id in dict.fromkeys(touched):
                self._drop(app_id)
                rows, app = asks.get(app_id), apps.get(app_id)
                if rows is None or app is None:
                    continue
                ask = self.head(rows)
                if ask is None:
                    continue
                g, k, kind = group(app), key(app), (ask.capability, ask.priority == AM_PRIORITY)
                self.placed[app_id] = (g, kind, k, ask.priority)
                bisect.insort(self.groups.setdefault(g, {}).setdefault(kind, []), (k, app_id))
                self.sizes[ask.capability] = self.sizes.get(ask.capability, 0) + 1
        return True

    def _drop(self, app_id: AppId) -> None:
        """Unlist `app_id`, if listed."""
        old = self.placed.pop(app_id, None)
        if old is None:
            return
        g, kind, k, _ = old
        lists = self.groups[g]
        entries = lists[kind]
        del entries[bisect.bisect_left(entries, (k, app_id))]
        if not entries:
            del lists[kind]
            if not lists:
                del self.groups[g]
        if self.sizes[kind[0]] == 1:
            del self.sizes[kind[0]]
        else:
            self.sizes[kind[0]] -= 1

    def none_fits(self, available: Resources) -> bool:
        """True when no app's head ask fits in `available`."""
        return not any(size.fits_in(available) for size in self.sizes)

    def first(self, group: G, takes: Callable[[Kind, AppId], bool]) -> tuple[AppId, int] | None:
        """The first app of `group` in key order whose list `takes` (a judgement of the size and kind), with its priority."""
        best: tuple[Any, AppId] | None = None
        for kind, entries in self.groups.get(group, {}).items():
            first = entries[0]
            if (best is None or first < best) and takes(kind, first[1]):
                best = first
        return None if best is None else (best[1], self.placed[best[1]][3])


class QueueOrder:
    """Apps grouped by queue, each queue's list in key order, each app listed at most once; no empty lists."""

    def __init__(self) -> None:
        self.placed: dict[AppId, tuple[Any, str]] = {}  # each listed app's key and queue
        self.by_queue: dict[str, list[tuple[Any, AppId]]] = {}

    def clear(self) -> None:
        """Unlist every app."""
        self.placed, self.by_queue = {}, {}

    def unlist(self, app_id: AppId) -> None:
        """Take `app_id` out, if listed."""
        old = self.placed.pop(app_id, None)
        if old is None:
            return
        key, queue = old
        entries = self.by_queue[queue]
        del entries[bisect.bisect_left(entries, (key, app_id))]
        if not entries:
            del self.by_queue[queue]

    def put(self, app_id: AppId, queue: str, key: Any) -> None:
        """List `app_id` in `queue` at `key` (unlisted first by the caller)."""
        self.placed[app_id] = (key, queue)
        bisect.insort(self.by_queue.setdefault(queue, []), (key, app_id))


class AskLists:
    """Every open off-switch ask in submit order (then app id, priority), one list per size, kept from the journal.

    For packing policies that weigh each size against the node (FFD-DP's fitness): the earliest
    open ask of a size heads its list. Read from the store's own snapshots only, as HeadLists.
    """

    def __init__(self) -> None:
        self.cursor = JournalCursor()
        self.listed: dict[AppId, list[tuple[Resources, tuple[float, AppId, int]]]] = {}  # each app's entries
        self.by_size: dict[Resources, list[tuple[float, AppId, int]]] = {}
        self.count: dict[tuple[AppId, int], int] = {}  # each listed ask's containers wanted

    def sync(self, snap: ClusterSnapshot) -> bool:
        """Bring the lists up to `snap`; False for a snapshot no store took."""
        if snap.version < 0 or snap.journal is None:
            return False
        with self.cursor.read(snap) as touched:
            if touched is None:
                self.listed, self.by_size, self.count = {}, {}, {}
                touched = list(snap.asks)
            for app_id in dict.fromkeys(touched):
                for size, entry in self.listed.pop(app_id, ()):
                    entries = self.by_size[size]
                    del entries[bisect.bisect_left(entries, entry)]
                    if not entries:
                        del self.by_size[size]
                    del self.count[(app_id, entry[2])]
                rows, app = snap.asks.get(app_id), snap.apps.get(app_id)
                if rows is None or app is None:
                    continue
                mine = []
                for r in rows:
                    if r.resource_name == ANY and r.count > 0:
                        entry = (app.submit_s, app_id, r.priority)
                        bisect.insort(self.by_size.setdefault(r.capability, []), entry)
                        self.count[(app_id, r.priority)] = r.count
                        mine.append((r.capability, entry))
                if mine:
                    self.listed[app_id] = mine
        return True
