"""HaSTE's RTA read from the urgency lists decides as scoring every request ([HaSTE] Sec. 3.4.3, Eq. 4).

Random histories of a small cluster (storehistory.py) with task containers at the AM, reduce and map
priorities, so that jobs differ in urgency, and now and then a named ask, which sends HaSTE back to
scoring. At every step each node is decided by a policy reading the store's snapshot (the lists) and
by one reading a copy no store stamped (`dataclasses.replace`: version -1), which scores every request.
"""

from __future__ import annotations

import dataclasses
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from storehistory import random_step, small_cluster

from yarnctl.model import (
    ANY, AM_PRIORITY, REDUCE_PRIORITY, App, Ask, ClusterSnapshot, Container, Decision, Locality, Resources,
)
from yarnctl.model.cluster import ITERATIONS_TAG, STAGE_TAG
from yarnctl.policies import make_policy
from yarnctl.state import ClusterState


def _task_step(state: ClusterState, snap: ClusterSnapshot, data: st.DataObject, ids: itertools.count[int]) -> None:
    """A container of a drawn app at a drawn priority, new iteration tags, or a named ask beside its off-switch one."""
    if not snap.apps:
        return
    app_id = data.draw(st.sampled_from(sorted(snap.apps)))
    roll = data.draw(st.integers(0, 9))
    if roll == 1:  # an iterative job moves on (HaSTE-A's Eq. 5 reads its tags)
        n = data.draw(st.integers(1, 4))
        tags = (f"{ITERATIONS_TAG}={n}", f"{STAGE_TAG}={data.draw(st.integers(1, n))}")
        state.add_app(dataclasses.replace(snap.apps[app_id], tags=tags))
        return
    if roll == 0:
        size = Resources(1024, 1)
        state.set_app_asks(app_id, [Ask(app_id, 20, size, 1, ANY, Locality.ANY, True),
                                    Ask(app_id, 20, size, 1, data.draw(st.sampled_from(["n0", "/r"])))])
        return
    node = data.draw(st.sampled_from(sorted(snap.nodes)))
    size = Resources(data.draw(st.integers(1, 2)) * 1024, 1)
    if size.fits_in(snap.nodes[node].available):
        priority = data.draw(st.sampled_from([AM_PRIORITY, REDUCE_PRIORITY, 20]))
        state.launch(Container(f"c{next(ids)}", app_id, node, priority, size, 0.0, is_am=priority == AM_PRIORITY))


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from([("haste", {}), ("haste-a", {}), ("haste-a", {"beta_urgency": 0.0})]))
def test_rta_from_the_lists_decides_as_scoring_every_request(data: st.DataObject,
                                                             policy: tuple[str, dict[str, float]]) -> None:
    # with urgency unweighted, requests of different urgency tie: the lists walk every run of their prefix
    name, config = policy
    state = small_cluster()
    ids = itertools.count()
    kept, fresh = make_policy(name, config), make_policy(name, config)
    for step in range(data.draw(st.integers(1, 40))):
        snap = state.snapshot(float(step))
        if data.draw(st.booleans()):
            random_step(state, snap, data, ids)
        else:
            _task_step(state, snap, data, ids)
        snap = state.snapshot(step + 0.5)
        for node in sorted(snap.nodes):
            assert kept.decide(snap, node) == fresh.decide(dataclasses.replace(snap), node), (name, node)


def test_lists_serve_ties_and_a_job_placed_twice_in_one_heartbeat() -> None:
    # one task size, so urgency decides: a1 is urgent (its AM runs, half its maps are done), a2 and a3
    # tie on urgency 0 (nothing held) and go in submit order; the node's 6 GB left take six maps
    state = ClusterState()
    state.put_node("n0", "/r", Resources(8192, 8), Resources(8192, 8))
    for i, submit in ((1, 3.0), (2, 1.0), (3, 2.0)):
        state.add_app(App(f"a{i}", submit_s=submit))
    one = Resources(1024, 1)
    state.set_any_asks("a1", (Ask("a1", 20, one, 2),))
    state.launch(Container("am1", "a1", "n0", AM_PRIORITY, Resources(2048, 1), 0.0, is_am=True))
    state.launch(Container("m1", "a1", "n0", 20, one, 0.0))
    state.launch(Container("m2", "a1", "n0", 20, one, 0.0))
    state.set_any_asks("a2", (Ask("a2", 20, one, 3),))
    state.set_any_asks("a3", (Ask("a3", 20, one, 3),))
    kept, fresh = make_policy("haste", {}), make_policy("haste", {})
    kept.decide(state.snapshot(0.0), "n0")  # the lists see a1 with four maps (T_i^m = 4)
    fresh.decide(dataclasses.replace(state.snapshot(0.0)), "n0")
    state.release("m1")
    state.release("m2")  # two of a1's four maps done: an idle node no longer means ITA
    snap = state.snapshot(1.0)
    assert kept.lists.sync(snap)
    decision = kept.decide(snap, "n0")
    assert decision == fresh.decide(dataclasses.replace(snap), "n0")
    assert [(a.app_id, a.count) for a in decision.assignments] == [("a1", 2), ("a2", 3), ("a3", 1)]
    # U = A/T * R^am = 2/4 * (2 GB + 1 vcore); one size, so F normalises to 0 and U to 1 (Eq. 4)
    assert decision.reasons["a1"] == "RTA p20: fitness 13.0, urgency 1.5, preference 1.00 of 3 (+1 more)"


