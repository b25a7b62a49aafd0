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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yarnctl.model import AM_PRIORITY, REDUCE_PRIORITY, ClusterSnapshot, Resources
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

    def read(self, snap: ClusterSnapshot) -> dict[str, JobProgress]:
        """Eq. 2-3's inputs for every app in `snap`."""
        jobs = {app_id: JobProgress() for app_id in snap.apps}
        maps: dict[tuple[str, int], int] = {}  # pending + running per (app, map priority)
        for containers in snap.node_containers.values():
            for c in containers:
                job = jobs.get(c.app_id)
                if job is None:
                    continue
                held = weighted_size(c.resource, self.weights)
                if c.priority == AM_PRIORITY:
                    job.am_held += held
                elif c.priority == REDUCE_PRIORITY:
                    job.reduce_held += held
                else:
                    job.map_held += held
                    job.maps_running += 1
                    maps[(c.app_id, c.priority)] = maps.get((c.app_id, c.priority), 0) + 1
        for app_id, job in jobs.items():
            for r in snap.any_asks(app_id):
                if r.priority not in (AM_PRIORITY, REDUCE_PRIORITY):
                    job.maps_pending += r.count
                    maps[(app_id, r.priority)] = maps.get((app_id, r.priority), 0) + r.count
        for gone in self.map_totals.keys() - snap.apps.keys():
            del self.map_totals[gone]
        for (app_id, priority), n in maps.items():
            seen = self.map_totals.setdefault(app_id, {})
            seen[priority] = max(seen.get(priority, 0), n)
        for app_id, job in jobs.items():
            job.maps_total = sum(self.map_totals.get(app_id, {}).values())
        return jobs

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
