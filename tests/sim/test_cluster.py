"""The simulated cluster behaves like YARN: heartbeats, AMs, slow start, over-commit, kills.

Golden cases from the papers carry their figure/example number in the test id.
"""

import dataclasses
from collections import Counter

import pytest

from yarnctl.engine import Engine
from yarnctl.model import Decision, Kill, NodeResize, Resources
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.mr_am import MRAMConfig
from yarnctl.sim.runner import simulate
from yarnctl.sim.workload import load_workload, parse_workload
from yarnctl.policies.contract import PolicyBase


def run(workload, policy="fifo", **kw):
    sim = SimCluster(workload, Engine(make_policy(policy)), **kw)
    return sim, sim.run()


def wl(text, seed=0):
    return parse_workload(text, "test.yaml", seed)


def makespan(policy, workload):
    result, _ = simulate(workload, [policy])[0]
    return result.makespan_s


@pytest.mark.parametrize("policy, expected", [("ffd-dp", 4.0), ("fifo", 5.0)],
                         ids=["haste-fig1-ffd-dp-4-units", "haste-fig1-fifo-5-units"])
def test_haste_fig1_golden(policy, expected):
    # [HaSTE] Fig. 1: one 4 GB node; job 1 four 1 GB tasks, job 2 four 3 GB tasks
    assert makespan(policy, load_workload("haste-fig1")) == expected


@pytest.mark.parametrize("policy", ["drf", "fair"])
def test_hmrf_example1_drf_gives_a_25_and_b_50(policy):
    # [H-MRF] Example 1: <100 CPU, 100 GB>; A <1 CPU, 2 GB>, B <1 CPU, 1 GB>
    sim, _ = run(load_workload("hmrf-example1"), policy, max_time_s=500)
    held = Counter(c.app_id for c in sim.snapshot().containers.values())
    assert held == {"a1": 25, "b1": 50}


def test_fifo_on_example1_gives_everything_to_the_first_app():
    sim, _ = run(load_workload("hmrf-example1"), "fifo", max_time_s=500)
    assert Counter(c.app_id for c in sim.snapshot().containers.values()) == {"a1": 50}


MR = """
cluster: {nodes: 2, node: {memory_mb: 8192, vcores: 8}}
jobs:
  - id: j1
    submit_s: 3
    type: mapreduce
    maps: {tasks: 20, resource: {memory_mb: 1024, vcores: 1}, duration: 10}
    reduces: {tasks: 2, resource: {memory_mb: 2048, vcores: 1}, duration: 5}
"""


def test_am_runs_before_tasks_and_is_released_at_the_end():
    _, r = run(wl(MR))
    am = [c for c in r.containers if c.is_am]
    tasks = [c for c in r.containers if not c.is_am]
    assert len(am) == 1 and am[0].memory_mb == 2048  # 1536 MB normalised to the 1 GB minimum
    assert am[0].start_s == 3.0  # first heartbeat at or after submission
    assert min(c.start_s for c in tasks) >= am[0].start_s
    assert am[0].end_s >= max(c.end_s for c in tasks)


def test_reduces_start_after_slowstart_but_finish_after_all_maps():
    _, r = run(wl(MR))
    maps = sorted((c for c in r.containers if not c.is_am and c.memory_mb == 1024), key=lambda c: c.start_s)
    reduces = [c for c in r.containers if c.memory_mb == 2048 and not c.is_am]
    assert len(maps) == 20 and len(reduces) == 2
    last_map = max(c.end_s for c in maps)
    assert min(c.start_s for c in reduces) < last_map  # slow start 0.05: they start early
    # a reduce's 5 s of work counts from when the AM learns the last map ended (its next heartbeat)
    assert all(c.end_s >= last_map + 5 for c in reduces)


def test_completion_is_reported_at_the_next_heartbeat():
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 1024, vcores: 1}, heartbeat_s: 1.0}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: spark, executors: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 0.5}}
""")
    _, r = run(w)
    first, second = sorted(r.containers, key=lambda c: c.start_s)
    assert first.end_s == 0.5
    assert second.start_s == 1.0  # the slot was freed when the node next heartbeated


def test_spark_executors_are_requested_at_once():
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 16384, vcores: 16}}
defaults: {am: false}
jobs:
  - {id: s, submit_s: 0, type: spark, executors: {tasks: 8, resource: {memory_mb: 2048, vcores: 2}, duration: 10}}
""")
    _, r = run(w)
    assert {c.start_s for c in r.containers} == {0.0}


def test_iterations_run_one_after_another():
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 16384, vcores: 16}}
defaults: {am: false}
jobs:
  - id: it
    submit_s: 0
    type: generic
    iterations: 3
    stages:
      - {name: m, tasks: 4, resource: {memory_mb: 1024, vcores: 1}, duration: 10}
      - {name: r, tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 5, priority: 10}
