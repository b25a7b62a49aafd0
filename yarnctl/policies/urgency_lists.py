"""RTA's task requests kept in urgency order, one list per group, from the store's journal ([HaSTE] Eq. 4, Eq. 6).

Eq. 4 adds a request's min-max normalised fitness F and urgency U (Eq. 6 adds alignment A). F
depends only on the task's size and the node's residual, A only on the job's iterations, so a
group is a task size (and, for HaSTE-A, Eq. 5's numerator). Normalising and adding are monotone,
so within a group, with urgency weighted at least 0, the preferred requests are the most urgent:
a prefix of the group's list. Reading the heads and tails of a few lists gives RTA's pick and its
min-max ranges without scoring every pending request at each heartbeat; `haste.ranked_assignment`
does that reading.

A request's urgency (Eq. 2-3) depends only on its own job's progress, which changes only when the
store journals the job, so the lists are kept from the journal. They hold only requests that may
run on any node: while some pending app asks for a named node or rack, or forbids relaxing
locality, the tie-break and the set of placeable requests depend on the node, and HaSTE scores
every request instead.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from yarnctl.model import AM_PRIORITY, ANY, App, AppId, Ask, ClusterSnapshot, JournalCursor, Resources
from yarnctl.policies.urgency import JobProgress, Progress, weighted_size

Key = tuple[float, float, AppId, int]  # (-urgency, submit time, app id, priority): most urgent first, then the tie-break
Group = tuple[Resources, int]  # a task size, and its job's I_i + I_i^current (Eq. 5's numerator; 0 when unweighted)
Iterations = Callable[[App], tuple[int, int]]  # a job's I_i and I_i^current (alignment.iterations)


@dataclass(frozen=True, slots=True)
class Row:
    """One (app, priority) task request as the lists hold it."""

    key: Key
    group: Group
    ask: Ask
    size: float  # R_i of one task (urgency.weighted_size)


class UrgencyLists:
    """Every pending job's map and reduce requests by urgency per group, its AM asks in submit order.

    With `iterations` (HaSTE-A), a group is a task size and an alignment numerator, so that F and A
    (Eq. 6) are each one value per group; without, the numerator is 0.
    """

    def __init__(self, progress: Progress, iterations: Iterations | None = None) -> None:
        self.progress = progress
        self.iterations = iterations
        self.cursor = JournalCursor()
        self._clear()

    def _clear(self) -> None:
        """Forget every listed app."""
        self.jobs: dict[AppId, JobProgress] = {}  # every app's Eq. 2-3 inputs, as Progress.read gives them
        self.rows: dict[AppId, tuple[Row, ...]] = {}  # each listed app's task requests (count > 0)
        self.lists: dict[Group, list[Key]] = {}  # each group's requests' keys, ascending
        self.counted: dict[AppId, int] = {}  # every app's I_i, with `iterations`
        self.total = 0  # their sum: Eq. 5's denominator
        self.ams: list[tuple[tuple[float, AppId], Ask]] = []  # apps whose first ask is an AM's, in submit order
        self.am_of: dict[AppId, tuple[tuple[float, AppId], Ask]] = {}  # each of those apps' entry in `ams`
        self.am_sizes: dict[Resources, int] = {}  # AM size -> apps in `ams` asking for it
        self.local: set[AppId] = set()  # pending apps with a named or strict ask: the lists do not serve then
        self.finished: set[AppId] = set()  # apps with a finished map (ITA's first batch is over)

    def sync(self, snap: ClusterSnapshot) -> bool:
        """Bring the lists up to `snap`; False when they cannot serve it (no store's snapshot, or locality asked)."""
        if snap.version < 0 or snap.journal is None:
            return False
        with self.cursor.read(snap, equal=self.progress.generation) as touched:
            if touched is None:
                self._clear()
                for gone in self.progress.map_totals.keys() - snap.apps.keys():
                    self.progress.forget(gone)  # as Progress.read would, were it reading instead
                touched = list(snap.apps)
            apps, asks = snap.apps, snap.asks
            for app_id in dict.fromkeys(touched):
                self._drop(app_id)
                app = apps.get(app_id)
                if app is None:
                    self.progress.forget(app_id)
                    continue
                job = self.jobs[app_id] = self.progress.read_app(snap, app_id)
                if job.maps_finished():
                    self.finished.add(app_id)
                numerator = 0
                if self.iterations is not None:
                    n, done = self.iterations(app)
                    self.counted[app_id], numerator = n, n + done
                    self.total += n
                self._list(app, job, asks.get(app_id, ()), numerator)
        return not self.local

    def fitting_ams(self, residual: Resources) -> bool:
        """True when some listed AM ask has a container that fits in `residual`."""
        return any(size.times_fit(residual) for size in self.am_sizes)

    def _list(self, app: App, job: JobProgress, asks: tuple[Ask, ...], numerator: int) -> None:
        """List `app`'s asks: its first if an AM's, its map and reduce requests by urgency."""
        if any(r.count > 0 if r.resource_name != ANY else not r.relax_locality for r in asks):
            self.local.add(app.id)
            return
        first = next((r for r in asks if r.resource_name == ANY), None)  # what HaSTE's AM pass looks at
        if first is not None and first.priority == AM_PRIORITY and first.count > 0:
            entry = self.am_of[app.id] = ((app.submit_s, app.id), first)
            bisect.insort(self.ams, entry, key=_submitted)
            self.am_sizes[first.capability] = self.am_sizes.get(first.capability, 0) + 1
        rows = []
        for r in asks:
            if r.resource_name == ANY and r.priority != AM_PRIORITY and r.count > 0:
                size = weighted_size(r.capability, self.progress.weights)
                row = Row((-job.urgency(r.priority, size), app.submit_s, app.id, r.priority), (r.capability, numerator),
                          r, size)
                bisect.insort(self.lists.setdefault(row.group, []), row.key)
                rows.append(row)
        if rows:
            self.rows[app.id] = tuple(rows)

    def _drop(self, app_id: AppId) -> None:
        """Unlist `app_id`'s asks and forget its progress, if listed."""
        self.jobs.pop(app_id, None)
        self.finished.discard(app_id)
        self.local.discard(app_id)
        self.total -= self.counted.pop(app_id, 0)
        for row in self.rows.pop(app_id, ()):
            keys = self.lists[row.group]
            del keys[bisect.bisect_left(keys, row.key)]
            if not keys:
                del self.lists[row.group]
        entry = self.am_of.pop(app_id, None)
        if entry is not None:
            del self.ams[bisect.bisect_left(self.ams, entry[0], key=_submitted)]
            size = entry[1].capability
            if self.am_sizes[size] == 1:
                del self.am_sizes[size]
            else:
                self.am_sizes[size] -= 1


def _submitted(entry: tuple[tuple[float, AppId], Ask]) -> tuple[float, AppId]:
    """An AM entry's place: the app's submit time and id."""
    return entry[0]