def test_lists_rescore_a_job_as_its_tasks_start() -> None:
    # a0's map has finished (no ITA); its first reduce raises its maps' urgency (U^m counts the reduces
    # held, Eq. 2), so its map goes before a1's: scored with the urgency a0 had before, a1's maps would
    state = ClusterState()
    state.put_node("n0", "/r", Resources(16384, 16), Resources(16384, 16))
    state.add_app(App("a0", submit_s=0.0))
    state.add_app(App("a1", submit_s=1.0))
    state.set_any_asks("a0", (Ask("a0", REDUCE_PRIORITY, Resources(2048, 1), 2), Ask("a0", 20, Resources(1024, 1), 1)))
    state.set_any_asks("a1", (Ask("a1", REDUCE_PRIORITY, Resources(1024, 1), 3), Ask("a1", 20, Resources(2048, 1), 2)))
    state.launch(Container("x", "a0", "n0", 20, Resources(1024, 1), 0.0))
    kept, fresh = make_policy("haste", {}), make_policy("haste", {})
    kept.decide(state.snapshot(0.0), "n0")
    fresh.decide(dataclasses.replace(state.snapshot(0.0)), "n0")
    state.release("x")
    snap = state.snapshot(1.0)
    decision = kept.decide(snap, "n0")
    assert decision == fresh.decide(dataclasses.replace(snap), "n0")
    assert [(a.app_id, a.priority, a.count) for a in decision.assignments] == [
        ("a0", REDUCE_PRIORITY, 2), ("a0", 20, 1), ("a1", 20, 2), ("a1", REDUCE_PRIORITY, 3)]


def _pair(state: ClusterState, t: float, node: str, kept: object, fresh: object) -> tuple[object, object]:
    snap = state.snapshot(t)
    return kept.decide(snap, node), fresh.decide(dataclasses.replace(snap), node)  # type: ignore[attr-defined]


def test_both_paths_read_progress_on_a_full_node_too() -> None:
    # T_i^m is the most maps seen over the snapshots read: a's 4 maps, seen only while n0 was full,
    # count on both paths, so when a asks for 2 with n0 emptied both see half its maps done (no ITA)
    one = Resources(1024, 1)
    state = ClusterState()
    state.put_node("n0", "/r", Resources(8192, 8), Resources(8192, 8))
    state.add_app(App("a", submit_s=0.0))
    state.add_app(App("b", submit_s=1.0))
    state.launch(Container("x", "b", "n0", 20, Resources(8192, 8), 0.0))
    state.set_any_asks("a", (Ask("a", 20, one, 4),))
    kept, fresh = make_policy("haste", {}), make_policy("haste", {})
    assert _pair(state, 0.0, "n0", kept, fresh) == (Decision(), Decision())
    state.set_any_asks("a", (Ask("a", 20, one, 2),))
    state.release("x")
    got, want = _pair(state, 1.0, "n0", kept, fresh)
    assert got == want and kept.progress.map_totals["a"] == fresh.progress.map_totals["a"] == {20: 4}
    assert want.reasons["a"].startswith("RTA p20")


def test_loaded_progress_is_read_by_the_lists() -> None:
    # a restarted policy server loads T_i^m other than what it has seen: the lists read every job afresh
    one = Resources(1024, 1)
    state = ClusterState()
    state.put_node("n0", "/r", Resources(8192, 8), Resources(8192, 8))
    for i in (1, 2):
        state.add_app(App(f"a{i}", submit_s=float(i)))
        state.launch(Container(f"am{i}", f"a{i}", "n0", AM_PRIORITY, one, 0.0, is_am=True))
        state.set_any_asks(f"a{i}", (Ask(f"a{i}", 20, one, 2),))
    kept, fresh = make_policy("haste", {}), make_policy("haste", {})
    _pair(state, 0.0, "n0", kept, fresh)
    doc = {"map_totals": {"a1": {"20": 3}, "a2": {"20": 8}}}  # a2 is now 3/4 done, a1 1/3: a2 is more urgent
    kept.load_state(doc)
    fresh.load_state(doc)
    got, want = _pair(state, 0.0, "n0", kept, fresh)
    assert got == want and [a.app_id for a in got.assignments][0] == "a2"


def test_unweighted_urgency_ties_go_in_submit_order() -> None:
    # HaSTE-A with beta_urgency 0: a2 is the more urgent (its AM runs, a map done) but every request
    # of one size ties, so a1, submitted first, goes first: the lists walk past a2's run of urgency
    one = Resources(1024, 1)
    state = ClusterState()
    for node in ("n0", "n1"):
        state.put_node(node, "/r", Resources(8192, 8), Resources(8192, 8))
    state.add_app(App("a1", submit_s=0.0))
    state.add_app(App("a2", submit_s=1.0))
    state.set_any_asks("a1", (Ask("a1", 20, one, 2),))
    state.set_any_asks("a2", (Ask("a2", 20, one, 4),))
    state.launch(Container("am2", "a2", "n1", AM_PRIORITY, one, 0.0, is_am=True))
    state.launch(Container("m2", "a2", "n1", 20, one, 0.0))
    config = {"beta_urgency": 0.0}
    kept, fresh = make_policy("haste-a", config), make_policy("haste-a", config)
    _pair(state, 0.0, "n0", kept, fresh)
    state.release("m2")
    state.set_any_asks("a2", (Ask("a2", 20, one, 3),))
    got, want = _pair(state, 1.0, "n0", kept, fresh)
    assert got == want and [(a.app_id, a.count) for a in got.assignments] == [("a1", 2), ("a2", 3)]