""")
    res, run_ = simulate(w, ["fifo"])[0]
    starts = sorted({c.start_s for c in run_.containers})
    assert starts == [0.0, 10.0, 15.0, 25.0, 30.0, 40.0]
    assert res.makespan_s == 45.0


def test_cpu_overcommit_slows_tasks_down():
    # 4 vcores offered on 2 physical: four busy 1-vcore tasks run at half speed (003 Sec. V)
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 4}, physical: {memory_mb: 8192, vcores: 2}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: spark, executors: {tasks: 4, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
""")
    _, r = run(w)
    assert sorted(c.end_s for c in r.containers) == pytest.approx([20.0] * 4)


OVERCOMMIT = """
cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 4}, physical: {memory_mb: 3072, vcores: 4}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: spark,
     executors: {tasks: 4, resource: {memory_mb: 1024, vcores: 1}, duration: DURATION}}
"""


def test_memory_overcommit_kills_the_youngest_and_requeues_it():
    # 4 GB offered on 3 GB of memory: the fourth task is killed until the others finish at t=2
    res, r = simulate(wl(OVERCOMMIT.replace("DURATION", "2")), ["fifo"])[0]
    assert Counter(c.outcome for c in r.containers) == {"oom": 2, "done": 4}
    assert res.failed == 0 and res.unfinished == 0 and res.makespan_s == 4.0


def test_a_task_failing_four_times_fails_its_job():
    # mapreduce.*.maxattempts = 4: the fourth OOM kill of the same task fails the job
    res, r = simulate(wl(OVERCOMMIT.replace("DURATION", "100")), ["fifo"])[0]
    assert Counter(c.outcome for c in r.containers) == {"oom": 4, "killed": 3}
    assert res.failed == 1 and res.jobs[0].state == "failed" and res.jobs[0].completion_s is None


def test_usage_profile_changes_actual_use_over_time():
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 4}}
defaults: {am: false}
jobs:
  - id: j
    submit_s: 0
    type: spark
    executors:
      tasks: 1
      resource: {memory_mb: 2048, vcores: 2}
      duration: 10
      usage: {profile: [{at: 0.0, cpu: 0.5, memory: 0.25}, {at: 0.5, cpu: 1.0, memory: 0.75}]}
""")
    _, r = run(w)
    used = {t: (cpu, mem) for t, _, _, cpu, mem in r.usage}
    assert used[0.0] == (1.0, 512.0)
    assert used[5.0] == (2.0, 1536.0)


class KillFirstRunning(PolicyBase):
    """A test policy that behaves as `inner` but kills the first container it ever sees (a task if `tasks_only`), once."""

    name = "kill-once"

    def __init__(self, inner="fifo", tasks_only=False):
        self.inner = make_policy(inner)
        self.tasks_only = tasks_only
        self.done = False

    def decide(self, snap, node_id):
        seen = sorted(cid for cid, c in snap.containers.items() if not (self.tasks_only and c.is_am))
        if not self.done and seen:
            self.done = True
            return Decision(kills=(Kill(seen[0], "test"),))
        return self.inner.decide(snap, node_id)


def test_policy_kills_rerun_the_task():
    w = wl("""
cluster: {nodes: 2, node: {memory_mb: 2048, vcores: 2}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: spark, executors: {tasks: 3, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
""")
    sim = SimCluster(w, Engine(KillFirstRunning()))
    r = sim.run()
    assert Counter(c.outcome for c in r.containers) == {"done": 3, "killed": 1}
    assert r.jobs[0].finish_s is not None and r.jobs[0].kills == 1


def test_reduces_holding_the_cluster_are_preempted_by_their_am():
    # both maps run at once (n1), so the AM asks for every reduce (scheduleAllReduces); the test policy
    # kills a map, which is asked for again, and the reduces (priority 10, served before maps at 20)
    # take the containers that free up: reduces hold the cluster while the map cannot run, until the AM
    # preempts them (RMContainerAllocator.preemptReducesIfNeeded: no map running, no headroom for one)
    w = wl("""
cluster:
  groups:
    - {count: 1, node: {memory_mb: 2048, vcores: 8}}
    - {count: 1, node: {memory_mb: 1024, vcores: 8}}
defaults: {am: false}
jobs:
  - id: j
    submit_s: 0
    type: mapreduce
    maps: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 10}
    reduces: {tasks: 3, resource: {memory_mb: 1024, vcores: 1}, duration: 5, slowstart: 0.0}
""")
    r = SimCluster(w, Engine(KillFirstRunning())).run()
    assert not r.stuck and r.jobs[0].state == "succeeded"
    assert r.stats["reduce_preemptions"] >= 1
    assert Counter(c.outcome for c in r.containers)["preempted"] == r.stats["reduce_preemptions"]


def test_a_policy_that_never_assigns_ends_the_run_as_stuck():
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 4}}
defaults: {am: false, queue: q}
jobs:
  - {id: j, submit_s: 0, type: spark, executors: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
""")
    sim = SimCluster(w, Engine(make_policy("capacity", {"queues": {"q": {"capacity": 100, "maximum_capacity": 0}}})))
    r = sim.run()
    assert r.stuck and r.jobs[0].finish_s is None


