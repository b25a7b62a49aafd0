"""The MR AM's reduce scheduling (sim/mr_am.py), hand-worked from Hadoop 2.7.7's RMContainerAllocator.

Each case names the method whose arithmetic it follows. Sizes are in GB of memory; containers ask
no vcores unless said otherwise, so only memory counts (as under Hadoop's DefaultResourceCalculator).
"""

from __future__ import annotations

import math
import random
from collections import deque
from types import SimpleNamespace

import pytest

from yarnctl.model import Resources
from yarnctl.sim.appmaster import _hanging
from yarnctl.sim.mr_am import (
    MRAMConfig,
    JobState,
    config_of,
    reduces_to_preempt,
    schedule_reduces,
    slowstart_reached,
)

DEFAULT = MRAMConfig()


def gb(n: float, vcores: int = 0) -> Resources:
    return Resources(int(n * 1024), vcores)


def job(total=100, completed=0, scheduled_maps=0, scheduled_reduces=0, assigned_maps=0, assigned_reduces=0,
        pending_reduces=10, map_gb=1.0, reduce_gb=2.0, headroom_gb=0.0) -> JobState:
    return JobState(total, completed, scheduled_maps, scheduled_reduces, assigned_maps, assigned_reduces,
                    pending_reduces, gb(map_gb), gb(reduce_gb), gb(headroom_gb))


def test_slow_start_waits_for_ceil_of_the_fraction_of_maps():
    # scheduleReduces: completedMapsForReduceSlowstart = (int) Math.ceil(reduceSlowStart * totalMaps)
    assert not slowstart_reached(4, 90, 0.05)  # ceil(4.5) = 5
    assert slowstart_reached(5, 90, 0.05)
    assert slowstart_reached(0, 90, 0.0)
    assert not slowstart_reached(89, 90, 1.0) and slowstart_reached(90, 90, 1.0)


def test_every_map_assigned_ramps_up_every_reduce_whatever_the_headroom():
    # scheduleReduces -> scheduleAllReduces when scheduledMaps == 0
    assert schedule_reduces(job(completed=10, scheduled_maps=0, assigned_maps=90, pending_reduces=7), DEFAULT) == 7


def test_ramp_up_follows_completed_maps():
    # scheduleReduces: limit = headroom 10 GB + 10 assigned 1 GB maps = 20 GB; completed 25%:
    # idealReduce = 20 x 0.25 = 5 GB, idealMap = 15 GB fits 15 maps < 80 scheduled + 10 assigned,
    # so finalReduce = 5 GB; rampUp = computeAvailableContainers(5 GB - 0, 2 GB) = 2
    s = job(completed=25, scheduled_maps=65, assigned_maps=10, headroom_gb=10)
    assert s.resource_limit == gb(20)
    assert schedule_reduces(s, DEFAULT) == 2


def test_ramp_up_is_capped_by_the_rampup_limit():
    # scheduleReduces: min(completedMapPercent 0.8, maxReduceRampupLimit 0.5) x 20 GB = 10 GB = 5 reduces
    s = job(completed=80, scheduled_maps=10, assigned_maps=10, headroom_gb=10)
    assert schedule_reduces(s, DEFAULT) == 5
    assert schedule_reduces(s, MRAMConfig(rampup_limit=0.2)) == 2  # 4 GB


def test_maps_unused_share_goes_to_reduces():
    # scheduleReduces: limit 20 GB, completed 50%: idealReduce 10 GB, idealMap 10 GB fits 10 maps >= 2
    # scheduled + 3 assigned, so the 5 GB the maps leave unused go to reduces: finalReduce 15 GB,
    # minus 1 assigned reduce (2 GB) = 13 GB -> 6 reduces
    s = job(completed=50, scheduled_maps=2, assigned_maps=3, assigned_reduces=1, headroom_gb=15)
    assert s.resource_limit == gb(20)
    assert schedule_reduces(s, DEFAULT) == 6


def test_ramp_down_withdraws_scheduled_reduces_only():
    # scheduleReduces -> rampDownReduces: limit 0 headroom + 4 maps + 4 reduces = 12 GB, completed 10%:
    # idealReduce 1.2 GB (truncated to 1228 MB), idealMap fits 10 maps < 60 + 4, finalReduce 1228 MB;
    # minus (3 scheduled + 4 assigned) x 2 GB = -13108 MB / 2048 -> -6 (toward zero), at most the 3 scheduled
    s = job(completed=10, scheduled_maps=60, assigned_maps=4, scheduled_reduces=3, assigned_reduces=4)
    assert schedule_reduces(s, DEFAULT) == -3


def test_java_division_truncates_toward_zero():
    # computeAvailableContainers(-1 GB, 2 GB) is 0 in Java (not -1): no ramp-down for half a reduce
    # limit 10 GB (10 maps), completed 50%: idealReduce 5 GB, idealMap 5 GB fits 5 < 40 + 10 maps,
    # finalReduce 5 GB - 3 scheduled x 2 GB = -1 GB
    s = job(completed=50, scheduled_maps=40, assigned_maps=10, scheduled_reduces=3)
    assert schedule_reduces(s, DEFAULT) == 0


def test_nothing_pending_nothing_to_schedule():
    assert schedule_reduces(job(completed=50, scheduled_maps=40, pending_reduces=0, headroom_gb=100), DEFAULT) == 0


