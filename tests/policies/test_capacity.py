"""Capacity: queue order by used capacity, maximum capacity, user limits, AM limits."""

import pytest
from snapshots import GB, running, snapshot

from yarnctl.model import App, Assignment, Ask, Locality
from yarnctl.policies import make_policy
from yarnctl.policies.waiting import WaitCode

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


def test_with_reservations_the_first_app_in_fifo_order_that_does_not_fit_reserves_the_node():
    """LeafQueue.assignContainer / CapacityScheduler.allocateContainersToNode: a (first in submit order)
    asks 3 GB of a node with 2 GB free: it reserves the node and b's 1 GB ask, which would fit, waits;
    once room frees the node serves a's request, the reservation ends and b is served in the same heartbeat."""
    apps = [App("a", submit_s=0), App("b", submit_s=1), App("c", submit_s=2)]
    node = [("n1", GB(4, 8)), ("n2", GB(8, 8))]  # n2 keeps the queue below its maximum capacity
    asks = [Ask("a", 20, GB(3), 1), Ask("b", 20, GB(1), 1)]
    busy = snapshot(node, apps, asks, [running("c0", "c", "n1", GB(2))])
    cap = make_policy("capacity", {"reservations": True})
    assert cap.decide(busy, "n1").assignments == ()
    assert cap.reserved == {"n1": ("a", 20)}
    assert cap.decide(busy, "n1").assignments == ()  # still reserved: b is not served beside it
    freed = snapshot(node, apps, asks)
    # fulfilled, the reservation ends and the rest of the node is scheduled in the same heartbeat
    # (CapacityScheduler.allocateContainersToNode: `if (node.getReservedContainer() == null)` after it)
    assert cap.decide(freed, "n1").assignments == (Assignment("a", 20, "n1", 1), Assignment("b", 20, "n1", 1))
    assert cap.reserved == {}
    # without reservations (yarnctl's default) b takes the free room at once
    assert make_policy("capacity").decide(busy, "n1").assignments == (Assignment("b", 20, "n1", 1),)


def test_an_app_reserves_no_more_nodes_than_containers_it_still_needs():
    """LeafQueue.shouldAllocOrReserveNewContainer: required - reserved > 0. a needs one 3 GB container and
    already holds n1: n2 (also 2 GB free) goes to b; with two containers needed a reserves both nodes."""
    apps = [App("a", submit_s=0), App("b", submit_s=1), App("c", submit_s=2)]
    nodes = [("n1", GB(4, 8)), ("n2", GB(4, 8)), ("n3", GB(8, 8))]
    busy = [running("c0", "c", "n1", GB(2)), running("c1", "c", "n2", GB(2))]
    one = snapshot(nodes, apps, [Ask("a", 20, GB(3), 1), Ask("b", 20, GB(1), 1)], busy)
    cap = make_policy("capacity", {"reservations": True})
    cap.decide(one, "n1")
    assert cap.decide(one, "n2").assignments == (Assignment("b", 20, "n2", 1),)
    assert cap.reserved == {"n1": ("a", 20)}
    two = snapshot(nodes, apps, [Ask("a", 20, GB(3), 2), Ask("b", 20, GB(1), 1)], busy)
    cap = make_policy("capacity", {"reservations": True})
    assert cap.decide(two, "n1").assignments == () and cap.decide(two, "n2").assignments == ()
    assert cap.reserved == {"n1": ("a", 20), "n2": ("a", 20)}
    # a request bigger than the whole node is never reserved for: b is served
    huge = snapshot([("n1", GB(4, 8)), ("n3", GB(10, 8))], apps, [Ask("a", 20, GB(8), 1), Ask("b", 20, GB(1), 1)], busy[:1])
    cap = make_policy("capacity", {"reservations": True})
    assert cap.decide(huge, "n1").assignments == (Assignment("b", 20, "n1", 1),) and cap.reserved == {}


def _located(app: str, host: str, n: int, priority: int = 20) -> list[Ask]:
    """A map-like ask: n containers on `host`, on its rack r1, anywhere (what the MR AM sends for split blocks)."""
    return [Ask(app, priority, GB(1), n), Ask(app, priority, GB(1), n, host, Locality.NODE),
            Ask(app, priority, GB(1), n, "r1", Locality.RACK)]


def test_node_local_containers_do_not_end_the_heartbeat():
    # ParentQueue (root): only an OFF_SWITCH assignment stops the loop; node-local ones go on, one per call
    snap = snapshot(NODES, [App("a")], _located("a", "n1", 3))
    assert make_policy("capacity").decide(snap, "n1").assignments == (Assignment("a", 20, "n1", 3),)
    # the same app asking ANY only: one off-switch container per heartbeat
    assert make_policy("capacity").decide(snapshot(NODES, [App("a")], [Ask("a", 20, GB(1), 3)]), "n1").containers() == 1


