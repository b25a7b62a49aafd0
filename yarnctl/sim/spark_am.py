"""Spark 2.x applications on YARN: executors held by the application, stages of tasks run inside them.

A Spark job's driver runs in its AM. From the AM's start it keeps a target number of executor
containers (YarnAllocator.updateResourceRequests: asks for target - running - pending more, and
withdraws pending asks above the target). Stages run one after another (a simple job's DAG);
a stage's tasks go to free executor slots (`spark.executor.cores / spark.task.cpus` per
executor) in the driver's own FIFO order, offered round-robin over executors in registration order
(TaskSchedulerImpl.resourceOffers, which shuffles the offers; the simulator keeps them in order).
Static allocation holds `spark.executor.instances` executors until the job ends; a lost executor's
running tasks go back to the front of the queue and the executor is asked for again. Dynamic
allocation follows ExecutorAllocationManager (`ExecutorAllocation` below, as Spark 2.2's
core/src/main/scala/org/apache/spark/ExecutorAllocationManager.scala has it). A task's work runs at
its node's CPU rate, inside the executor's container; the driver learns of a task's end at once.
Not modelled: locality waits, speculation, the AM's allocate interval (asks reach the RM at once),
the allocation manager's 100 ms polling (its timers fire when they expire).
This module holds the properties and the driver's state and rules; `spark_drivers.py` runs them
on the simulated cluster.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yarnctl.sim.appmaster import _Task
    from yarnctl.sim.physics import _Container

EXECUTOR_PRIORITY = 1  # YarnAllocator's RM_REQUEST_PRIORITY: Spark asks for every executor at priority 1
INT_MAX = 2**31 - 1  # Scala's Int.MaxValue, spark.dynamicAllocation.maxExecutors' default
EPS = 1e-6  # the kernel's clock resolution: work left below it is done

# Spark property -> (SparkConfig field, kind): how a workload names them (`spark:` in a job or in defaults)
PROPERTIES: dict[str, tuple[str, str]] = {
    "spark.executor.instances": ("executor_instances", "count"),
    "spark.executor.cores": ("executor_cores", "positive"),
    "spark.task.cpus": ("task_cpus", "positive"),
    "spark.task.maxFailures": ("task_max_failures", "positive"),
    "spark.yarn.max.executor.failures": ("max_executor_failures", "positive"),
    "spark.dynamicAllocation.enabled": ("dynamic", "bool"),
    "spark.dynamicAllocation.minExecutors": ("min_executors", "count"),
    "spark.dynamicAllocation.maxExecutors": ("max_executors", "positive"),
    "spark.dynamicAllocation.initialExecutors": ("initial_executors", "count"),
    "spark.dynamicAllocation.schedulerBacklogTimeout": ("backlog_timeout_s", "seconds"),
    "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout": ("sustained_backlog_timeout_s", "seconds"),
    "spark.dynamicAllocation.executorIdleTimeout": ("idle_timeout_s", "seconds"),
}
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True, slots=True)
class SparkConfig:
    """A Spark application's executor properties, with Spark 2.x's defaults (None: derived as Spark does)."""

    executor_instances: int | None = None  # static: 2 when unset (YarnSparkHadoopUtil.DEFAULT_NUMBER_EXECUTORS)
    executor_cores: int = 1
    task_cpus: int = 1
    task_max_failures: int = 4
    max_executor_failures: int | None = None  # max(2 x executors, 3) when unset (ApplicationMaster)
    dynamic: bool = False
    min_executors: int = 0
    max_executors: int | None = None  # unlimited (Int.MaxValue)
    initial_executors: int | None = None  # minExecutors when unset
    backlog_timeout_s: float = 1.0
    sustained_backlog_timeout_s: float | None = None  # backlog_timeout_s when unset
    idle_timeout_s: float = 60.0

    @property
    def tasks_per_executor(self) -> int:
        """Tasks an executor runs at once: spark.executor.cores / spark.task.cpus."""
        return self.executor_cores // self.task_cpus

    @property
    def max_bound(self) -> int:
        """spark.dynamicAllocation.maxExecutors, Int.MaxValue when unset."""
        return INT_MAX if self.max_executors is None else self.max_executors

    @property
    def sustained_s(self) -> float:
        """spark.dynamicAllocation.sustainedSchedulerBacklogTimeout (defaults to schedulerBacklogTimeout)."""
        return self.backlog_timeout_s if self.sustained_backlog_timeout_s is None else self.sustained_backlog_timeout_s

    @property
    def initial_target(self) -> int:
        """Executors asked for at the AM's start (YarnSparkHadoopUtil.getInitialTargetExecutorNumber)."""
        if not self.dynamic:
            return 2 if self.executor_instances is None else self.executor_instances
        # Utils.getDynamicAllocationInitialExecutors: the largest of min, initial and instances
        return max(self.min_executors, self.initial_executors or 0, self.executor_instances or 0)

    @property
    def max_failures(self) -> int:
        """spark.yarn.max.executor.failures: executors lost by their own fault before the app fails."""
        if self.max_executor_failures is not None:
            return self.max_executor_failures
        n = self.max_bound if self.dynamic else (self.executor_instances or 0)
        return max(3, INT_MAX if n > INT_MAX // 2 else 2 * n)


def _value(name: str, kind: str, raw: Any) -> Any:
    if kind == "bool":
        if isinstance(raw, str) and raw.lower() in ("true", "false"):
            return raw.lower() == "true"
        if not isinstance(raw, bool):
            raise ValueError(f"{name}: expected true or false, got {raw!r}")
        return raw
    if kind == "seconds":  # JavaUtils.timeStringAsSec: 60, "60s", "500ms", "2min"
        text = str(raw).strip() if not isinstance(raw, bool) else ""
        num = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        try:
            value = float(num) * _UNITS[text[len(num):] or "s"]
        except (ValueError, KeyError):
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name}: expected a positive time (seconds, or e.g. '60s', '500ms'), got {raw!r}")
        return value
    low = 1 if kind == "positive" else 0
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {raw!r}")
    return raw