RESERVING = {"reservations": True}


@pytest.mark.parametrize("policy, params", [("fifo", {}), ("fair", {}), ("drf", {}), ("capacity", {}), ("ffd-dp", {}),
                                            ("fair", RESERVING), ("drf", RESERVING), ("capacity", RESERVING)])
def test_skipping_idle_heartbeats_changes_nothing(policy, params):
    """With reservations, FairScheduler reserves a full node at its heartbeat (so fair and drf are asked about
    full nodes: `reserves_full_nodes`); CapacityScheduler schedules only nodes with room for the minimum allocation."""
    w = load_workload("haste-mixed1")
    fast = SimCluster(w, Engine(make_policy(policy, params))).run()
    slow = SimCluster(w, Engine(make_policy(policy, params)), skip_idle=False).run()
    assert [(j.id, j.start_s, j.finish_s) for j in fast.jobs] == [(j.id, j.start_s, j.finish_s) for j in slow.jobs]
    assert fast.stats["heartbeats"] < slow.stats["heartbeats"]


@pytest.mark.parametrize("t, a_tasks, b_tasks", [(5, 24, 4), (15, 20, 20), (25, 22, 12), (35, 20, 20)],
                         ids=["table1a-t1", "table1a-t2", "table1a-t3", "table1a-t4"])
def test_hmrf_example3_drf_allocation_per_slot(t, a_tasks, b_tasks):
    # [H-MRF] Example 3, Table 1(a): running tasks per slot under DRF
    sim = SimCluster(load_workload("hmrf-example3"), Engine(make_policy("drf", {"assign_multiple": True})),
                     max_time_s=t)
    sim.run()
    snap = sim.snapshot()
    held = Counter(snap.apps[c.app_id].user for c in snap.containers.values())
    assert held == {"A": a_tasks, "B": b_tasks}


def test_a_task_killed_at_launch_does_not_stall_the_run():
    # found in review: a container OOM-killed inside its own launch had no END event to cancel,
    # which made the run look stalled and dropped job a's 1000 s tasks
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, physical: {memory_mb: 6144, vcores: 8}}
defaults: {am: false}
jobs:
  - {id: a, submit_s: 0, type: spark, executors: {tasks: 4, resource: {memory_mb: 1024, vcores: 1}, duration: 1000}}
  - {id: b, submit_s: 0.5, type: spark, executors: {tasks: 1, resource: {memory_mb: 3072, vcores: 1}, duration: 10}}
""")
    res, r = simulate(w, ["fifo"])[0]
    assert not r.stuck and res.unfinished == 0
    assert {j.id: j.state for j in res.jobs} == {"a": "succeeded", "b": "failed"}
    assert res.makespan_s == 1000.0


def test_capacity_am_limit_counts_apps_whose_tasks_all_run():
    # 10% of 16 GB allows one 2 GB AM: the next app starts only when the first has finished
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 16384, vcores: 16}}
jobs:
  - {id: a, submit_s: 0, type: spark, executors: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 100}}
  - {id: b, submit_s: 5, type: spark, executors: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 100}}
""")
    res, _ = simulate(w, ["capacity"])[0]
    a, b = res.jobs
    assert b.start_s > a.finish_s


@pytest.mark.parametrize("slowstart, reduce_start, reduce_end", [
    # started at t=1 (every map running, so the AM asks for it at its first heartbeat): it fetches while
    # the maps run, and when they end at t=10 only the last map's output is left, 8/4 = 2 s; then 5 s
    (0.0, 1.0, 10.0 + 2.0 + 5.0),
    # asked for once every map has completed (AM heartbeat t=11): the whole 8 s shuffle, then 5 s
    (1.0, 11.0, 11.0 + 8.0 + 5.0),
])
def test_reduces_shuffle_while_the_maps_run(slowstart, reduce_start, reduce_end):
    w = wl(f"""
cluster: {{nodes: 1, node: {{memory_mb: 5120, vcores: 8}}}}
defaults: {{am: false}}
jobs:
  - id: j
    submit_s: 0
    type: mapreduce
    maps: {{tasks: 4, resource: {{memory_mb: 1024, vcores: 1}}, duration: 10}}
    reduces: {{tasks: 1, resource: {{memory_mb: 1024, vcores: 1}}, duration: 5, shuffle_s: 8, slowstart: {slowstart}}}
""")
    r = SimCluster(w, Engine(make_policy("fifo"))).run()
    (reduce,) = [c for c in r.containers if c.start_s > 0]
    assert (reduce.start_s, reduce.end_s) == (reduce_start, reduce_end)