def test_vcores_bind_as_under_the_dominant_resource_calculator():
    # computeAvailableContainers takes the fewer of memory and vcores: 20 GB but 3 vcores of headroom
    s = JobState(100, 80, 10, 0, 0, 0, 10, Resources(1024, 1), Resources(2048, 1), Resources(20 * 1024, 3))
    assert schedule_reduces(s, DEFAULT) == 1  # 0.5 x <20 GB, 3 vcores> = <10 GB, 1 vcore>


def test_no_preemption_while_a_map_runs_or_none_waits():
    # preemptReducesIfNeeded returns early
    assert reduces_to_preempt(job(scheduled_maps=3, assigned_maps=1, assigned_reduces=4), 3, 3, DEFAULT) == 0
    assert reduces_to_preempt(job(scheduled_maps=0, assigned_reduces=4), 0, 0, DEFAULT) == 0


def test_no_preemption_while_the_headroom_fits_a_map():
    assert reduces_to_preempt(job(scheduled_maps=3, assigned_reduces=4, headroom_gb=1), 0, 3, DEFAULT) == 0


def test_preempt_reducer_amounts():
    # preemptReducer: limit 0 + 5 reduces x 1 GB = 5 GB; maps of 2 GB, 3 hanging:
    # one map -> ceil(2/1) = 2, preemption limit -> ceil(5 x 0.5 / 1) = 3, all maps -> ceil(6/1) = 6:
    # min(max(2, 3), 6) = 3
    s = job(scheduled_maps=3, assigned_reduces=5, map_gb=2, reduce_gb=1)
    assert reduces_to_preempt(s, 0, 3, DEFAULT) == 3
    # one hanging map caps it at what that map needs: min(max(2, 3), 2) = 2
    assert reduces_to_preempt(s, 0, 1, DEFAULT) == 2
    # preemption limit 0.1: ceil(0.5) = 1, so one map's worth: min(max(2, 1), 6) = 2
    assert reduces_to_preempt(s, 0, 3, MRAMConfig(preemption_limit=0.1)) == 2


def test_no_headroom_preemption_waits_for_its_delay():
    # preemptReducersForHangingMapRequests(reducerNoHeadroomPreemptionDelayMs): no map hanging that long yet
    s = job(scheduled_maps=3, assigned_reduces=5, map_gb=2, reduce_gb=1)
    assert reduces_to_preempt(s, 0, 0, MRAMConfig(preempt_delay_s=60)) == 0


def test_unconditional_preemption_ignores_the_headroom():
    # preemptReducesIfNeeded: maps hanging past reducerUnconditionalPreemptionDelayMs preempt even with headroom
    s = job(scheduled_maps=3, assigned_reduces=5, map_gb=2, reduce_gb=1, headroom_gb=8)
    assert reduces_to_preempt(s, 0, 3, DEFAULT) == 0  # the headroom fits a map
    assert reduces_to_preempt(s, 1, 3, DEFAULT) == 2  # limit 13 GB: min(max(2, ceil(6.5)), 2)
    assert reduces_to_preempt(s, 1, 3, MRAMConfig(unconditional_preempt_delay_s=-1)) == 0  # disabled


def test_hadoop_property_names_configure_the_am():
    c = config_of({"yarn.app.mapreduce.am.job.reduce.rampup.limit": 0.3,
                   "mapreduce.job.reducer.unconditional-preempt.delay.sec": 60,
                   "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms": 500})
    assert (c.rampup_limit, c.unconditional_preempt_delay_s, c.heartbeat_s) == (0.3, 60.0, 0.5)
    assert config_of({}) == DEFAULT
    with pytest.raises(ValueError, match="unknown MapReduce property 'mapreduce.job.reduces'"):
        config_of({"mapreduce.job.reduces": 3})
    with pytest.raises(ValueError, match="expected a fraction"):
        config_of({"yarn.app.mapreduce.am.job.reduce.preemption.limit": 2})


def test_hanging_maps_counted_from_the_floor_as_by_a_full_count() -> None:
    """The simulator's count of maps waiting past a delay (preemptReducesIfNeeded's hanging requests) skips the scan
    only when its floor proves none can be: random asks (at the back, or a killed map's at the front) and
    launches, each AM heartbeat checked against counting every pending map."""
    rng = random.Random(7)
    up = SimpleNamespace(asked_floor=-math.inf)
    queue: deque[SimpleNamespace | None] = deque()
    now, scans_skipped, hanging_seen = 0.0, 0, 0
    for _ in range(3000):
        now += rng.choice([0.0, 0.5, 1.0, 7.5])
        step = rng.random()
        if step < 0.2:
            queue.append(SimpleNamespace(asked_at=now))
        elif step < 0.3:
            queue.appendleft(SimpleNamespace(asked_at=now))  # _request(front=True): a killed map asked again
        elif step < 0.6 and queue:
            queue.popleft()
        delay = rng.choice([0.0, 10.0, 30.0])
        expected = sum(1 for t in queue if t is not None and now - t.asked_at > delay)
        scans_skipped += now - up.asked_floor <= delay
        assert _hanging(up, queue, now, delay) == expected  # type: ignore[arg-type]
        hanging_seen += expected > 0
    assert scans_skipped > 200 and hanging_seen > 200, (scans_skipped, hanging_seen)  # both branches, many times
