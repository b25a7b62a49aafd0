"""The AM-share limit every policy runs under (policies/am_limit.py), hand-worked after CapacityScheduler's
LeafQueue.activateApplications: submit order, stop at the first AM that does not fit, one AM always starts."""

from __future__ import annotations

import pytest
import yaml
from snapshots import GB, running, snapshot

from yarnctl.engine import Engine
from yarnctl.model import AM_PRIORITY, App, Ask, Assignment, Decision, RejectCode
from yarnctl.policies import REGISTRY, make_policy
from yarnctl.policies.am_limit import held_back, without
from yarnctl.policies.contract import PolicyBase
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.report import summarize
from yarnctl.sim.workload import parse_workload

NODES = [("n1", GB(8, 8)), ("n2", GB(8, 8))]  # 16 GB in all


def _waiting(n: int, am_gb: float = 2) -> tuple[list[App], list[Ask]]:
    apps = [App(f"a{i}", submit_s=float(i)) for i in range(n)]
    return apps, [Ask(a.id, AM_PRIORITY, GB(am_gb), 1) for a in apps]


def test_half_the_memory_starts_four_2gb_ams_of_eight() -> None:
    apps, asks = _waiting(8)
    snap = snapshot(NODES, apps, asks)
    assert snap.am_asked == GB(16, 8)
    assert held_back(snap, 0.5) == {"a4", "a5", "a6", "a7"}  # 4 x 2 GB = 8 GB = 0.5 x 16 GB


def test_running_ams_count_and_their_apps_are_not_held() -> None:
    apps, asks = _waiting(8)
    # a0 runs its AM (2 GB) and asks for maps; a1.. wait for theirs
    asks = [Ask("a0", 20, GB(1), 10)] + asks[1:]
    snap = snapshot(NODES, apps, asks, [running("am0", "a0", "n1", GB(2), AM_PRIORITY, is_am=True)])
    assert snap.am_allocated == GB(2)
    assert held_back(snap, 0.5) == {"a4", "a5", "a6", "a7"}  # 2 GB running + a1..a3's 6 GB


def test_one_am_starts_even_when_the_share_is_below_one_am() -> None:
    apps, asks = _waiting(3)
    snap = snapshot(NODES, apps, asks)
    assert held_back(snap, 0.1) == {"a1", "a2"}  # 1.6 GB < 2 GB, but nothing would ever start


def test_a_small_am_does_not_overtake_one_that_waits() -> None:
    apps = [App("big", submit_s=0.0), App("small", submit_s=1.0)]
    asks = [Ask("big", AM_PRIORITY, GB(6), 1), Ask("small", AM_PRIORITY, GB(1), 1)]
    snap = snapshot(NODES, apps, asks)
    assert held_back(snap, 0.5) == set()  # 6 + 1 <= 8: both fit
    with_running = snapshot(NODES, apps + [App("x", submit_s=-1.0)], asks,
                            [running("amx", "x", "n1", GB(4), AM_PRIORITY, is_am=True)])
    assert held_back(with_running, 0.5) == {"big", "small"}  # 4 + 6 > 8 stops the queue; small waits behind


def test_no_limit_and_room_for_all_cost_nothing() -> None:
    apps, asks = _waiting(8)
    snap = snapshot(NODES, apps, asks)
    assert held_back(snap, 1.0) == set() and without(snap, frozenset()) is snap


def test_policies_see_no_ask_of_held_apps_and_the_validator_refuses_their_am() -> None:
    apps, asks = _waiting(8)
    snap = snapshot(NODES, apps, asks)
    seen = []

    class Greedy(PolicyBase):
        name = "greedy"

        def decide(self, s, node_id):
            seen.append(sorted(s.asks))
            return Decision((Assignment("a7", AM_PRIORITY, node_id, 1),))

    engine = Engine(Greedy())
    result = engine.decide(snap, "n1")
    assert seen == [["a0", "a1", "a2", "a3"]]
    assert [r.code for r in result.rejected] == [RejectCode.AM_LIMIT]
    assert engine.rejected_by == {"am-limit": 1}
    assert Engine(Greedy(), max_am_share=1.0).decide(snap, "n1").rejected == ()


EIGHT_JOBS = yaml.safe_dump({
    "name": "am-deadlock",
    "cluster": {"nodes": 2, "node": {"memory_mb": 8192, "vcores": 8}, "min_allocation": {"memory_mb": 1024, "vcores": 1}},
    "defaults": {"am": {"memory_mb": 1536, "vcores": 1}},  # Hadoop's stock MR AM, 2 GB once normalised
    "jobs": [{"id": f"j{i}", "submit_s": 0, "type": "mapreduce",
              "maps": {"tasks": 4, "resource": {"memory_mb": 1024, "vcores": 1}, "duration": 10},
              "reduces": {"tasks": 1, "resource": {"memory_mb": 1024, "vcores": 1}, "duration": 5}}
             for i in range(8)],
})


@pytest.mark.parametrize("policy", sorted(REGISTRY))
def test_eight_stock_ams_on_two_8gb_nodes_do_not_deadlock(policy: str) -> None:
    # without the limit eight 2 GB AMs take all 16 GB and no task ever fits ("stalled ... asks no node accepts")
    run = SimCluster(parse_workload(EIGHT_JOBS, "am-deadlock"), Engine(make_policy(policy))).run()
    result = summarize(run)
    assert not run.stuck and all(j.state == "succeeded" for j in run.jobs), policy
    assert result.makespan_s is not None, policy


def test_without_the_limit_the_same_jobs_deadlock() -> None:
    # DRESS admits every not-yet-classified job through its SD pool: all eight AMs start, no task fits
    run = SimCluster(parse_workload(EIGHT_JOBS, "am-deadlock"), Engine(make_policy("dress"), max_am_share=1.0)).run()
    assert run.stuck and run.stats["engine_decisions"] > 0