def test_am_start_up_delays_the_first_ask():
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, startup: {am_s: 4}}
jobs:
  - {id: j, submit_s: 0, type: mapreduce, maps: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
""")
    r = SimCluster(w, Engine(make_policy("fifo"))).run()
    am, task = sorted(r.containers, key=lambda c: c.start_s)
    assert am.is_am and am.start_s == 0.0
    assert (task.start_s, task.end_s) == (4.0, 14.0)  # asked at t=4, placed at the node's heartbeat then


def test_launch_cost_grows_with_containers_starting_on_the_node():
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, startup: {launch_s: 2, launch_per_concurrent_s: 1}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: mapreduce, maps: {tasks: 3, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
""")
    r = SimCluster(w, Engine(make_policy("fifo"))).run()
    # launched together: the first starts alone (2 s), the second beside one (3 s), the third beside two (4 s)
    assert sorted(c.end_s for c in r.containers) == [12.0, 13.0, 14.0]


def test_a_reduce_started_early_starts_its_jvm_at_launch():
    """Slow start 0: the reduce launches at t=1 beside the map, still starting (2 + 1 s: ready at 4); the map
    (2 s launch, 1 s of work) ends at 3, so the reduce's work begins when its JVM is ready, at 4, not at 3."""
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, startup: {launch_s: 2, launch_per_concurrent_s: 1}}
defaults: {am: false}
jobs:
  - id: j
    submit_s: 0
    type: mapreduce
    maps: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 1}
    reduces: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 5, slowstart: 0.0}
""")
    r = SimCluster(w, Engine(make_policy("fifo"))).run()
    the_map, the_reduce = sorted(r.containers, key=lambda c: c.start_s)
    assert (the_map.start_s, the_map.end_s) == (0.0, 3.0)
    assert (the_reduce.start_s, the_reduce.end_s) == (1.0, 9.0)


def test_an_early_reduce_fetches_only_once_its_jvm_is_up():
    """Two 7 s maps launch at 0 (5 s each: end at 12); the reduce launches at 1, its JVM up at 6. By the
    maps' end it has fetched for 6 s of its 20 s shuffle: 14 s left (at least the last map's 10 s), then 3 s."""
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, startup: {launch_s: 5}}
defaults: {am: false}
jobs:
  - id: j
    submit_s: 0
    type: mapreduce
    maps: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 7}
    reduces: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 3, shuffle_s: 20, slowstart: 0.0}
""")
    r = SimCluster(w, Engine(make_policy("fifo"))).run()
    *maps, the_reduce = sorted(r.containers, key=lambda c: c.start_s)
    assert [m.end_s for m in maps] == [12.0, 12.0]
    assert (the_reduce.start_s, the_reduce.end_s) == (1.0, 12.0 + 14.0 + 3.0)


def _apart_and_shared(doc):
    """The runs of `doc` (a cluster with a %s in its startup) with each node's own starts, and with launch_shared."""
    return (SimCluster(wl(doc % ""), Engine(make_policy("fifo"))).run(),
            SimCluster(wl(doc % ", launch_shared: true"), Engine(make_policy("fifo"))).run())


def test_the_linear_launch_cost_counts_the_whole_machine_when_its_nodes_share_one():
    """launch_shared: containers starting on the other node count too (NodeManagers on one machine)."""
    doc = """
cluster: {nodes: 2, node: {memory_mb: 1024, vcores: 1}, startup: {launch_s: 2, launch_per_concurrent_s: 1%s}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: mapreduce, maps: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
"""
    apart, shared = _apart_and_shared(doc)
    # one map per node, the second launched half a second after the first (node 2's heartbeat): apart each
    # starts alone (2 s); shared, the second starts beside the first, still starting (3 s)
    assert sorted(round(c.end_s - c.start_s, 3) for c in apart.containers) == [12.0, 12.0]
    assert sorted(round(c.end_s - c.start_s, 3) for c in shared.containers) == [12.0, 13.0]


