"""Capacity: queue order by used capacity, maximum capacity, user limits, AM limits."""

import pytest
from snapshots import GB, running, snapshot

from yarnctl.model import App, Assignment, Ask
from yarnctl.policies import make_policy

NODES = [("n1", GB(10, 10)), ("n2", GB(10, 10))]  # 20 GB cluster


def test_least_used_queue_relative_to_its_capacity_goes_first():
    apps = [App("a", queue="A", submit_s=0), App("b", queue="B", submit_s=1)]
    reqs = [Ask("a", 20, GB(1), 5), Ask("b", 20, GB(1), 5)]
    # A (70%) holds 6 GB = 43% of its 14 GB; B (30%) holds 3 GB = 50% of its 6 GB: A first
    snap = snapshot(NODES, apps, reqs, [running("c0", "a", "n2", GB(6)), running("c1", "b", "n2", GB(3))])
    policy = make_policy("capacity", {"queues": {"A": {"capacity": 70, "maximum_capacity": 100},
                                                 "B": {"capacity": 30, "maximum_capacity": 100}}})
    assert policy.decide(snap, "n1").assignments == (Assignment("a", 20, "n1", 1),)


def test_maximum_capacity_caps_a_queue():
    apps = [App("a", queue="A")]
    snap = snapshot(NODES, apps, [Ask("a", 20, GB(1), 5)], [running("c0", "a", "n2", GB(10))])
    capped = make_policy("capacity", {"queues": {"A": {"capacity": 50, "maximum_capacity": 50,
                                                       "user_limit_factor": 2}}})
    assert capped.decide(snap, "n1").is_empty()
    elastic = make_policy("capacity", {"queues": {"A": {"capacity": 50, "maximum_capacity": 100,
                                                        "user_limit_factor": 2}}})
    assert elastic.decide(snap, "n1").assignments == (Assignment("a", 20, "n1", 1),)


@pytest.mark.parametrize("held_gb, served", [(9, True), (10, True), (11, False)],
                         ids=["below-limit", "at-limit-gets-one-more", "over-limit"])
def test_user_limit_factor_one_keeps_a_single_user_near_the_queue_capacity(held_gb, served):
    # LeafQueue.canAssignToUser checks used > limit without the request: at the limit, one more
    apps = [App("a", queue="A", user="u")]
    snap = snapshot(NODES, apps, [Ask("a", 20, GB(1), 5)], [running("c0", "a", "n2", GB(held_gb))])
    policy = make_policy("capacity", {"queues": {"A": {"capacity": 50, "maximum_capacity": 100}}})
    assert (not policy.decide(snap, "n1").is_empty()) == served


def test_am_resource_limit_activates_apps_in_order():
    # 10% of 20 GB = 2 GB of AMs: the first app's 2 GB AM is active, the second waits
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    snap = snapshot(NODES, apps, [Ask("a", 0, GB(2), 1), Ask("b", 0, GB(2), 1)])
    policy = make_policy("capacity", {"multiple_off_switch": True})
    assert policy.decide(snap, "n1").assignments == (Assignment("a", 0, "n1", 1),)
    relaxed = make_policy("capacity", {"multiple_off_switch": True, "max_am_resource_percent": 0.5})
    assert {a.app_id for a in relaxed.decide(snap, "n1").assignments} == {"a", "b"}


def test_one_off_switch_container_per_heartbeat_by_default():
    snap = snapshot(NODES, [App("a")], [Ask("a", 20, GB(1), 5)])
    assert make_policy("capacity").decide(snap, "n1").containers() == 1
    assert make_policy("capacity", {"multiple_off_switch": True}).decide(snap, "n1").containers() == 5


def test_unlisted_queues_share_the_rest():
    apps = [App("a", queue="X"), App("b", queue="Y", submit_s=1)]
    snap = snapshot(NODES, apps, [Ask("a", 20, GB(1), 20), Ask("b", 20, GB(1), 20)],
                    [running("c0", "a", "n2", GB(5))])
    # X and Y get 50% each by default; X holds 5 GB (50% of its share) so Y goes first
    assert make_policy("capacity").decide(snap, "n1").assignments[0].app_id == "b"
