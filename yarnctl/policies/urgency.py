"""Urgency: how much a job's map or reduce tasks need to run now ([HaSTE] Sec. 3.4.2, Eq. 2-3, R1-R3).

    U_i^m = A_i^m / T_i^m * (A_i^r R_i^r + A_i^am R_i^am)                               (Eq. 2)
    U_i^r = U_i^m * A_i^m / T_i^m * (O_i^m R_i^m + O_i^r R_i^r) / (O_i^r R_i^r)         (Eq. 3)

How the terms are read from a snapshot (approximations marked "approx."):
- Task kinds by priority: 0 is the AM, 10 a reduce, every other priority a map (20, the
  fast-fail map's 5, a generic stage's).
- R_i^m, R_i^r, R_i^am: w_mem * GB + w_vcores * vcores of one container (`weighted_size`);
  O_i^m R_i^m and O_i^r R_i^r sum the job's running map and reduce containers.
- T_i^m (approx.): a snapshot has no finished tasks, so `Progress` keeps, per job and map
  priority, the largest pending + running count it has seen, and A_i^m = T_i^m - pending maps.
  This is exact when the policy saw a request before any of its tasks ran: always in the
  simulator; live, unless the policy server started mid-job without its saved state
  (`yarnctl serve --state-file`, `save`/`load`). A job that asks for its maps anew each
  iteration gets T_i^m and A_i^m per iteration.
- A_i^r R_i^r (approx.): the running reduces' resources, as R2 words it. A reduce cannot finish
  before its job's last map, so this is exact while the job has maps pending; after that it
  omits finished reduces.
- A_i^am R_i^am: the job's running AM container.
- Eq. 3 divides by O_i^r R_i^r, which is 0 before the job's first reduce runs: the divisor is at
  least the R_i^r of the reduce being placed. U_i^r stays finite and, as R3 asks, above U_i^m
  while the map progress exceeds the share that reduce would take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from yarnctl.model import AM_PRIORITY, ANY, REDUCE_PRIORITY, Ask, ClusterSnapshot, Held, Resources
from yarnctl.policies.ffd_dp import FfdDpConfig


def weighted_size(r: Resources, w: FfdDpConfig) -> float:
    """w_mem * GB + w_vcores * vcores: R_i in Eq. 2-3 and the value V of Alg. 1."""
    return r.memory_mb / 1024.0 * w.memory_weight + r.vcores * w.vcores_weight


@dataclass(slots=True)
class JobProgress:
    """What Eq. 2-3 know of one job: its map counts and the weighted resources its containers hold."""

    maps_total: int = 0  # T_i^m
    maps_pending: int = 0  # T_i^m - A_i^m
    maps_running: int = 0  # O_i^m
    map_held: float = 0.0  # O_i^m R_i^m
    reduce_held: float = 0.0  # O_i^r R_i^r, standing in for A_i^r R_i^r
    am_held: float = 0.0  # A_i^am R_i^am

    def copy(self) -> JobProgress:
        """A copy to `start` tasks on, leaving this one as read."""
        return JobProgress(self.maps_total, self.maps_pending, self.maps_running, self.map_held, self.reduce_held,
                           self.am_held)

    def map_progress(self) -> float:
        """A_i^m / T_i^m (1 for a job without maps)."""
        return 1.0 - self.maps_pending / self.maps_total if self.maps_total else 1.0

    def maps_finished(self) -> int:
        """Maps that ran to the end (live, also those that did before the policy first saw the job)."""
        return self.maps_total - self.maps_pending - self.maps_running

    def map_urgency(self) -> float:
        """Eq. 2: U_i^m."""
        return self.map_progress() * (self.reduce_held + self.am_held)

    def reduce_urgency(self, reduce_size: float) -> float:
        """Eq. 3: U_i^r, for reduces of weighted size `reduce_size`."""
        held = max(self.reduce_held, reduce_size)  # no reduce running yet: count the one being placed
        return self.map_urgency() * self.map_progress() * (self.map_held + held) / held if held else 0.0

    def urgency(self, priority: int, task_size: float) -> float:
        """The urgency of this job's tasks at `priority`: U_i^r for reduces, U_i^m for maps."""
        return self.reduce_urgency(task_size) if priority == REDUCE_PRIORITY else self.map_urgency()

    def start(self, priority: int, task_size: float) -> None:
        """Count one more running task of this job at `priority`."""
        if priority == REDUCE_PRIORITY:
            self.reduce_held += task_size
        else:
            self.maps_pending -= 1
            self.maps_running += 1
            self.map_held += task_size