def config_of(props: Mapping[str, Any], base: SparkConfig = SparkConfig(), check: bool = True) -> SparkConfig:
    """`base` with the Spark properties in `props` applied (ValueError naming an unknown or bad one)."""
    values: dict[str, Any] = {}
    for name, raw in props.items():
        if name not in PROPERTIES:
            raise ValueError(f"unknown Spark property {name!r}; known: {', '.join(sorted(PROPERTIES))}")
        field, kind = PROPERTIES[name]
        values[field] = _value(name, kind, raw)
    c = replace(base, **values) if values else base
    # ExecutorAllocationManager.validateSettings and TaskSchedulerImpl's checks, on the whole set
    if check and c.task_cpus > c.executor_cores:
        raise ValueError(f"spark.executor.cores ({c.executor_cores}) must not be less than spark.task.cpus "
                         f"({c.task_cpus})")
    if check and c.min_executors > c.max_bound:
        raise ValueError(f"spark.dynamicAllocation.minExecutors ({c.min_executors}) must be less than or equal "
                         f"to spark.dynamicAllocation.maxExecutors ({c.max_bound})")
    if check and not c.dynamic and c.initial_target < 1:
        raise ValueError("spark.executor.instances: a job without dynamic allocation needs at least 1 executor")
    return c


class ExecutorAllocation:
    """Spark 2.x's ExecutorAllocationManager: the target number of executors and idle removal.

    The driver calls the listener callbacks as its tasks and executors change, then `schedule`
    (`ExecutorAllocationManager.schedule`) at once; executors are identified by an integer.
    """

    def __init__(self, config: SparkConfig) -> None:
        self.config = config
        self.target = config.initial_target  # numExecutorsTarget
        self.to_add = 1  # numExecutorsToAdd
        self.add_time: float | None = None  # addTime (None: NOT_SET)
        self.remove_times: dict[int, float] = {}  # removeTimes
        self.initializing = True

    def update_target(self, now: float, max_needed: int, executors: int) -> int:
        """updateAndSyncNumExecutorsTarget: lower the target to what is needed, or add as the backlog timer expires."""
        c = self.config
        if self.initializing:
            return 0  # no stage yet: keep the initial target
        if max_needed < self.target:
            old = self.target  # more than needed: stop adding and cancel the extra asks
            self.target = max(max_needed, c.min_executors)
            self.to_add = 1
            return self.target - old
        if self.add_time is not None and now >= self.add_time - EPS:
            delta = self.add_executors(max_needed, executors)
            self.add_time = now + c.sustained_s
            return delta
        return 0

    def add_executors(self, max_needed: int, executors: int) -> int:
        """addExecutors: grow the target by numExecutorsToAdd within what is needed and the bounds, then double it."""
        c = self.config
        if self.target >= c.max_bound:
            self.to_add = 1
            return 0
        old = self.target
        # at least the executors already registered, plus this round's, at most what the tasks can fill
        target = min(max(self.target, executors) + self.to_add, max_needed)
        self.target = max(min(target, c.max_bound), c.min_executors)
        delta = self.target - old
        if delta == 0:
            self.to_add = 1
            return 0
        self.to_add = self.to_add * 2 if delta == self.to_add else 1
        return delta

    def can_add(self, max_needed: int) -> bool:
        """Whether the backlog timer, when it expires with nothing else changed, would raise the target."""
        return self.add_time is not None and self.target < min(max_needed, self.config.max_bound)

    def on_stage_submitted(self, now: float) -> None:
        """ExecutorAllocationListener.onStageSubmitted: the first stage ends initializing; tasks are backlogged."""
        self.initializing = False
        self.on_scheduler_backlogged(now)

    def on_scheduler_backlogged(self, now: float) -> None:
        """onSchedulerBacklogged: start the backlog timer unless it runs."""
        if self.add_time is None:
            self.add_time = now + self.config.backlog_timeout_s

    def on_scheduler_queue_empty(self) -> None:
        """onSchedulerQueueEmpty: no task waits; the ramp starts again from 1."""
        self.add_time = None
        self.to_add = 1

    def on_executor_idle(self, executor: int, now: float) -> None:
        """onExecutorIdle: start the executor's idle timer unless it runs."""
        if executor not in self.remove_times:
            self.remove_times[executor] = now + self.config.idle_timeout_s

    def on_executor_busy(self, executor: int) -> None:
        """onExecutorBusy: it runs a task; its idle timer stops."""
        self.remove_times.pop(executor, None)

    def on_executor_removed(self, executor: int) -> None:
        """onExecutorRemoved: forget it."""
        self.remove_times.pop(executor, None)

    def expired(self, now: float, executors: int) -> list[int]:
        """schedule's idle check and removeExecutors: executors idle for the timeout, keeping minExecutors."""
        due = sorted(e for e, t in self.remove_times.items() if now >= t - EPS)
        for e in due:
            del self.remove_times[e]  # an executor kept for the lower bound loses its timer (until idle again)
        keep = max(0, executors - self.config.min_executors)
        return due[:keep]


