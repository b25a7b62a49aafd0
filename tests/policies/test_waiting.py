"""Why an application waits: the engine's reasons for every policy, each policy's own, and the contract."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
from snapshots import GB, running, snapshot

from yarnctl.engine import Engine
from yarnctl.model import AM_PRIORITY, App, Ask, Decision, Kill, Queue
from yarnctl.policies import REGISTRY, make_policy
from yarnctl.policies.waiting import WaitCode, behind
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import load_workload

NODES = [("n1", GB(8, 8)), ("n2", GB(8, 8))]
A1, A2 = App("a1", submit_s=0.0), App("a2", submit_s=1.0)


def _explain(policy, snap, node, app, **engine):
    e = Engine(policy if not isinstance(policy, str) else make_policy(policy), **engine)
    result = e.decide(snap, node)
    return e.explain(snap, node, app, result.accepted)


def test_nothing_to_explain_for_an_app_that_asks_nothing_or_was_served():
    snap = snapshot(NODES, [A1, A2], [Ask("a1", 20, GB(1), 1)])
    assert _explain("fifo", snap, "n1", "a2") is None  # asks nothing
    assert _explain("fifo", snap, "n1", "a1") is None  # got its container


def test_an_ask_larger_than_any_node():
    snap = snapshot(NODES, [A1], [Ask("a1", 20, GB(16), 1)])
    w = _explain("fifo", snap, "n1", "a1")
    assert w.code is WaitCode.TOO_LARGE
    assert (w.values["ask_mb"], w.values["largest_mb"]) == (16384, 8192)
    assert "larger than any node" in w.text and "8192 MB" in w.text


def test_no_node_with_room_names_the_largest_free():
    full = [running("c1", "a1", "n1", GB(7)), running("c2", "a1", "n2", GB(6))]
    snap = snapshot(NODES, [A1, A2], [Ask("a2", 20, GB(4), 1)], full)
    w = _explain("fifo", snap, "n1", "a2")
    assert w.code is WaitCode.NO_ROOM
    assert (w.values["ask_mb"], w.values["largest_free_mb"]) == (4096, 2048)


def test_no_room_on_this_node_while_another_has_some():
    snap = snapshot(NODES, [A1, A2], [Ask("a2", 20, GB(4), 1)], [running("c1", "a1", "n1", GB(7))])
    w = _explain("fifo", snap, "n1", "a2")
    assert w.code is WaitCode.NODE_FULL and w.values["free_mb"] == 1024


def test_an_ask_that_does_not_relax_locality_to_this_node():
    asks = [Ask("a1", 20, GB(1), 1, relax_locality=False), Ask("a1", 20, GB(1), 1, resource_name="n2")]
    w = _explain("fifo", snapshot(NODES, [A1], asks), "n1", "a1")
    assert w.code is WaitCode.LOCALITY and w.values["node"] == "n1"


def test_the_am_share_limit():
    am = running("am1", "a1", "n1", GB(2), priority=AM_PRIORITY, is_am=True)
    snap = snapshot(NODES, [A1, A2], [Ask("a2", AM_PRIORITY, GB(2), 1)], [am])
    w = _explain("fifo", snap, "n2", "a2", max_am_share=0.1)
    assert w.code is WaitCode.AM_LIMIT
    assert (w.values["am_held_mb"], w.values["limit_mb"]) == (2048, 1638)


def test_a_queue_at_its_maximum_capacity():
    def q(name, path, parent, leaf, share, mb):
        return Queue(name, path, parent, leaf, True, share, share, share, share, 100, 1.0, GB(mb / 1024, 16))
    tree = {"root": q("root", "root", None, False, 1.0, 16384), "a": q("a", "root.a", "root", True, 0.25, 4096)}
    snap = snapshot(NODES, [App("a1", queue="a")], [Ask("a1", 20, GB(1), 1)], [running("c1", "a1", "n1", GB(4))])
    snap = dataclasses.replace(snap, queues=MappingProxyType(tree))
    w = _explain("fifo", snap, "n2", "a1")
    assert w.code is WaitCode.QUEUE_MAX and (w.values["queue"], w.values["room_mb"]) == ("a", 0)


def test_fifo_says_who_went_first():
    snap = snapshot(NODES, [A1, A2], [Ask("a1", 20, GB(1), 8), Ask("a2", 20, GB(1), 1)])
    w = _explain("fifo", snap, "n1", "a2")
    assert w.code is WaitCode.BEHIND and (w.values["served"], w.values["containers"]) == ("a1", 8)


def test_the_generic_reason_when_a_policy_places_nothing_it_could():
    snap = snapshot(NODES, [A1], [Ask("a1", 20, GB(1), 1)])
    w = behind(snap, "n1", "a1", Decision(), "mine")
    assert w.code is WaitCode.HELD and "mine placed nothing on n1" in w.text


def test_dress_names_its_full_pool():
    # δ = 10% of 16 GB; a1 (not yet classified: SD) holds 2 GB = 12.5% already
    snap = snapshot(NODES, [A1], [Ask("a1", 20, GB(1), 1)], [running("c1", "a1", "n2", GB(2))])
    w = _explain(make_policy("dress", {"measure": "memory"}), snap, "n1", "a1")
    assert w.code is WaitCode.DRESS_RESERVE
    assert (w.values["category"], w.values["delta"], w.values["used"]) == ("SD", 0.1, 0.125)
    assert "δ = 0.100" in w.text


def test_capacity_names_the_queue_maximum_and_the_user_limit():
    full = [running("c1", "a1", "n2", GB(4))]
    asks = [Ask("a1", 20, GB(1), 1)]
    at_max = make_policy("capacity", {"queues": {"default": {"capacity": 25, "maximum_capacity": 25}}})
    w = _explain(at_max, snapshot(NODES, [A1], asks, full), "n1", "a1")
    assert w.code is WaitCode.QUEUE_MAX and w.values["maximum"] == 0.25
    # two users in a 50% queue: bob holds 6 GB (37.5%), over his limit of max(25%, 50% x 50%) ... = 25%
    apps = [App("a1", user="bob"), App("a2", user="eve", submit_s=1.0)]
    split = make_policy("capacity", {"queues": {"default": {"capacity": 50, "minimum_user_limit_percent": 50}}})
    snap = snapshot(NODES, apps, [Ask("a1", 20, GB(1), 1), Ask("a2", 20, GB(9), 1)],
                    [running("c1", "a1", "n2", GB(6))])
    w = _explain(split, snap, "n1", "a1")
    assert w.code is WaitCode.USER_LIMIT and w.values["user"] == "bob" and w.values["used"] == 0.375


@pytest.mark.parametrize("name", ["fair", "drf"])
def test_fair_and_drf_say_the_app_served_first_holds_less(name):
    snap = snapshot(NODES, [A1, A2], [Ask("a1", 20, GB(1), 1), Ask("a2", 20, GB(1), 1)],
                    [running("c1", "a1", "n2", GB(4))])
    w = _explain(name, snap, "n1", "a1")
    assert w.code is WaitCode.FAIR_SHARE
    assert (w.values["served"], w.values["share"], w.values["served_share"]) == ("a2", 0.25, 0.0)


def test_hmrf_says_which_queue_ranks_ahead():
    apps = [App("a1", queue="qa"), App("a2", queue="qb", submit_s=1.0)]
    # n1 has room for one container: qb, holding nothing, ranks first and takes it
    snap = snapshot(NODES, apps, [Ask("a1", 20, GB(1), 1), Ask("a2", 20, GB(1), 1)],
                    [running("c0", "a1", "n1", GB(7)), running("c1", "a1", "n2", GB(4))])
    w = _explain("hmrf", snap, "n1", "a1")
    assert w.code is WaitCode.HMRF_WINDOW and (w.values["entity"], w.values["served"]) == ("qa", "qb")


def test_opera_names_a_relief_under_way():
    snap = snapshot(NODES, [A1], [Ask("a1", 20, GB(1), 1)], [running("c1", "a1", "n1", GB(1))])
    w = make_policy("opera").why_waiting(snap, "n1", "a1", Decision(kills=(Kill("c1", "contention"),)))
    assert w.code is WaitCode.OPERA_RELIEF and "killed c1" in w.text


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_policy_says_why_an_app_waits(name):
    """The contract: each built-in policy gives a reason from the one vocabulary, in words."""
    # n1 has room for one container and both apps ask
    snap = snapshot(NODES, [A1, A2], [Ask("a1", 20, GB(1), 16), Ask("a2", 20, GB(1), 1)],
                    [running("c0", "a1", "n1", GB(7))])
    e = Engine(make_policy(name))
    result = e.decide(snap, "n1")
    waiting = [a for a in ("a1", "a2") if not any(x.app_id == a for x in result.accepted.assignments)]
    assert waiting, f"{name} served both apps"
    w = e.explain(snap, "n1", waiting[0], result.accepted)
    assert w is not None and isinstance(w.code, WaitCode) and w.text
    assert w.as_dict()["code"] == w.code.value


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_explaining_changes_no_decision(name):
    """Explaining every job at every heartbeat only reads: the same run as without it."""
    w = load_workload("haste-simple")
    plain = SimCluster(w, Engine(make_policy(name))).run()
    watched = SimCluster(w, Engine(make_policy(name)), explain=frozenset(j.id for j in w.jobs)).run()
    assert watched.fingerprint() == plain.fingerprint()
    assert watched.waits and not plain.waits


def test_locality_comes_before_room_on_this_node():
    """An ask for named nodes only can never run on this node, full or not: that is its reason."""
    asks = [Ask("a2", 20, GB(4), 1, relax_locality=False), Ask("a2", 20, GB(4), 1, resource_name="n2")]
    snap = snapshot(NODES, [A1, A2], asks, [running("c1", "a1", "n1", GB(7))])
    assert _explain("fifo", snap, "n1", "a2").code is WaitCode.LOCALITY


def test_an_am_held_behind_an_earlier_one_says_so():
    am = running("am1", "a0", "n1", GB(1), priority=AM_PRIORITY, is_am=True)
    apps = [App("a0"), App("a1", submit_s=1.0), App("a2", submit_s=2.0)]
    snap = snapshot(NODES, apps, [Ask("a1", AM_PRIORITY, GB(4), 1), Ask("a2", AM_PRIORITY, GB(1), 1)], [am])
    w = _explain("fifo", snap, "n2", "a2", max_am_share=0.25)  # 4 GB of AMs: a1's 4 GB does not fit, a2's would
    assert w.code is WaitCode.AM_LIMIT and w.text.startswith("an earlier app's AM, ahead of its own,")


def test_capacity_stops_a_full_queue_at_its_first_ask_past_the_maximum():
    """_assign_once breaks out of the queue at a1's 2 GB ask: a2's 1 GB, which would fit, waits behind it."""
    apps = [App("a1"), App("a2", submit_s=1.0)]
    policy = make_policy("capacity", {"queues": {"default": {"capacity": 50, "maximum_capacity": 50}}})
    snap = snapshot(NODES, apps, [Ask("a1", 20, GB(2), 1), Ask("a2", 20, GB(1), 1)], [running("c", "a1", "n2", GB(7))])
    w = _explain(policy, snap, "n1", "a2")
    assert w.code is WaitCode.QUEUE_MAX and "the ask of a1, ahead of it in the queue," in w.text


def test_hmrf_opens_no_account_to_explain():
    p = make_policy("hmrf")
    snap = snapshot(NODES, [App("a1", queue="qa")], [Ask("a1", 20, GB(1), 1)])
    assert p.why_waiting(snap, "n1", "a1", Decision()).code is WaitCode.HELD
    assert "qa" not in p.tracker.accounts


def test_opera_names_its_guaranteed_and_lent_room():
    """An AM is never lent opportunistic room: with no guaranteed room left it waits, and OPERA says why."""
    p = make_policy("opera")
    snap = snapshot(NODES, [A1, A2], [Ask("a2", AM_PRIORITY, GB(1), 1)], [running("c1", "a1", "n1", GB(8))])
    p.decide(snap, "n1")
    w = p.why_waiting(snap, "n1", "a2", Decision())
    assert w.code is WaitCode.NODE_FULL and "guaranteed 0 MB" in w.text and "short tasks only" in w.text
