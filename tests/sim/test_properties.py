"""Properties over random workloads: no node over-allocated, every job finishes, every container
released once, and equal seeds give identical runs, for every baseline policy."""

from collections import defaultdict

import yaml
from hypothesis import given
from hypothesis import strategies as st

from yarnctl.engine import Engine
from yarnctl.model import Resources
from yarnctl.policies import REGISTRY, make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import parse_workload

resource = st.fixed_dictionaries({"memory_mb": st.sampled_from([512, 1024, 1536, 2048, 3072]),
                                  "vcores": st.integers(1, 3)})
duration = st.one_of(st.floats(0.2, 40), st.fixed_dictionaries(
    {"dist": st.just("exponential"), "mean": st.floats(1, 20)}))
usage = st.one_of(
    st.fixed_dictionaries({"cpu": st.floats(0.1, 1.5), "memory": st.floats(0.1, 1.2)}),
    st.fixed_dictionaries({"profile": st.just([{"at": 0.0, "cpu": 0.4, "memory": 0.3},
                                               {"at": 0.5, "cpu": 1.4, "memory": 1.1}])}),
)


@st.composite
def jobs(draw, i):
    kind = draw(st.sampled_from(["mapreduce", "spark", "generic"]))
    job = {"id": f"j{i}", "submit_s": draw(st.floats(0, 30)), "type": kind,
           "user": draw(st.sampled_from(["u1", "u2"])), "queue": draw(st.sampled_from(["q1", "q2"])),
           "am": draw(st.sampled_from([False, True]))}
    stage = lambda: {"tasks": draw(st.integers(1, 12)), "resource": draw(resource),  # noqa: E731
                     "duration": draw(duration), "usage": draw(usage)}
    if kind == "mapreduce":
        job["maps"] = stage()
        if draw(st.booleans()):
            job["reduces"] = {**stage(), "slowstart": draw(st.sampled_from([0.0, 0.05, 0.5, 1.0]))}
    elif kind == "spark":
        job["executors"] = stage()
    else:
        job["iterations"] = draw(st.integers(1, 3))
        job["stages"] = [{"name": "a", **stage()}, {"name": "b", **stage(), "priority": 10}]
    return job


@st.composite
def workloads(draw):
    n_jobs = draw(st.integers(1, 6))
    physical_factor = draw(st.sampled_from([1.0, 1.0, 0.75]))  # sometimes over-committed nodes
    # a node holds every job's AM (2 GB, 1 vcore once normalised) next to the largest task, so no
    # policy can deadlock a job behind AMs that wait for room they themselves hold
    node = {"memory_mb": 16384, "vcores": 10}
    doc = {
        "cluster": {"nodes": draw(st.integers(1, 4)), "node": node,
                    "physical": {"memory_mb": int(16384 * physical_factor), "vcores": 8},
                    "heartbeat_s": draw(st.sampled_from([0.5, 1.0]))},
        "jobs": [draw(jobs(i)) for i in range(n_jobs)],
    }
    return yaml.safe_dump(doc)


def _run(text, policy, seed=0):
    w = parse_workload(text, "random.yaml", seed)
    sim = SimCluster(w, Engine(make_policy(policy)), max_time_s=1e6)
    return sim, sim.run()


@given(text=workloads(), policy=st.sampled_from(sorted(REGISTRY)))
def test_random_workloads_keep_the_invariants(text, policy):
    sim, run = _run(text, policy)
    assert not run.stuck, "every job ends"
    assert all(j.finish_s is not None for j in run.jobs)
    # a job fails only after OOM kills (memory used beyond a node's physical memory)
    if not any(c.outcome == "oom" for c in run.containers):
        assert all(j.state == "succeeded" for j in run.jobs)
    # every container released exactly once, and nothing is left allocated
    ids = [c.id for c in run.containers]
    assert len(ids) == len(set(ids)) == run.stats["assigned"]
    left = sim.snapshot()
    assert not left.containers and not left.app_allocated and all(not n.running for n in sim.nodes)
    assert all(n.allocated.is_zero() for n in left.nodes.values())
    # no node ever holds more than its capacity (releases before starts at equal times)
    events = defaultdict(list)
    for c in run.containers:
        events[c.node].append((c.start_s, 1, c.memory_mb, c.vcores))
        events[c.node].append((c.released_s, 0, -c.memory_mb, -c.vcores))
    # a policy that rescales nodes (feedback) may offer up to max_overcommit x the configured capacity
    k = getattr(getattr(sim.engine.policy, "config", None), "max_overcommit", 1.0)
    caps = {s.id: Resources(int(s.capacity.memory_mb * k), int(s.capacity.vcores * k)) for s in sim.w.cluster.nodes}
    for node, evs in events.items():
        mem = vc = 0
        for _, _, dm, dv in sorted(evs):
            mem, vc = mem + dm, vc + dv
            assert mem <= caps[node].memory_mb and vc <= caps[node].vcores
    # a task's result never precedes its start, and waits are non-negative
    assert all(c.end_s >= c.start_s and c.released_s >= c.end_s for c in run.containers)
    assert all(j.start_s is None or j.start_s >= j.submit_s for j in run.jobs)


@given(text=workloads(), policy=st.sampled_from(sorted(REGISTRY)), seed=st.integers(0, 3))
def test_equal_seeds_give_identical_runs(text, policy, seed):
    _, a = _run(text, policy, seed)
    _, b = _run(text, policy, seed)
    assert a.containers == b.containers and a.jobs == b.jobs and a.usage == b.usage


@given(text=workloads(), policy=st.sampled_from(sorted(REGISTRY)))
def test_skipping_idle_heartbeats_never_changes_a_run(text, policy):
    w = parse_workload(text, "random.yaml", 0)
    fast = SimCluster(w, Engine(make_policy(policy)), max_time_s=1e6).run()
    slow = SimCluster(w, Engine(make_policy(policy)), skip_idle=False, max_time_s=1e6).run()
    assert fast.containers == slow.containers and fast.jobs == slow.jobs