class _SparkTask:
    __slots__ = ("stage", "index", "duration", "finish_v", "failures")

    def __init__(self, stage: int, index: int, duration: float) -> None:
        self.stage, self.index, self.duration = stage, index, duration
        self.finish_v = 0.0  # the executor's work clock at which it ends
        self.failures = 0


class _Executor:
    __slots__ = ("c", "id", "running", "registered", "v", "next_v", "start_v")

    def __init__(self, c: _Container, eid: int) -> None:
        self.c, self.id = c, eid
        self.running: list[_SparkTask] = []
        self.registered = False  # its JVM has started and registered with the driver
        # work clock: nominal seconds served since launch; c.work is what is left until next_v
        self.v = 0.0
        self.next_v = 0.0
        self.start_v = c.work  # its launch cost (Startup), before it registers


class Driver:
    """One Spark application's driver: its stages, task queue, executors and allocation manager."""

    __slots__ = ("config", "stages", "running", "attempt", "stage", "left", "pending", "executors",
                 "registered", "n_running", "eam", "failures", "seq", "armed", "frozen_lowering")

    def __init__(self, config: SparkConfig, stages: tuple[tuple[float, ...], ...]) -> None:
        self.config, self.stages = config, stages
        self.attempt = 0
        self.reset()

    def reset(self) -> None:
        """A new attempt: nothing run, no executors."""
        self.running = False
        self.stage = 0
        self.left = 0  # tasks of the current stage not finished
        self.pending: deque[_SparkTask] = deque()
        self.executors: dict[_Task, _Executor] = {}  # by the YARN ask that got its container
        self.registered: list[_Executor] = []  # in registration order
        self.n_running = 0
        self.eam = ExecutorAllocation(self.config) if self.config.dynamic else None
        self.failures = 0  # executors lost by their own fault (numExecutorsFailed)
        self.seq = 0
        self.armed: set[float] = set()  # times of allocation-manager timers in the kernel
        self.frozen_lowering = False  # the target was above what is needed at the last schedule

    def max_needed(self) -> int:
        """maxNumExecutorsNeeded: executors that running and pending tasks fill, rounded up."""
        per = self.config.tasks_per_executor
        return (len(self.pending) + self.n_running + per - 1) // per