def test_rack_local_waits_node_locality_delay_missed_heartbeats():
    # LeafQueue.canAssign(RACK_LOCAL): min(node-locality-delay, nodes) < missed opportunities, counted per
    # heartbeat offered (addSchedulingOpportunity) and reset by a node- or rack-local container
    snap = snapshot(NODES, [App("a")], _located("a", "n1", 2))
    policy = make_policy("capacity", {"node_locality_delay": 2})
    assert policy.decide(snap, "n2").is_empty() and policy.decide(snap, "n2").is_empty()  # missed 1, 2
    assert policy.decide(snap, "n2").assignments == (Assignment("a", 20, "n2", 1),)  # 3 > 2; then reset to 0
    assert policy.missed == {("a", 20): 1}  # the next call in that heartbeat counted one and found it too early
    # node-local at once, both containers in one heartbeat
    assert make_policy("capacity", {"node_locality_delay": 2}).decide(snap, "n1").containers() == 2
    # Hadoop's default -1: rack-local at once, and (not off-switch) as many as fit
    assert make_policy("capacity").decide(snap, "n2").containers() == 2


def test_an_app_waiting_for_its_node_lets_the_next_app_have_this_one():
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    snap = snapshot(NODES, apps, [*_located("a", "n1", 2), Ask("b", 20, GB(1), 1)])
    policy = make_policy("capacity", {"node_locality_delay": 5})
    assert policy.decide(snap, "n2").assignments == (Assignment("b", 20, "n2", 1),)
    why = policy.why_waiting(snap, "n2", "a", policy.decide(snap, "n2"))
    assert why.code == WaitCode.LOCALITY and why.values["missed"] == 2 and "node-locality-delay" in why.text


def test_off_switch_waits_for_required_containers_times_the_share_of_nodes_named():
    # canAssign(OFF_SWITCH): required x min(named / nodes, 1) < missed; a node on another rack has no rack ask
    nodes = [("n1", GB(10, 10)), ("n2", GB(10, 10))]
    snap = snapshot(nodes, [App("a")], [Ask("a", 20, GB(1), 1), Ask("a", 20, GB(1), 1, "h9", Locality.NODE),
                                        Ask("a", 20, GB(1), 1, "r9", Locality.RACK)])
    policy = make_policy("capacity")  # 2 names on 2 nodes: factor 1, one container: after 1 missed
    assert policy.decide(snap, "n1").is_empty()
    assert policy.decide(snap, "n1").assignments == (Assignment("a", 20, "n1", 1),)
    assert policy.missed == {("a", 20): 2}  # an off-switch container does not reset the count


def test_a_rack_local_wait_ends_early_when_the_off_switch_test_passes():
    # assignContainersOnNode falls through to the ANY request (2.7): 10 nodes, delay 40, one map naming n1 and r1:
    # rack-local needs more than min(40, 10) missed heartbeats, off-switch more than 1 x min(2 / 10, 1) = 0.2
    nodes = [(f"n{i}", GB(10, 10)) for i in range(1, 11)]
    snap = snapshot(nodes, [App("a")], _located("a", "n1", 1))
    policy = make_policy("capacity", {"node_locality_delay": 40})
    assert policy.decide(snap, "n2").assignments == (Assignment("a", 20, "n2", 1),)
    assert policy.missed == {}  # on the app's rack it counts as rack-local: the count is reset


def test_strict_locality_skips_the_node_without_counting_an_opportunity():
    # a request that does not relax past its hosts: SKIP_ASSIGNMENT, subtractSchedulingOpportunity
    snap = snapshot(NODES, [App("a")], [Ask("a", 20, GB(1), 1, relax_locality=False),
                                        Ask("a", 20, GB(1), 1, "h9", Locality.NODE),
                                        Ask("a", 20, GB(1), 1, "r9", Locality.RACK, relax_locality=False)])
    policy = make_policy("capacity")
    assert policy.decide(snap, "n1").is_empty() and policy.missed == {}