def test_jvm_starts_share_the_pools_cores():
    """jvmstart.py: three maps start together on one node whose starts share 1 core, 2 CPU-seconds each:
    processor-shared, all three end their start-up at 6 s together (not 2, 4, 6 in launch order)."""
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, startup: {launch_cpu_s: 2, launch_cores: 1}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: mapreduce, maps: {tasks: 3, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
""")
    r = SimCluster(w, Engine(make_policy("fifo"))).run()
    assert sorted(c.end_s for c in r.containers) == [16.0, 16.0, 16.0]
    # with 2 cores two run at full speed, the third shares: 2 CPU-s at 2/3 of a core each: 3 s
    r2 = SimCluster(dataclasses.replace(w, cluster=dataclasses.replace(
        w.cluster, startup=dataclasses.replace(w.cluster.startup, launch_cores=2))), Engine(make_policy("fifo"))).run()
    assert sorted(c.end_s for c in r2.containers) == [13.0, 13.0, 13.0]


def test_jvm_starts_on_different_nodes_share_one_machine_when_the_pool_is_shared():
    """Two NodeManagers on one 1-core machine (launch_shared): a start on each node halves the other's speed."""
    doc = """
cluster: {nodes: 2, node: {memory_mb: 1024, vcores: 1}, startup: {launch_cpu_s: 2, launch_cores: 1%s}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: mapreduce, maps: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
"""
    apart, shared = _apart_and_shared(doc)
    # node 2 heartbeats half a second after node 1: separate pools take 2 s each; shared, the first
    # runs alone for 0.5 s, then both at half speed until it ends at 3.5 s, the second alone to 4.0 s
    assert sorted(c.end_s - c.start_s for c in apart.containers) == [12.0, 12.0]
    assert sorted((c.start_s, c.end_s) for c in shared.containers) == [(0.0, 13.5), (0.5, 14.0)]


def test_an_am_start_up_is_cpu_work_in_the_pool_after_its_jvm():
    """jvmstart.py, `am_cpu_s`: the AM's JVM (2 CPU-s) and then its own start-up (3 CPU-s) on the node's one
    core, then `am_s` (1 s): it asks at 6 s."""
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8},
          startup: {am_s: 1, launch_cpu_s: 2, am_cpu_s: 3, launch_cores: 1}}
