"""The MapReduce AM's reduce scheduling, as Hadoop 2.7's RMContainerAllocator decides it on each AM heartbeat.

Maps are asked for as soon as the job starts. Reduces wait in the AM ("pending") until
`scheduleReduces` moves them to the RM ("scheduled"): none before `slowstart` of the maps have
completed; all at once when no map is left to schedule; otherwise as many as fit in the share of
the job's resource limit (its headroom plus what it holds) that completed maps earn, capped by
`rampup_limit`, plus what the maps' own share leaves unused. When fewer fit than are asked, asks
are withdrawn ("ramp down"). `preemptReducesIfNeeded` kills running reduces when maps wait with no
map running and no headroom for one (or have waited `unconditional_preempt_delay_s`), as many as one
map needs, at least `preemption_limit` of the limit, at most what the waiting maps need.

Amounts count memory and vcores, as the AM does when the RM reports both resource types (Hadoop 2.7
with the DominantResourceCalculator): yarnctl's schedulers fit containers by both, so an AM counting
memory alone would see room for a map that no node has. Java's integer arithmetic is kept: a division
truncates toward zero, a fraction of a resource is truncated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yarnctl.model import Resources
from yarnctl.model.frozen import quick_init


# the reduce stage's `slowstart` (StageSpec.slowstart), which a workload may also give under this name
SLOWSTART = "mapreduce.job.reduce.slowstart.completedmaps"
# Hadoop property -> MRAMConfig field: how a workload names them (`mapreduce:` in a job or in defaults)
PROPERTIES: dict[str, str] = {
    "yarn.app.mapreduce.am.job.reduce.rampup.limit": "rampup_limit",
    "yarn.app.mapreduce.am.job.reduce.preemption.limit": "preemption_limit",
    "mapreduce.job.reducer.preempt.delay.sec": "preempt_delay_s",
    "mapreduce.job.reducer.unconditional-preempt.delay.sec": "unconditional_preempt_delay_s",
    "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms": "heartbeat_ms",
}


@dataclass(frozen=True, slots=True)
class MRAMConfig:
    """The MR AM's scheduling properties, with Hadoop 2.7.7's defaults (mapred-default.xml)."""

    rampup_limit: float = 0.5
    preemption_limit: float = 0.5
    preempt_delay_s: float = 0.0  # with no headroom for a map, preempt reduces at once
    unconditional_preempt_delay_s: float = 300.0  # a map waiting this long preempts reduces whatever the headroom
    heartbeat_ms: int = 1000

    @property
    def heartbeat_s(self) -> float:
        """Seconds between the AM's allocate calls."""
        return self.heartbeat_ms / 1000


def config_of(props: Mapping[str, Any], base: MRAMConfig = MRAMConfig()) -> MRAMConfig:
    """`base` with the Hadoop properties in `props` applied (ValueError naming an unknown one or a bad value)."""
    values: dict[str, Any] = {}
    for name, raw in props.items():
        field = PROPERTIES.get(name)
        if field is None:
            known = ", ".join(sorted([*PROPERTIES, SLOWSTART]))
            raise ValueError(f"unknown MapReduce property {name!r}; known: {known}")
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise ValueError(f"{name}: expected a number, got {raw!r}")
        if field in ("rampup_limit", "preemption_limit") and not 0 <= raw <= 1:
            raise ValueError(f"{name}: expected a fraction in [0, 1], got {raw}")
        if field == "heartbeat_ms" and raw <= 0:
            raise ValueError(f"{name}: expected a positive interval, got {raw}")
        values[field] = int(raw) if field == "heartbeat_ms" else float(raw)
    return base if not values else MRAMConfig(**{**_fields(base), **values})


def _fields(c: MRAMConfig) -> dict[str, Any]:
    return {f: getattr(c, f) for f in PROPERTIES.values()}


@quick_init  # one per MR AM heartbeat: hundreds of thousands in a long backlog
@dataclass(frozen=True, slots=True)
class JobState:
    """What the AM knows at a heartbeat, in RMContainerAllocator's words."""

    total_maps: int
    completed_maps: int
    scheduled_maps: int  # asked of the RM, not yet assigned a container
    scheduled_reduces: int
    assigned_maps: int  # holding a container
    assigned_reduces: int
    pending_reduces: int  # not yet asked of the RM
    map_size: Resources
    reduce_size: Resources
    headroom: Resources  # the RM's answer to the last allocate call

    @property
    def resource_limit(self) -> Resources:
        """getResourceLimit: the headroom plus what the job's containers hold."""
        return self.headroom + self.map_size * self.assigned_maps + self.reduce_size * self.assigned_reduces


