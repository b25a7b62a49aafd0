"""Fair: FairScheduler's FairSharePolicy ordering of queues and apps (memory fair share)."""

import pytest
from snapshots import GB, running, snapshot

from yarnctl.fairness.comparators import fair_share_key
from yarnctl.model import ZERO, App, Assignment, Ask, Resources
from yarnctl.policies import make_policy


def test_one_container_per_heartbeat_by_default_to_the_app_using_least_memory():
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    snap = snapshot([("n1", GB(8, 8)), ("n2", GB(8, 8))], apps,
                    [Ask("a", 20, GB(1), 5), Ask("b", 20, GB(1), 5)],
                    [running("c0", "a", "n2", GB(2))])
    assert make_policy("fair").decide(snap, "n1").assignments == (Assignment("b", 20, "n1", 1),)


def test_assign_multiple_alternates_as_usage_grows():
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    snap = snapshot([("n1", GB(4, 8))], apps, [Ask("a", 20, GB(1), 5), Ask("b", 20, GB(1), 5)])
    d = make_policy("fair", {"assign_multiple": True}).decide(snap, "n1")
    assert sorted((a.app_id, a.count) for a in d.assignments) == [("a", 2), ("b", 2)]
    d = make_policy("fair", {"assign_multiple": True, "max_assign": 3}).decide(snap, "n1")
    assert sum(a.count for a in d.assignments) == 3


def test_queue_weights_scale_usage():
    # queue A holds 4 GB with weight 2 (ratio 2), queue B 3 GB with weight 1 (ratio 3): A goes first
    apps = [App("a", queue="A"), App("b", queue="B")]
    snap = snapshot([("n1", GB(4, 8)), ("n2", GB(16, 16))], apps,
                    [Ask("a", 20, GB(1), 5), Ask("b", 20, GB(1), 5)],
                    [running("c0", "a", "n2", GB(4)), running("c1", "b", "n2", GB(3))])
    policy = make_policy("fair", {"queues": {"A": {"weight": 2}}})
    assert policy.decide(snap, "n1").assignments[0].app_id == "a"
    assert make_policy("fair").decide(snap, "n1").assignments[0].app_id == "b"


def test_app_whose_first_request_does_not_fit_is_skipped():
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    snap = snapshot([("n1", GB(2, 8))], apps, [Ask("a", 20, GB(4), 1), Ask("b", 20, GB(1), 1)])
    assert make_policy("fair").decide(snap, "n1").assignments == (Assignment("b", 20, "n1", 1),)


def test_with_reservations_the_first_app_whose_request_does_not_fit_reserves_the_node():
    """FSAppAttempt.assignContainer / FairScheduler.attemptScheduling: a (using nothing) comes first in fair
    order and asks 3 GB of a node with 2 GB free: it reserves the node, and b's 1 GB ask that would fit
    waits; once room frees the node serves a's request, the reservation ends and b is served again."""
    apps = [App("a", submit_s=0), App("b", submit_s=1), App("c", submit_s=2)]
    node = [("n1", GB(4, 8))]
    asks = [Ask("a", 20, GB(3), 1), Ask("b", 20, GB(1), 1)]
    busy = snapshot(node, apps, asks, [running("c0", "c", "n1", GB(2))])
    fair = make_policy("fair", {"reservations": True})
    assert fair.decide(busy, "n1").assignments == ()
    assert fair.reserved == {"n1": ("a", 20)}
    assert fair.decide(busy, "n1").assignments == ()  # still reserved: b is not served beside it
    freed = snapshot(node, apps, asks)
    assert fair.decide(freed, "n1").assignments == (Assignment("a", 20, "n1", 1),)
    assert fair.reserved == {}
    served = snapshot(node, apps, [Ask("b", 20, GB(1), 1)], [running("c1", "a", "n1", GB(3))])
    assert fair.decide(served, "n1").assignments == (Assignment("b", 20, "n1", 1),)
    # without reservations (yarnctl's default) b takes the free room at once
    assert make_policy("fair").decide(busy, "n1").assignments == (Assignment("b", 20, "n1", 1),)


def test_a_reservation_ends_when_its_app_no_longer_asks_or_a_request_could_never_fit():
    apps = [App("a", submit_s=0), App("b", submit_s=1), App("c", submit_s=2)]
    node = [("n1", GB(4, 8))]
    fair = make_policy("fair", {"reservations": True})
    fair.decide(snapshot(node, apps, [Ask("a", 20, GB(3), 1), Ask("b", 20, GB(1), 1)],
                         [running("c0", "c", "n1", GB(2))]), "n1")
    assert fair.reserved == {"n1": ("a", 20)}
    # a withdrew its ask: the reservation is dropped and b is served in the same heartbeat
    gone = snapshot(node, apps, [Ask("b", 20, GB(1), 1)], [running("c0", "c", "n1", GB(2))])
    assert fair.decide(gone, "n1").assignments == (Assignment("b", 20, "n1", 1),) and fair.reserved == {}
    # a request bigger than the whole node is skipped, never reserved for
    huge = snapshot(node, apps, [Ask("a", 20, GB(8), 1), Ask("b", 20, GB(1), 1)], [running("c0", "c", "n1", GB(2))])
    assert fair.decide(huge, "n1").assignments == (Assignment("b", 20, "n1", 1),) and fair.reserved == {}


@pytest.mark.parametrize(
    "a, b, first",
    [
        ((GB(1), GB(4), ZERO, 1.0, 0.0, "x"), (GB(2), GB(4), ZERO, 1.0, 0.0, "y"), "x"),
        ((GB(2), GB(4), ZERO, 1.0, 0.0, "x"), (GB(2), GB(4), ZERO, 1.0, 0.0, "y"), "x"),
        ((GB(2), GB(4), ZERO, 1.0, 5.0, "x"), (GB(2), GB(4), ZERO, 1.0, 1.0, "y"), "y"),
        # needy (below min(minShare, demand)) beats a lower ratio
        ((GB(3), GB(8), GB(4), 1.0, 0.0, "x"), (GB(1), GB(8), ZERO, 1.0, 0.0, "y"), "x"),
        # demand caps the min share: with demand 3 GB, 3 GB used is not needy
        ((GB(3), GB(3), GB(4), 1.0, 0.0, "x"), (GB(1), GB(8), ZERO, 1.0, 0.0, "y"), "y"),
    ],
    ids=["less-usage-first", "tie-on-name", "tie-on-start-time", "needy-first", "min-share-capped-by-demand"],
)
def test_fair_share_comparator(a, b, first):
    ka, kb = fair_share_key(*a), fair_share_key(*b)
    assert ("x" if ka < kb else "y") == first


def test_no_pending_apps_means_no_decision():
    snap = snapshot([("n1", GB(4))], [App("a")], [])
    assert make_policy("fair").decide(snap, "n1").is_empty()


def test_memory_only_ordering_ignores_vcores():
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    snap = snapshot([("n1", GB(8, 8)), ("n2", GB(8, 8))], apps,
                    [Ask("a", 20, GB(1), 5), Ask("b", 20, GB(1), 5)],
                    [running("c0", "a", "n2", Resources(1024, 6)), running("c1", "b", "n2", Resources(2048, 1))])
    assert make_policy("fair").decide(snap, "n1").assignments[0].app_id == "a"
    assert make_policy("drf").decide(snap, "n1").assignments[0].app_id == "b"
