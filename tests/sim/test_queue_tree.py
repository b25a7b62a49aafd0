"""A workload's queue tree (`cluster.queues`): checked as CapacityScheduler checks its file, and honoured in the simulator.

The simulator gives policies the tree the shim on CapacityScheduler sends, so the engine caps every
policy at its queues' maximums there as it does live (policies/queue_limit.py).
"""

from __future__ import annotations

import re

import pytest

from yarnctl.engine import Engine
from yarnctl.errors import WorkloadError
from yarnctl.model import ClusterSnapshot, Decision, NodeId, NodeResize, Resources
from yarnctl.policies.fifo import Fifo
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import parse_workload

CLUSTER = "cluster:\n  nodes: 2\n  node: {memory_mb: 8192, vcores: 8}\n"
TREE = ("  queues:\n"
        "    - {path: root.a, capacity: 70}\n"
        "    - {path: root.b, capacity: 30, max_capacity: 40}\n")
MAPS = "{tasks: 12, resource: {memory_mb: 1024, vcores: 1}, duration: 20}"
JOBS = ("jobs:\n"
        f"  - {{id: big, submit_s: 0, queue: b, type: mapreduce, maps: {MAPS}}}\n"
        f"  - {{id: small, submit_s: 30, queue: a, type: mapreduce, maps: {MAPS}}}\n")


class _Watching(Fifo):
    """FIFO that records the most queue b held at any heartbeat."""

    def __init__(self) -> None:
        super().__init__()
        self.peak_b = 0

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        self.peak_b = max(self.peak_b, snap.queue_allocated.get("b", Resources(0, 0)).memory_mb)
        return super().decide(snap, node_id)


def _peak_b(text: str) -> int:
    policy = _Watching()
    result = SimCluster(parse_workload(text, "tree.yaml"), Engine(policy, max_am_share=1.0)).run()
    assert {j.id for j in result.jobs if j.finish_s is not None} == {"big", "small"}
    return policy.peak_b


def test_the_tree_reaches_the_snapshot_with_capacity_schedulers_numbers() -> None:
    w = parse_workload(CLUSTER + TREE + JOBS, "tree.yaml")
    root, a, b = w.cluster.queues
    assert (root.path, root.leaf, a.path, b.parent) == ("root", False, "root.a", "root")
    # 40% of 16 GB is 6,553.6 MB: 6,144 in whole 1 GB minimum allocations, as Resources.multiplyAndNormalizeDown
    assert (b.abs_capacity, b.abs_max_capacity, b.max_resources) == (0.3, 0.4, Resources(6144, 6))


def test_a_queue_never_holds_more_than_its_maximum_in_the_simulator() -> None:
    capped = _peak_b(CLUSTER + TREE + JOBS)
    free = _peak_b(CLUSTER + JOBS)  # the same jobs and queue names, no tree: nothing caps b
    print(f"queue b's peak: {capped} MB with the tree, {free} MB without")
    assert 0 < capped <= 6144 < free


@pytest.mark.parametrize("tree, message", [
    ("    - {path: root.a, capacity: 70}\n    - {path: root.b, capacity: 20}\n",
     "cluster.queues: the capacities under root add up to 90%, not 100%"),
    ("    - {path: a, capacity: 100}\n", "cluster.queues[0]: expected a path under root such as root.a, got 'a'"),
    ("    - {path: root.a, capacity: 70, max_capacity: 50}\n    - {path: root.b, capacity: 30}\n",
     "cluster.queues[0]: capacity 70 and max_capacity 50 must satisfy"),
    ("    - {path: root.x.a, capacity: 100}\n", "cluster.queues[0]: its parent root.x is not declared"),
    ("    - {path: root.a, capacity: 70}\n    - {path: root.b, capacity: 30, state: PAUSED}\n",
     "cluster.queues[1].state: expected RUNNING or STOPPED"),
], ids=["sum-90", "not-under-root", "max-below-capacity", "undeclared-parent", "bad-state"])
def test_a_tree_capacity_scheduler_would_refuse_is_one_line_naming_the_entry(tree: str, message: str) -> None:
    with pytest.raises(WorkloadError, match="^" + re.escape("tree.yaml: " + message)):
        parse_workload(CLUSTER + "  queues:\n" + tree + JOBS.replace("queue: b", "queue: a"), "tree.yaml")


@pytest.mark.parametrize("queue, why", [("nosuch", "is not in cluster.queues"), ("root", "is not a leaf queue"),
                                        ("c", "is STOPPED")])
def test_a_job_naming_a_queue_capacity_scheduler_would_refuse_is_refused(queue: str, why: str) -> None:
    tree = TREE.replace("capacity: 30, max_capacity: 40}", "capacity: 30}\n    - {path: root.c, capacity: 0, state: STOPPED}")
    with pytest.raises(WorkloadError, match=f"jobs\\[0\\].id: job big names queue '{queue}', which {why}"):
        parse_workload(CLUSTER + tree + JOBS.replace("queue: b", f"queue: {queue}"), "tree.yaml")


class _Shrinking(Fifo):
    """FIFO that halves the first node it hears from, once, and records queue b's maximum afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.resized = False
        self.b_max: set[int] = set()

    resizes_nodes = True

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        self.b_max.add(snap.queues["b"].max_resources.memory_mb)
        if not self.resized:
            self.resized = True
            return Decision(resizes=(NodeResize(node_id, Resources(4096, 8)),))
        return super().decide(snap, node_id)


def test_a_resize_moves_every_maximum_as_capacity_scheduler_recomputes_them() -> None:
    policy = _Shrinking()
    SimCluster(parse_workload(CLUSTER + TREE + JOBS, "tree.yaml"), Engine(policy, max_am_share=1.0)).run()
    # 40% of 16 GB, then of 12 GB (4,915 MB: 4,096 in whole GBs)
    assert policy.b_max == {6144, 4096}