jobs:
  - {id: j, submit_s: 0, type: mapreduce, am: {memory_mb: 1024, vcores: 1},
     maps: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
""")
    r = SimCluster(w, Engine(make_policy("fifo"))).run()
    am, task = sorted(r.containers, key=lambda c: c.start_s)
    assert am.is_am and am.start_s == 0.0
    # asks at 6 s, placed at the next heartbeat (6 s): its JVM alone on the core, 2 s, then 10 s of work
    assert (task.start_s, task.end_s) == (6.0, 18.0)
    without = SimCluster(dataclasses.replace(w, cluster=dataclasses.replace(
        w.cluster, startup=dataclasses.replace(w.cluster.startup, am_cpu_s=0.0))), Engine(make_policy("fifo"))).run()
    assert max(c.end_s for c in without.containers if not c.is_am) == 15.0  # asks at 3 s


class KillAnAmOnce(PolicyBase):
    """A test policy that behaves as FIFO but kills the first AM it sees at or after `at` seconds, once."""

    name = "kill-am-once"

    def __init__(self, at):
        self.fifo = make_policy("fifo")
        self.at = at
        self.done = False

    def decide(self, snap, node_id):
        if not self.done and snap.now_s >= self.at:
            ams = sorted(cid for cid, c in snap.containers.items() if c.is_am)
            if ams:
                self.done = True
                return Decision(kills=(Kill(ams[0], "test"),))
        return self.fifo.decide(snap, node_id)


def test_an_am_released_during_its_start_up_leaves_the_pool():
    """Regression: a job whose map ends while its second AM is still starting releases that AM, which must stop
    taking its share of the core at once, not hold it until its CPU is served."""
    w = wl("""
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8}, startup: {launch_cpu_s: 1, am_cpu_s: 30, launch_cores: 1}}
jobs:
  - {id: a, submit_s: 0, type: mapreduce, am: {memory_mb: 1024, vcores: 1},
     maps: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 40}}
  - {id: b, submit_s: 60, type: mapreduce, am: {memory_mb: 1024, vcores: 1},
     maps: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
""")
    sim = SimCluster(w, Engine(KillAnAmOnce(40.0)))
    r = sim.run()
    # a's AM is killed at 60 s, while its map runs (31-72 s); a's second AM and b's AM are placed at 61 s, their
    # JVMs share the core to 63 s, then their start-ups (30 CPU-s each) do, until a's map ends at 72 s and a's
    # AM goes: b's has 4.5 CPU-s then, and the rest alone, to 97.5 s; its map starts at the next heartbeat (98 s),
    # its JVM takes 1 s and its work 10 s. Had a's AM stayed in the pool, b's would have asked at 123 s.
    assert [(j.id, j.finish_s) for j in r.jobs] == [("a", 72.0), ("b", 109.0)]
    assert [(c.start_s, c.end_s) for c in r.containers if c.job == "b" and not c.is_am] == [(98.0, 109.0)]
    assert all(not p.left for p in sim.pools.values()) and not r.stuck


def test_a_client_is_load_on_the_machine_that_nothing_waits_for():
    """jvmstart.py, `client_cpu_s`: a job's client (4 CPU-s from its submission) shares the machine's one core
    with the job's first map's JVM start (2 CPU-s): both at half speed, the map starts its work at 4 s, not 2 s."""
    doc = """
cluster: {nodes: 1, node: {memory_mb: 8192, vcores: 8},
          startup: {launch_cpu_s: 2, launch_cores: 1, launch_shared: true, client_cpu_s: %s}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: mapreduce, maps: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
"""
    loaded = SimCluster(wl(doc % 4), Engine(make_policy("fifo"))).run()
    idle = SimCluster(wl(doc % 0), Engine(make_policy("fifo"))).run()
    assert [(c.start_s, c.end_s) for c in loaded.containers] == [(0.0, 14.0)]
    assert [(c.start_s, c.end_s) for c in idle.containers] == [(0.0, 12.0)]
    assert loaded.jobs[0].finish_s == 14.0 and not loaded.stuck


def test_jvm_starts_with_awkward_numbers_end():
    """Regression: a start whose CPU left rounds below the kernel's microsecond must end, not spin at one instant
    (fidelity mix fid-big as the real cluster received it under FIFO, with a shared 2-core start pool)."""
    jobs = "\n".join(
        f"  - {{id: b{i}, submit_s: {t}, type: mapreduce, am: {{memory_mb: 512, vcores: 1}}, slowstart: 0.05, "
        "maps: {tasks: 4, resource: {memory_mb: 2048, vcores: 1}, duration: 10}, "
        "reduces: {tasks: 1, resource: {memory_mb: 3072, vcores: 1}, duration: 3}}"
        for i, t in enumerate((0.0, 5.048, 10.075, 14.965, 19.936), start=1))
    w = wl(f"""
cluster: {{nodes: 2, node: {{memory_mb: 8192, vcores: 16}}, heartbeat_s: 1.0, min_allocation: {{memory_mb: 128, vcores: 1}},
          startup: {{am_s: 4, launch_s: 2, launch_cpu_s: 4, launch_cores: 2, launch_shared: true}}}}
jobs:
{jobs}
""")
    r = SimCluster(w, Engine(make_policy("fifo")), max_time_s=1000).run()
    assert not r.stuck and all(j.finish_s is not None for j in r.jobs)

def test_ams_that_only_ramp_up_and_down_do_not_keep_a_run_alive():
    # opera-mr6 under fair with the MR AM's unconditional preemption put off forever: four jobs' maps never get
    # a container while reduces hold the cluster, and their AMs ramp reduces up and down forever, so
    # the cluster keeps changing while nothing progresses: the run must end as stuck, not spin
    w = load_workload("opera-mr6")
    w = dataclasses.replace(w, jobs=tuple(dataclasses.replace(j, mapreduce=MRAMConfig(unconditional_preempt_delay_s=1e9))
                                          for j in w.jobs))
    r = SimCluster(w, Engine(make_policy("fair"))).run()
    assert r.stuck and sum(j.finish_s is None for j in r.jobs) == 4
    # the AMs give up once nothing has finished for 2 x the longest task + 900 s (the simulator's no-progress
    # bound, 1,067 s here), then the stalled nodes end the run: not hours of simulated ramping
    last = max(j.finish_s or 0 for j in r.jobs)
    assert last < r.end_s < last + 2500


def test_heartbeat_phases_follow_node_order_across_groups_and_a_wrong_count_is_refused():
    w = wl("""
cluster: {heartbeat_s: 2.0, heartbeat_phases: [0.5, 0.0, 0.25],
          groups: [{count: 1, node: {memory_mb: 4096, vcores: 4}}, {count: 2, node: {memory_mb: 2048, vcores: 2}}]}
jobs: [{id: a, submit_s: 0, type: mapreduce, maps: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 1}}]
""")
    sim = SimCluster(w, Engine(make_policy("fifo")))
    assert [(n.id, n.capacity.memory_mb, n.offset) for n in sim.nodes] == [
        ("n0001", 4096, 1.0), ("n0002", 2048, 0.0), ("n0003", 2048, 0.5)]
    bad = dataclasses.replace(w, cluster=dataclasses.replace(w.cluster, phases=(0.0,)))
    with pytest.raises(ValueError, match="1 heartbeat phases for 3 nodes"):
        SimCluster(bad, Engine(make_policy("fifo")))


class RefusingTunable(PolicyBase):
    """A test policy, tunable and not time-dependent (as `af` and `dress` are), that never places anything."""

    name = "refusing-tunable"

    def decide(self, snap, node_id):
        return Decision()

    def tune(self, obs):
        pass

    def tuning(self):
        return {"ratio": 0.5}


def _one_spark_job(nodes):
    """One Spark job of two 1 GB executors and no AM on `nodes` nodes of 4 GB: any policy that places could run it."""
    return wl(f"""
cluster: {{nodes: {nodes}, node: {{memory_mb: 4096, vcores: 4}}}}
defaults: {{am: false}}
jobs:
  - {{id: j, submit_s: 0, type: spark, executors: {{tasks: 2, resource: {{memory_mb: 1024, vcores: 1}}, duration: 10}}}}
""")


@pytest.mark.parametrize("nodes", [1, 2, 100])
def test_a_tunable_policy_that_never_assigns_ends_the_run_as_stuck(nodes):
    # each tick bumps the state's version (the policy may accept after it), which used to reset the stall
    # count at every tick: with fewer heartbeats between ticks than the stall bound the run never ended
    r = SimCluster(_one_spark_job(nodes), Engine(RefusingTunable()), max_time_s=5000).run()
    assert r.stuck and r.jobs[0].finish_s is None
    assert r.end_s < 3600  # ended by the stall bound, not by max_time_s


class OscillatingTunable(RefusingTunable):
    """A test policy like RefusingTunable whose tuning value flips at every tick: each tick changes it."""

    name = "oscillating-tunable"

    def __init__(self):
        super().__init__()
        self.ratio = 0.4

    def tune(self, obs):
        self.ratio = 1.0 - self.ratio

    def tuning(self):
        return {"ratio": self.ratio}


@pytest.mark.parametrize("nodes", [1, 100])
def test_a_policy_whose_tuning_oscillates_while_placing_nothing_ends_the_run_as_stuck(nodes):
    # every tick moves a tuning value, which may let the policy accept: the run goes on while that could
    # matter, and ends as stuck once nothing has finished or arrived for the no-progress bound (2 x 10 s + 900 s)
    r = SimCluster(_one_spark_job(nodes), Engine(OscillatingTunable()), max_time_s=5000).run()
    assert r.stuck and r.jobs[0].finish_s is None
    assert 920 < r.end_s < 3600  # not before the no-progress bound, and not by max_time_s
    assert len(r.tuning) > 100  # it kept ticking, and each tick's change was recorded


class OscillatingResizer(OscillatingTunable):
    """A test policy that resizes the heartbeating node to 2 or 3 GB as its flipping value says, and places nothing."""

    name = "oscillating-resizer"
    resizes_nodes = True

    def decide(self, snap, node_id):
        mb = 2048 if self.ratio < 0.5 else 3072
        if snap.nodes[node_id].capacity.memory_mb == mb:
            return Decision()
        return Decision(resizes=(NodeResize(node_id, Resources(mb, 4)),))


def test_a_policy_that_resizes_nodes_back_and_forth_while_placing_nothing_ends_the_run_as_stuck():
    # each resize is a change of state, which reset the stall count: the run went on to max_time_s
    r = SimCluster(_one_spark_job(1), Engine(OscillatingResizer()), max_time_s=5000).run()
    assert r.stuck and r.jobs[0].finish_s is None
    assert 920 < r.end_s < 3600


class RefusingJobB(PolicyBase):
    """A test policy: fifo's decision without anything for job `b`."""

    name = "refusing-b"

    def __init__(self):
        super().__init__()
        self.fifo = make_policy("fifo")

    def decide(self, snap, node_id):
        return Decision(tuple(a for a in self.fifo.decide(snap, node_id).assignments if a.app_id != "b"))


@pytest.mark.parametrize("nodes", [1, 100])
def test_an_am_still_starting_keeps_a_run_alive_beside_a_job_no_policy_places(nodes):
    # job a's AM asks 20 s after it starts; job b is refused at every heartbeat. 100 nodes make the stall bound
    # 1,000 heartbeats (10 s): the run ended at 10 s as stuck with a unfinished, the AM's start not counted
    w = wl(f"""
cluster: {{nodes: {nodes}, node: {{memory_mb: 4096, vcores: 4}}, startup: {{am_s: 20}}}}
jobs:
  - {{id: a, submit_s: 0, type: spark, executors: {{tasks: 2, resource: {{memory_mb: 1024, vcores: 1}}, duration: 10}}}}
  - {{id: b, submit_s: 0, type: spark, executors: {{tasks: 2, resource: {{memory_mb: 1024, vcores: 1}}, duration: 10}}}}
""")
    r = SimCluster(w, Engine(RefusingJobB()), max_time_s=5000).run()
    assert r.stuck and [j.finish_s for j in r.jobs] == [30.0, None]


LOCAL = """
cluster: {nodes: 2, node: {memory_mb: 8192, vcores: 16}, min_allocation: {memory_mb: 128, vcores: 1}}
jobs:
  - id: j1
    submit_s: 0
    type: mapreduce
    am: {memory_mb: 512, vcores: 1}
    maps: {tasks: 8, resource: {memory_mb: 1024, vcores: 1}, duration: 20%s}
"""


@pytest.mark.parametrize("policy, hosts, starts", [
    ("capacity", "", [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]),  # off-switch: one container per heartbeat
    ("capacity", ", hosts: all", [0.5] * 8),  # node-local: the node filled in one heartbeat
    ("capacity", ", hosts: [n0001]", [0.5] * 8),  # rack-local on n0002 (node-locality-delay -1): at once too
    ("fair", ", hosts: all", [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]),  # FairScheduler: one per heartbeat
])
def test_maps_that_name_their_hosts_are_placed_node_local(policy, hosts, starts):
    """A stage's `hosts` (a map's split): CapacityScheduler goes on after a node-local or rack-local container
    (ParentQueue.assignContainers stops after an off-switch one only), FairScheduler gives one per heartbeat."""
    _, r = run(wl(LOCAL % hosts), policy)
    assert sorted(c.start_s for c in r.containers if not c.is_am) == starts


TAKE_UP = """
cluster: {nodes: 2, node: {memory_mb: 8192, vcores: 16}, min_allocation: {memory_mb: 128, vcores: 1},
          startup: {take_up: %s}}
jobs:
  - id: j1
    submit_s: 0
    type: mapreduce
    am: {memory_mb: 512, vcores: 1}
    maps: {tasks: %d, resource: {memory_mb: 1024, vcores: 1}, duration: 20}
    mapreduce: {yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms: %d}
"""


# the AM starts at 0 (n0001's heartbeat) and calls at .75, midway between the nodes' heartbeats (at .0 and .5)
@pytest.mark.parametrize("take_up, heartbeat_ms, first, finish", [
    ("false", 1000, 0.5, 24.0),  # each map starts at its allocation: n0002 at 0.5, then one per heartbeat to 4.0
    ("true", 1000, 0.75, 24.75),  # at the AM's next allocate: 0.5 -> 0.75, 1.0 and 1.5 -> 1.75, ..., 4.0 -> 4.75
    ("true", 3000, 2.75, 25.75),  # every 3 s: 0.5-2.5 at 2.75, the last three (3.0-4.0) at 5.75
])
def test_an_am_takes_up_its_containers_at_its_next_allocate_heartbeat(take_up, heartbeat_ms, first, finish):
    """Startup.take_up: RMContainerAllocator.heartbeat's getResources hands the AM what the RM allocated since."""
    _, r = run(wl(TAKE_UP % (take_up, 8, heartbeat_ms)), "capacity")
    assert sorted(c.start_s for c in r.containers if not c.is_am) == [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]
    assert (r.jobs[0].start_s, r.jobs[0].finish_s) == (first, finish)


def test_a_container_killed_before_its_am_takes_it_up_never_starts():
    """Allocated at 0.5, killed at 1.0, before the AM's allocate at 2.75: its map is asked again and taken up then."""
    w = wl(TAKE_UP % ("true", 2, 3000))
    r = SimCluster(w, Engine(KillFirstRunning("capacity", tasks_only=True))).run()
    tasks = sorted((c.start_s, c.end_s, c.outcome) for c in r.containers if not c.is_am)
    assert tasks == [(0.5, 1.0, "killed"), (1.5, 22.75, "done"), (2.0, 22.75, "done")]
    assert (r.jobs[0].start_s, r.jobs[0].finish_s, r.jobs[0].kills) == (2.75, 22.75, 1)


@pytest.mark.parametrize("heartbeat_ms, taken_up", [(3000, 14.75), (10000, 21.75)])
def test_an_am_that_dies_takes_its_untaken_containers_with_it_and_the_next_takes_up_the_rest(heartbeat_ms, taken_up):
    """The RM kills a failed attempt's containers: those the AM had not taken up go, and their maps are asked again.
    Containers allocated while no AM runs wait for the next attempt's first allocate, on its own grid: it starts at
    12 (7 + am_s 5) and calls from 11.75 one interval on, not at the dead attempt's 14.75 (4.75 + 10 s)."""
    w = wl("""
cluster: {nodes: 2, node: {memory_mb: 2560, vcores: 16}, min_allocation: {memory_mb: 128, vcores: 1},
          startup: {take_up: true, am_s: 5}}
jobs:
  - id: j1
    submit_s: 0
    type: mapreduce
    am: {memory_mb: 512, vcores: 1}
    maps: {tasks: 6, resource: {memory_mb: 1024, vcores: 1}, duration: 20}
    mapreduce: {yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms: %d}
""" % heartbeat_ms)
    r = SimCluster(w, Engine(KillAnAmOnce(6.0)), max_time_s=500).run()
    tasks = [(c.start_s, c.end_s, c.outcome) for c in sorted(r.containers, key=lambda c: c.start_s) if not c.is_am]
    assert tasks[:8] == [(5.0, 6.5, "killed")] * 2 + [(5.5, 6.5, "killed")] * 2 + [  # the first AM called at 7.75
        (7.0, taken_up + 20, "done")] * 2 + [(7.5, taken_up + 20, "done")] * 2  # allocated with no AM running
    assert r.jobs[0].state == "succeeded" and r.jobs[0].kills == 5
