"""What the simulator records of each container's actual use (the usage trace), and what utilisation divides by."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.engine import Engine
from yarnctl.model import Decision, NodeResize, Resources
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.report import container_usage, summarize, utilization_series, write_csv
from yarnctl.sim.workload import parse_workload
from yarnctl.trace.usage import read_trace
from yarnctl.policies.contract import PolicyBase

PROFILE = """
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
"""

# one physical core for two tasks that each want a whole one: both run at half speed (cpu is compressible)
THROTTLED = """
cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 4}, physical: {memory_mb: 4096, vcores: 1}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: spark, executors: {tasks: 2, resource: {memory_mb: 1024, vcores: 1}, duration: 10}}
"""


def run(text: str, policy: object = None):  # type: ignore[no-untyped-def]
    w = parse_workload(text, "test.yaml")
    return SimCluster(w, Engine(policy or make_policy("fifo"))).run()


def test_profile_use_is_integrated_over_the_containers_life() -> None:
    (c,) = run(PROFILE).containers
    assert (c.start_s, c.end_s) == (0.0, 10.0)
    # memory: 512 MB for 5 s then 1536 MB for 5 s; cpu: 1 vcore then 2 vcores
    assert c.used_memory_mb_s == pytest.approx(512 * 5 + 1536 * 5)
    assert c.used_vcore_s == pytest.approx(1 * 5 + 2 * 5)
    (u,) = container_usage([c])
    assert (u.used_memory_mb, u.used_vcores) == pytest.approx((1024.0, 1.5))  # E: 0.5 memory, 0.75 cpu


def test_throttled_cpu_counts_what_was_served_not_what_was_wanted() -> None:
    r = run(THROTTLED)
    assert len(r.containers) == 2
    for c in r.containers:
        assert c.end_s - c.start_s == pytest.approx(20.0)  # 10 s of work at half speed
        assert c.used_vcore_s == pytest.approx(10.0)  # half a core for 20 s, not a whole one
        assert c.used_memory_mb_s == pytest.approx(1024 * 20.0)  # memory is held the whole time


def test_simulate_out_writes_a_trace_that_reads_back(tmp_path: Path) -> None:
    r = run(PROFILE)
    written = write_csv(tmp_path, [summarize(r)], [r])
    assert tmp_path / "containers-fifo.csv" in written
    (u,) = read_trace(tmp_path / "containers-fifo.csv")
    assert (u.container, u.job, u.memory_mb, u.vcores, u.is_am) == (r.containers[0].id, "j", 2048, 2, False)
    assert (u.used_memory_mb, u.used_vcores) == pytest.approx((1024.0, 1.5))


class DoubleNodes(PolicyBase):
    """FIFO that doubles each node's capacity the first time the node heartbeats (as a usage-feedback policy may)."""

    name = "double"

    def __init__(self) -> None:
        self.fifo = make_policy("fifo")
        self.done: set[str] = set()

    def decide(self, snap, node_id):  # type: ignore[no-untyped-def]
        if node_id in self.done:
            return self.fifo.decide(snap, node_id)
        self.done.add(node_id)
        return Decision(resizes=(NodeResize(node_id, snap.nodes[node_id].capacity * 2),))


def test_allocated_utilisation_divides_by_the_configured_capacity_not_the_resized_one() -> None:
    # one 2 GB task for 10 s on a 4 GB node, which the policy resizes to 8 GB: 50% of the configured
    # memory was allocated while it ran; dividing by the resized capacity gave 25%
    w = """
cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 4}}
defaults: {am: false}
jobs:
  - {id: j, submit_s: 0, type: spark, executors: {tasks: 1, resource: {memory_mb: 2048, vcores: 2}, duration: 10}}
"""
    r = run(w, DoubleNodes())
    assert r.capacity == Resources(4096, 4)
    res = summarize(r)
    start = r.containers[0].start_s
    busy = r.containers[0].released_s - start
    assert res.makespan_s is not None
    # the task's allocation over the makespan (which starts at submission, 0): held from `start` for `busy` s
    assert res.utilization["memory"] == pytest.approx(0.5 * busy / res.makespan_s, rel=1e-4)
    series = utilization_series(r, [start + 1.0])  # type: ignore[arg-type]
    assert series["alloc_memory"][0] == pytest.approx(0.5)