def test_a_reservation_is_charged_to_its_queue_and_holds_back_what_would_pass_the_limit():
    """LeafQueue.assignContainer charges a reservation to its queue in advance, and canAssignToThisQueue counts
    it as used: a reserves n1 for 3 GB, so on n2 b's 2 GB would take the queue past its maximum (4 GB used +
    3 GB reserved + 2 GB > 8 GB) and waits; without reservations b takes n2 at once."""
    apps = [App("a", submit_s=0), App("b", submit_s=1), App("c", submit_s=2)]
    nodes = [("n1", GB(4, 8)), ("n2", GB(4, 8))]
    snap = snapshot(nodes, apps, [Ask("a", 20, GB(3), 1), Ask("b", 20, GB(2), 1)],
                    [running("c0", "c", "n1", GB(2)), running("c1", "c", "n2", GB(2))])
    cap = make_policy("capacity", {"reservations": True})
    assert cap.decide(snap, "n1").assignments == () and cap.reserved == {"n1": ("a", 20)}
    blocked = cap.decide(snap, "n2")
    assert blocked.assignments == ()
    why = cap.why_waiting(snap, "n2", "b", blocked)
    assert why.code is WaitCode.QUEUE_MAX and "its reserved nodes counted as used" in why.text
    assert make_policy("capacity").decide(snap, "n2").assignments == (Assignment("b", 20, "n2", 1),)


def test_an_app_over_the_limit_but_for_its_reservations_goes_on_and_gives_one_up():
    """reservations-continue-look-all-nodes (AbstractCSQueue.canAssignToThisQueue, findNodeToUnreserve): a holds
    n1 for one of its two 3 GB containers; n2 has 3 GB free, and a's second container there would pass the queue's
    maximum only with the reservation counted (3 GB used + 3 GB reserved + 3 GB > 8 GB): it is placed, and the
    reservation on n1 is released."""
    apps = [App("a", submit_s=0), App("c", submit_s=2)]
    nodes = [("n1", GB(4, 8)), ("n2", GB(4, 8))]
    snap = snapshot(nodes, apps, [Ask("a", 20, GB(3), 2)],
                    [running("c0", "c", "n1", GB(2)), running("c1", "c", "n2", GB(1))])
    cap = make_policy("capacity", {"reservations": True})
    assert cap.decide(snap, "n1").assignments == () and cap.reserved == {"n1": ("a", 20)}
    assert cap.decide(snap, "n2").assignments == (Assignment("a", 20, "n2", 1),)
    assert cap.reserved == {}


def test_an_app_past_the_limit_but_for_its_reservations_reserves_no_more_and_gives_up_only_what_it_holds():
    """LeafQueue.assignContainer with needToUnreserve: an app let past the queue's maximum by its reservations
    reserves no other node where its request does not fit (it holds n1; n2's 2 GB free stays unreserved), and a
    container at a priority it holds no reservation at cannot free one (findNodeToUnreserve fails): nothing."""
    apps = [App("a", submit_s=0), App("c", submit_s=1)]
    busy = [running("c0", "c", "n1", GB(6)), running("c1", "c", "n2", GB(6))]
    snap = snapshot([("n1", GB(8, 16)), ("n2", GB(8, 16))], apps, [Ask("a", 20, GB(3), 2)], busy)
    cap = make_policy("capacity", {"reservations": True})
    assert cap.decide(snap, "n1").assignments == () and cap.reserved == {"n1": ("a", 20)}
    assert cap.decide(snap, "n2").assignments == () and cap.reserved == {"n1": ("a", 20)}
    # 5 GB used + 3 GB reserved + a's 1 GB at priority 10 passes 8 GB; its reservation is at priority 20
    two = snapshot([("n1", GB(4, 8)), ("n2", GB(4, 8))], apps, [Ask("a", 10, GB(1), 1), Ask("a", 20, GB(3), 1)],
                   [running("c0", "c", "n1", GB(2)), running("c1", "c", "n2", GB(3))])
    cap = make_policy("capacity", {"reservations": True})
    cap.reserved = {"n1": ("a", 20)}
    assert cap.decide(two, "n2").assignments == () and cap.reserved == {"n1": ("a", 20)}


def test_a_user_past_its_limit_but_for_the_apps_reservations_is_placed_and_gives_one_up():
    """LeafQueue.assignToUser with reservations-continue-look-all-nodes: queue A's one user may hold 6 GB of 12;
    a holds 4 GB and n1 reserved for 3 GB (7 GB charged), so it passes the user limit only by its reservation:
    on n2 it gets its 3 GB and n1 is released."""
    apps = [App("a", queue="A", submit_s=0), App("c", queue="B", submit_s=1)]
    nodes = [("n1", GB(4, 8)), ("n2", GB(4, 8)), ("n3", GB(4, 8))]
    busy = [running("a0", "a", "n3", GB(4)), running("c0", "c", "n1", GB(2))]
    queues = {"queues": {"A": {"capacity": 50, "maximum_capacity": 100}, "B": {"capacity": 50}}, "reservations": True}
    snap = snapshot(nodes, apps, [Ask("a", 20, GB(3), 2)], busy)
    cap = make_policy("capacity", queues)
    assert cap.decide(snap, "n1").assignments == () and cap.reserved == {"n1": ("a", 20)}
    assert cap.decide(snap, "n2").assignments == (Assignment("a", 20, "n2", 1),)
    assert cap.reserved == {}