class Progress:
    """Reads every job's JobProgress from snapshots, remembering the T_i^m each job has shown."""

    def __init__(self, weights: FfdDpConfig) -> None:
        self.weights = weights
        self.map_totals: dict[str, dict[int, int]] = {}  # app -> map priority -> largest pending + running seen
        # app -> (its per-priority holdings, its asks, the progress read from them): the store replaces
        # both objects when they change, so an app whose two are the very objects read last time is skipped
        self._seen: dict[str, tuple[object, object, JobProgress]] = {}
        self._loaded = False  # totals were loaded since the last read, perhaps of apps gone meanwhile
        self.generation = 0  # counts loads: a reader keeping what it read from the old totals starts afresh

    def read(self, snap: ClusterSnapshot) -> dict[str, JobProgress]:
        """Eq. 2-3's inputs for every app in `snap`; shared with the next read, so `copy` one before changing it."""
        jobs = {app_id: self.read_app(snap, app_id) for app_id in snap.apps}
        if len(self._seen) > len(jobs) or self._loaded:  # some app left: forget its T_i^m
            for gone in self._seen.keys() - jobs.keys():
                del self._seen[gone]
            for gone in self.map_totals.keys() - jobs.keys():
                del self.map_totals[gone]
            self._loaded = False
        return jobs

    def read_app(self, snap: ClusterSnapshot, app_id: str) -> JobProgress:
        """One app's Eq. 2-3 inputs, as `read` gives them, for a reader that follows the store's journal."""
        held, rs = snap.priority_allocated.get(app_id), snap.asks.get(app_id)
        before = self._seen.get(app_id)
        if before is not None and before[0] is held and before[1] is rs:
            return before[2]
        job = self._progress(app_id, held, rs)
        self._seen[app_id] = held, rs, job
        return job

    def forget(self, app_id: str) -> None:
        """Drop what was seen of an app that left."""
        self._seen.pop(app_id, None)
        self.map_totals.pop(app_id, None)

    def _progress(self, app_id: str, held: Mapping[int, Held] | None, asks: Sequence[Ask] | None) -> JobProgress:
        """One app's progress from its per-priority holdings and its asks, noting the T_i^m they show."""
        job = JobProgress()
        maps: dict[int, int] = {}  # pending + running per map priority
        # the store's per-priority sums, not every container: the weighted size of a sum is the sum of
        # the weighted sizes (exactly so for the default weights, as MB / 1024 are dyadic fractions)
        for priority, (n, total) in (held or {}).items():
            size = weighted_size(total, self.weights)
            if priority == AM_PRIORITY:
                job.am_held += size
            elif priority == REDUCE_PRIORITY:
                job.reduce_held += size
            else:
                job.map_held += size
                job.maps_running += n
                maps[priority] = n
        for r in asks or ():
            if r.resource_name == ANY and r.priority not in (AM_PRIORITY, REDUCE_PRIORITY):
                job.maps_pending += r.count
                maps[r.priority] = maps.get(r.priority, 0) + r.count
        if maps:
            seen = self.map_totals.setdefault(app_id, {})
            for priority, n in maps.items():
                seen[priority] = max(seen.get(priority, 0), n)
        job.maps_total = sum(self.map_totals.get(app_id, {}).values())
        return job

    def save(self) -> dict[str, Any]:
        """The T_i^m seen so far as JSON-able data."""
        return {"map_totals": {app: {str(p): n for p, n in seen.items()} for app, seen in self.map_totals.items()}}

    def load(self, doc: Mapping[str, Any]) -> None:
        """Take back what `save` returned (ValueError naming the field when it is malformed)."""
        totals = doc.get("map_totals")
        if not isinstance(totals, Mapping):
            raise ValueError("map_totals: expected an object")
        loaded: dict[str, dict[int, int]] = {}
        for app, seen in totals.items():
            if not isinstance(seen, Mapping) or not all(
                    str(p).isdigit() and type(n) is int and n >= 0 for p, n in seen.items()):
                raise ValueError(f"map_totals.{app}: expected {{priority: count >= 0}}")
            loaded[str(app)] = {int(p): n for p, n in seen.items()}
        self.map_totals = loaded
        self.generation += 1
        self._seen, self._loaded = {}, True  # what was read before came from the old totals