def _trunc(a: int, b: int) -> int:
    return int(a / b)  # Java's int division truncates toward zero


def _containers(available: Resources, required: Resources) -> int:
    """ResourceCalculatorUtils.computeAvailableContainers with memory and vcores: the fewer of the two."""
    n = [_trunc(a, r) for a, r in ((available.memory_mb, required.memory_mb), (available.vcores, required.vcores)) if r > 0]
    return min(n) if n else 0


def room_for_a_map(headroom: Resources, map_size: Resources) -> bool:
    """preemptReducesIfNeeded's headroom check: at least one map of `map_size` fits in `headroom`."""
    return _containers(headroom, map_size) > 0


def _ceil_containers(required: Resources, factor: Resources) -> int:
    """ResourceCalculatorUtils.divideAndCeilContainers with memory and vcores: the more of the two."""
    n = [math.ceil(r / f) for r, f in ((required.memory_mb, factor.memory_mb), (required.vcores, factor.vcores)) if f > 0]
    return max(n) if n else 0


def _times(r: Resources, by: float) -> Resources:
    return Resources(int(r.memory_mb * by), int(r.vcores * by))  # Resources.multiply truncates each value


def slowstart_reached(completed_maps: int, total_maps: int, slowstart: float) -> bool:
    """scheduleReduces' slow-start check: enough maps have completed to start asking for reduces."""
    return completed_maps >= math.ceil(slowstart * total_maps)


def schedule_reduces(s: JobState, config: MRAMConfig) -> int:
    """RMContainerAllocator.scheduleReduces once slow start is reached: reduces to ask for (> 0) or withdraw (< 0)."""
    if s.pending_reduces == 0:
        return 0
    if s.scheduled_maps == 0:
        return s.pending_reduces  # scheduleAllReduces: every map is assigned, ramp up all, whatever the headroom
    completed = s.completed_maps / s.total_maps if s.total_maps else 1.0
    total = s.resource_limit
    ideal_reduce = _times(total, min(completed, config.rampup_limit))
    ideal_map = total - ideal_reduce
    maps = s.map_size * (s.scheduled_maps + s.assigned_maps)
    if _containers(ideal_map, s.map_size) >= s.scheduled_maps + s.assigned_maps:
        final_reduce = ideal_reduce + (ideal_map - maps)  # the maps leave part of their share unused
    else:
        final_reduce = ideal_reduce
    ramp = _containers(final_reduce - s.reduce_size * (s.scheduled_reduces + s.assigned_reduces), s.reduce_size)
    if ramp > 0:
        return min(ramp, s.pending_reduces)
    return -min(-ramp, s.scheduled_reduces)


def reduces_to_preempt(s: JobState, hanging_unconditional: int, hanging_no_headroom: int, config: MRAMConfig) -> int:
    """RMContainerAllocator.preemptReducesIfNeeded: running reduces to kill (0: none, and no ramp-down).

    `hanging_unconditional` and `hanging_no_headroom` count the scheduled maps that have waited longer
    than `unconditional_preempt_delay_s` and `preempt_delay_s` (every scheduled map when that is 0).
    When this is positive the AM also withdraws every scheduled reduce (clearAllPendingReduceRequests)
    and does not call scheduleReduces on this heartbeat.
    """
    if s.reduce_size.is_zero() or s.assigned_maps > 0 or s.scheduled_maps <= 0:
        return 0  # no reduces yet, a map is running, or no map is waiting
    if config.unconditional_preempt_delay_s >= 0 and hanging_unconditional > 0:
        return _preempt_reducer(s, hanging_unconditional, config)
    if room_for_a_map(s.headroom, s.map_size):
        return 0  # the headroom can fit a map
    if hanging_no_headroom > 0:
        return _preempt_reducer(s, hanging_no_headroom, config)
    return 0


def _preempt_reducer(s: JobState, hanging: int, config: MRAMConfig) -> int:
    # preemptReducer: room for one map, at least preemption_limit of the limit, at most what the hanging maps need
    one_map = _ceil_containers(s.map_size, s.reduce_size)
    by_limit = _ceil_containers(_times(s.resource_limit, config.preemption_limit), s.reduce_size)
    all_maps = _ceil_containers(s.map_size * hanging, s.reduce_size)
    return min(max(one_map, by_limit), all_maps)
