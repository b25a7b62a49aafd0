"""Spark 2.x jobs in the simulator (sim/spark_am.py, sim/spark_drivers.py), hand-worked from Spark's own rules.

Each case names the Spark method whose rule it follows. The clusters are one node heartbeating on
whole seconds (FIFO fills it with every ask it can), jobs have no AM container (`am: false`), so a
job's driver starts at its submission and an executor asked at t starts at the heartbeat at t.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from yarnctl.engine import Engine
from yarnctl.errors import WorkloadError
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster, SimRun
from yarnctl.sim.kernel import AM
from yarnctl.sim.spark_am import EXECUTOR_PRIORITY, ExecutorAllocation, SparkConfig, config_of
from yarnctl.sim.workload import parse_workload

SOURCE = "spark.yaml"
NODE = "cluster: {nodes: 1, node: {memory_mb: 65536, vcores: 32}}\n"


def _workload(job: str, cluster: str = NODE, defaults: str = "") -> str:
    return cluster + defaults + "jobs:\n  - {id: a, submit_s: 0, type: spark, am: false, " + job + "}\n"


def _run(text: str, before: Callable[[SimCluster], None] | None = None) -> tuple[SimRun, SimCluster]:
    sim = SimCluster(parse_workload(text, SOURCE), Engine(make_policy("fifo")))
    if before is not None:
        before(sim)
    run = sim.run()
    assert sim.future == 0  # every executor event was accounted for
    return run, sim


def _executors(run: SimRun) -> list[tuple[float, float, str]]:
    """(start, end, outcome) of each executor container, in launch order."""
    return [(c.start_s, c.end_s, c.outcome) for c in sorted(run.containers, key=lambda c: c.id) if not c.is_am]


# ---------------------------------------------------------------- static allocation

STATIC = _workload("spark: {spark.executor.instances: 2, spark.executor.cores: 2}, "
                   "executors: {resource: {memory_mb: 2048, vcores: 2}}, "
                   "stages: [{tasks: 5, duration: 10}, {tasks: 2, duration: 5}]")


def test_static_executors_run_the_stages_inside_them() -> None:
    """YarnAllocator + TaskSchedulerImpl.resourceOffers + DAGScheduler's stage barrier.

    Two executors of 2 cores: stage 0's tasks 0-3 take the 4 slots at t=0 (round-robin: e1 0, 2;
    e2 1, 3); task 4 waits for a slot until 10 and ends at 20. Stage 1 starts only then (the
    slots free from 10 to 20 stay idle), its 2 tasks end at 25: the job ends at 25 and both
    executors are released with it. Busy slots: e1 2 x 10 + 1 x 10 + 1 x 5 = 35 vcore-s,
    e2 2 x 10 + 0 + 1 x 5 = 25.
    """
    run, _ = _run(STATIC)
    (job,) = run.jobs
    assert (job.start_s, job.finish_s, job.tasks, job.state) == (0.0, 25.0, 7, "succeeded")
    assert _executors(run) == [(0.0, 25.0, "done"), (0.0, 25.0, "done")]
    assert [c.used_vcore_s for c in sorted(run.containers, key=lambda c: c.id)] == [35.0, 25.0]
    assert {(c.memory_mb, c.vcores) for c in run.containers} == {(2048, 2)}


def test_a_lost_executor_is_asked_for_again_and_its_task_reruns() -> None:
    """YarnAllocator.processCompletedContainers + TaskSetManager.executorLost.

    Two 1-core executors run the 2 tasks of 10 s from t=0. At t=5 e1 is killed (not for its memory,
    so nothing counts as a failure): its task goes back to the queue, the allocator asks again for
    the executor it lacks, the node's heartbeat at 5 grants it, and the task runs again 5-15.
    e2 has nothing left after 10 but is held, as static executors are, until the job ends at 15.
    """
    text = _workload("spark: {spark.executor.instances: 2}, executors: {resource: {memory_mb: 1024, vcores: 1}}, "
                     "stages: [{tasks: 2, duration: 10}]")

    def kill_e1(sim: SimCluster) -> None:
        sim.k.schedule(5.0, AM, lambda: sim._kill(sim.nodes[0].running["a_000001"], "killed"))

    run, _ = _run(text, kill_e1)
    (job,) = run.jobs
    assert (job.finish_s, job.kills, job.state) == (15.0, 1, "succeeded")
    assert _executors(run) == [(0.0, 5.0, "killed"), (0.0, 15.0, "done"), (5.0, 15.0, "done")]


def test_tasks_in_executors_slow_down_with_their_node_cpu() -> None:
    """NodePhysics' CPU model inside executors: 2 one-core executors on a node with 1 physical vcore.

    Tasks of 10 s and 4 s start at 0 and share the core at half speed: the short one ends at 8,
    having done 4 s; the long one has 6 s of work left, alone at full speed: it ends at 14.
    """
    text = _workload("spark: {spark.executor.instances: 2}, executors: {resource: {memory_mb: 1024, vcores: 1}}, "
                     "stages: [{tasks: 2, duration: [10, 4]}]",
                     cluster="cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, "
                             "physical: {memory_mb: 8192, vcores: 1}}\n")
    run, _ = _run(text)
    assert run.jobs[0].finish_s == 14.0
    assert [round(c.used_vcore_s, 6) for c in sorted(run.containers, key=lambda c: c.id)] == [10.0, 4.0]


def test_a_lost_am_takes_its_executors_and_the_next_attempt_starts_over() -> None:
    """RMAppAttemptImpl kills a failed attempt's containers; Spark's next ApplicationMaster reruns the app.

    The AM starts at 0 and asks for 2 executors, granted at the heartbeat at 1; their tasks run
    from 1. At 5 the AM is killed: both executors go with it, the AM starts again at 5, asks
    again, gets its executors at 6, and both tasks run 6-16 from the start.
    """
    text = ("cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}}\njobs:\n  - {id: a, submit_s: 0, type: spark, "
            "spark: {spark.executor.instances: 2}, executors: {resource: {memory_mb: 1024, vcores: 1}}, "
            "stages: [{tasks: 2, duration: 10}]}\n")

    def kill_am(sim: SimCluster) -> None:
        sim.k.schedule(5.0, AM, lambda: sim._kill(sim.nodes[0].running["a_000001"], "killed"))

    run, _ = _run(text, kill_am)
    assert (run.jobs[0].finish_s, run.jobs[0].kills, run.jobs[0].state) == (16.0, 3, "succeeded")
    assert [(c.is_am, c.start_s, c.end_s, c.outcome) for c in sorted(run.containers, key=lambda c: c.id)] == [
        (True, 0.0, 5.0, "killed"), (False, 1.0, 5.0, "killed"), (False, 1.0, 5.0, "killed"),
        (True, 5.0, 16.0, "done"), (False, 6.0, 16.0, "done"), (False, 6.0, 16.0, "done")]


def test_executors_killed_for_their_memory_fail_the_job() -> None:
    """ApplicationMaster's maxNumExecutorFailures: max(2 x spark.executor.instances, 3) = 3 for 1 executor.

    The executor uses 1.5 x its 2048 MB on a node with 2048 MB of physical memory: the NodeManager
    kills it as it starts, at the heartbeats at 0, 1 and 2; the third loss fails the application.
    """
    text = _workload("spark: {spark.executor.instances: 1}, "
                     "executors: {resource: {memory_mb: 2048, vcores: 1}, usage: {cpu: 1, memory: 1.5}}, "
                     "stages: [{tasks: 4, duration: 10}]",
                     cluster="cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, "
                             "physical: {memory_mb: 2048, vcores: 8}}\n")
    run, _ = _run(text)
    (job,) = run.jobs
    assert (job.state, job.kills) == ("failed", 3)
    assert [e[0] for e in _executors(run)] == [0.0, 1.0, 2.0]
    assert {e[2] for e in _executors(run)} == {"oom"}


# ---------------------------------------------------------------- dynamic allocation

DYNAMIC = _workload("spark: {spark.dynamicAllocation.enabled: true}, "
                    "executors: {resource: {memory_mb: 1024, vcores: 1}}, "
                    "stages: [{tasks: 20, duration: 10}, {tasks: 1, duration: 100}]")


def test_backlog_ramps_the_request_up_1_2_4_8() -> None:
    """ExecutorAllocationManager.updateAndSyncNumExecutorsTarget / addExecutors / onSchedulerBacklogged.

    No executor at first (initialExecutors = minExecutors = 0). The stage's 20 tasks are backlogged
    from 0; after schedulerBacklogTimeout (1 s) the target grows by 1, then every
    sustainedSchedulerBacklogTimeout (1 s) by 2, 4, 8: 1, 3, 7, 15 executors at t = 1, 2, 3, 4.
    At 5 doubling would ask 16 more, but maxNumExecutorsNeeded is 20 tasks / 1 core: 5 more.
    """
    run, _ = _run(DYNAMIC)
    starts = [e[0] for e in _executors(run)]
    assert [starts.count(float(t)) for t in range(7)] == [0, 1, 2, 4, 8, 5, 0]


def test_idle_executors_are_released_after_the_idle_timeout() -> None:
    """ExecutorAllocationManager.onExecutorIdle / schedule / removeExecutors, executorIdleTimeout 60 s.

    Stage 0's tasks end 10 s after their executor started (the ones started at 2 end at 12, ...,
    at 5 end at 15). Stage 1's single task goes to the first registered executor (started at 1) at
    15 and runs to 115; every other executor is idle from its task's end and released 60 s later:
    at 72, 73, 74 and 75. The busy one is released with the job at 115.
    """
    run, _ = _run(DYNAMIC)
    (job,) = run.jobs
    assert job.finish_s == 115.0
    ex = _executors(run)
    assert ex[0] == (1.0, 115.0, "done")
    assert all(end == start + 70.0 for start, end, _ in ex[1:])
    assert len(ex) == 20


def test_min_and_max_executors_bound_the_target() -> None:
    """addExecutors' bounds and removeExecutors' lower bound: minExecutors 2, maxExecutors 3.

    The initial target is minExecutors: 2 executors at 0. At 1 the backlog adds one (3), and the
    target never passes maxExecutors although 10 tasks wait. On 3 executors stage 0's tasks run
    e1 0-10-20-30-40, e2 0-10-20-30, e3 1-11-21-31; stage 1's task runs on e1 from 40 to 140.
    e2 (idle from 30) goes at 90; e3 (idle from 31) is kept at 91, as removing it would leave fewer
    than minExecutors, and goes with the job at 140.
    """
    text = _workload("spark: {spark.dynamicAllocation.enabled: true, spark.dynamicAllocation.minExecutors: 2, "
                     "spark.dynamicAllocation.maxExecutors: 3}, executors: {resource: {memory_mb: 1024, vcores: 1}}, "
                     "stages: [{tasks: 10, duration: 10}, {tasks: 1, duration: 100}]")
    run, _ = _run(text)
    assert run.jobs[0].finish_s == 140.0
    assert _executors(run) == [(0.0, 140.0, "done"), (0.0, 90.0, "done"), (1.0, 140.0, "done")]


def test_backlog_timeouts_in_spark_time_strings() -> None:
    """onSchedulerBacklogged / addExecutors with schedulerBacklogTimeout '5s', sustained '2000ms'.

    The first executor comes at 5, then 2, 4, 8 more every 2 s (7, 9, 11), and the last 5 at 13.
    """
    text = _workload("spark: {spark.dynamicAllocation.enabled: true, "
                     "spark.dynamicAllocation.schedulerBacklogTimeout: 5s, "
                     "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout: 2000ms}, "
                     "executors: {resource: {memory_mb: 1024, vcores: 1}}, stages: [{tasks: 20, duration: 10}]")
    run, _ = _run(text)
    starts = [e[0] for e in _executors(run)]
    assert sorted(set(starts)) == [5.0, 7.0, 9.0, 11.0, 13.0]
    assert [starts.count(t) for t in (5.0, 7.0, 9.0, 11.0, 13.0)] == [1, 2, 4, 8, 5]


def test_allocation_manager_rules_by_hand() -> None:
    """ExecutorAllocationManager.updateAndSyncNumExecutorsTarget, addExecutors, removeExecutors."""
    m = ExecutorAllocation(SparkConfig(dynamic=True, min_executors=1, max_executors=10))
    assert m.target == 1 and m.update_target(0.0, 50, 0) == 0  # initializing: no stage yet
    m.on_stage_submitted(0.0)
    assert m.add_time == 1.0 and m.update_target(0.5, 50, 0) == 0  # backlogged for less than 1 s
    assert [m.update_target(t, 50, 1) for t in (1.0, 2.0, 3.0)] == [1, 2, 4]  # target 2, 4, 8
    assert (m.target, m.to_add) == (8, 8)
    assert m.update_target(4.0, 50, 8) == 2 and (m.target, m.to_add) == (10, 1)  # capped by maxExecutors
    assert m.update_target(5.0, 4, 8) == -6 and m.target == 4  # more than 4 needed: lowered, asks cancelled
    assert m.update_target(6.0, 0, 8) == -3 and m.target == 1  # never below minExecutors
    m.on_executor_idle(7, 10.0)
    m.on_executor_idle(7, 20.0)  # already idle: the timer keeps running from 10
    m.on_executor_idle(8, 15.0)
    assert m.expired(69.9, 2) == [] and m.expired(75.0, 2) == [7]  # 8 is kept for minExecutors = 1
    assert m.remove_times == {}  # and its timer is gone until it is idle again


# ---------------------------------------------------------------- the workload format

def _fails(text: str, field: str, problem: str) -> None:
    with pytest.raises(WorkloadError) as info:
        parse_workload(text, SOURCE)
    assert info.value.field == field, str(info.value)
    assert problem in str(info.value)


EXEC = "executors: {resource: {memory_mb: 1024, vcores: 1}}, stages: [{tasks: 2, duration: 10}]"


@pytest.mark.parametrize(("job", "field", "problem"), [
    ("spark: {spark.executor.memory: 4g}, " + EXEC, "jobs[0].spark",
     "unknown Spark property 'spark.executor.memory'; known: spark.dynamicAllocation.enabled"),
    ("spark: {spark.executor.instances: two}, " + EXEC, "jobs[0].spark",
     "spark.executor.instances: expected an integer >= 0, got 'two'"),
    ("spark: {spark.dynamicAllocation.enabled: yes please}, " + EXEC, "jobs[0].spark",
     "spark.dynamicAllocation.enabled: expected true or false"),
    ("spark: {spark.dynamicAllocation.executorIdleTimeout: 1 parsec}, " + EXEC, "jobs[0].spark",
     "expected a positive time"),
    ("spark: {spark.dynamicAllocation.maxExecutors: 0}, " + EXEC, "jobs[0].spark", "expected an integer >= 1"),
    ("spark: {spark.dynamicAllocation.minExecutors: 5, spark.dynamicAllocation.maxExecutors: 2}, " + EXEC,
     "jobs[0].spark", "minExecutors (5) must be less than or equal to spark.dynamicAllocation.maxExecutors (2)"),
    ("spark: {spark.executor.instances: 0}, " + EXEC, "jobs[0].spark", "needs at least 1 executor"),
    ("spark: {spark.executor.cores: 2}, " + EXEC, "jobs[0].executors.resource.vcores",
     "expected spark.executor.cores = 2"),
    ("spark: {spark.executor.instances: 2}, executors: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, "
     "duration: 10}", "jobs[0].spark", "Spark properties need `stages`"),
    ("executors: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}}, stages: [{tasks: 2, duration: 10}]",
     "jobs[0].executors.tasks", "how many: spark.executor.instances or dynamic allocation"),
    ("executors: {resource: {memory_mb: 1024, vcores: 1}}, stages: [{tasks: 2, duration: 10, "
     "resource: {memory_mb: 1024, vcores: 1}}]", "jobs[0].stages[0].resource", "unknown field"),
    ("executors: {resource: {memory_mb: 1024, vcores: 1}}, stages: []", "jobs[0].stages", "non-empty list"),
])
def test_bad_spark_jobs_name_the_field(job: str, field: str, problem: str) -> None:
    _fails(_workload(job), field, problem)


def test_spark_properties_in_defaults_name_defaults() -> None:
    _fails(_workload(EXEC, defaults="defaults: {spark: {spark.driver.memory: 1g}}\n"), "defaults.spark",
           "unknown Spark property 'spark.driver.memory'")


def test_spark_properties_come_from_defaults_and_the_job() -> None:
    text = _workload("spark: {spark.dynamicAllocation.maxExecutors: 8, spark.dynamicAllocation.executorIdleTimeout: "
                     "'2min'}, executors: {resource: {memory_mb: 2048, vcores: 2}}, iterations: 3, "
                     "stages: [{name: map, tasks: 4, duration: 10}, {tasks: 2, duration: 5}]",
                     defaults="defaults: {spark: {spark.dynamicAllocation.enabled: true, "
                              "spark.dynamicAllocation.maxExecutors: 4, spark.executor.cores: 2}}\n")
    (job,) = parse_workload(text, SOURCE).jobs
    assert job.spark is not None
    assert (job.spark.dynamic, job.spark.max_executors, job.spark.executor_cores) == (True, 8, 2)
    assert job.spark.idle_timeout_s == 120.0 and job.spark.sustained_s == 1.0  # Spark's defaults elsewhere
    # iterations repeat the stages inside the one application, each after the one before
    assert [s.name for s in job.stages] == ["map#1", "stage1#1", "map#2", "stage1#2", "map#3", "stage1#3"]
    assert [s.after for s in job.stages] == [None, 0, 1, 2, 3, 4]
    assert {(s.kind, s.priority) for s in job.stages} == {("spark", EXECUTOR_PRIORITY)}
    assert job.iterations == 1 and job.tasks == 18


def test_the_executors_only_form_keeps_its_meaning() -> None:
    """Without stages a Spark job is still N containers held D seconds each, with no driver."""
    text = _workload("executors: {tasks: 3, resource: {memory_mb: 1024, vcores: 1}, duration: 30}",
                     defaults="defaults: {spark: {spark.executor.instances: 5}}\n")
    (job,) = parse_workload(text, SOURCE).jobs
    assert job.spark is None and [(s.kind, s.tasks) for s in job.stages] == [("executor", 3)]
    run, _ = _run(text)
    assert _executors(run) == [(0.0, 30.0, "done")] * 3


def test_spark_defaults() -> None:
    """Spark 2.x: 2 executors of 1 core without dynamic allocation; dynamic: 0 to Int.MaxValue from minExecutors."""
    static = SparkConfig()
    assert (static.initial_target, static.tasks_per_executor, static.max_failures) == (2, 1, 3)
    dyn = config_of({"spark.dynamicAllocation.enabled": "true", "spark.dynamicAllocation.initialExecutors": 3})
    assert (dyn.initial_target, dyn.max_bound, dyn.backlog_timeout_s, dyn.sustained_s, dyn.idle_timeout_s) == \
        (3, 2**31 - 1, 1.0, 1.0, 60.0)


def test_the_spark_example_of_the_workload_docs_runs() -> None:
    """docs/workloads.md's Spark job, as written there, on two 16 GB nodes: 5 x (200 + 50) tasks on 4 executors."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "workloads.md").read_text()
    block = next(b for b in doc.split("```yaml\n")[1:] if "id: km1" in b).split("```")[0]
    text = "cluster: {nodes: 2, node: {memory_mb: 16384, vcores: 8}}\njobs:\n" + block
    (job,) = parse_workload(text, SOURCE).jobs
    assert job.spark is not None and (job.spark.initial_target, job.spark.tasks_per_executor) == (4, 2)
    run, _ = _run(text)
    assert run.jobs[0].state == "succeeded" and run.jobs[0].tasks == 1250
    assert len(_executors(run)) == 4
