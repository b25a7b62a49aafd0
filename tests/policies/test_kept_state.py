"""What capacity and the long-term family keep across heartbeats decides exactly as reading the snapshot afresh.

Random histories of a small cluster, as in test_fair_order.py, driven into one ClusterState; at
every step each node is decided by a policy that kept its state from the store's journal (capacity's
activated apps, the long-term family's pending apps and tracker sums) and by one that gets a copy of
the snapshot no store stamped (`dataclasses.replace`: version -1), which reads everything afresh.
"""

from __future__ import annotations

import dataclasses
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from storehistory import random_step, small_cluster

from yarnctl.model import App, Ask, Container, Node, Resources
from yarnctl.policies.dress import EPS, Category
from yarnctl.policies import make_policy
from yarnctl.policies.head_lists import AskLists
from yarnctl.policies.opera.queue import FairQueue, PendingOrder, Task, app_key
from yarnctl.state import snapshot_of


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["capacity", "hmrf", "lt-drf", "af", "ffd-dp", "opera"]))
def test_kept_state_decides_as_a_fresh_read(data: st.DataObject, name: str) -> None:
    state = small_cluster()
    ids = itertools.count()
    config = {"max_am_resource_percent": 0.3} if name == "capacity" else {} if name in ("ffd-dp", "opera") else {
        "entity": data.draw(st.sampled_from(["queue", "user"]))}
    kept, fresh = make_policy(name, config), make_policy(name, config)
    for step in range(data.draw(st.integers(1, 30))):
        random_step(state, state.snapshot(float(step)), data, ids, users="uv")
        snap = state.snapshot(step + 0.5)
        for node in sorted(snap.nodes):
            view = dataclasses.replace(snap)
            assert view.version == -1
            assert kept.decide(snap, node) == fresh.decide(view, node), (name, node)
            if name not in ("capacity", "ffd-dp", "opera"):  # what the trackers read, accounts in the order they opened
                assert _read(kept) == _read(fresh), (name, node)


def _read(policy: object) -> list[tuple[str, object, object, bool]]:
    accounts = policy.tracker.accounts  # type: ignore[attr-defined]
    return [(n, a.alloc, a.nonsharing, a.pending) for n, a in accounts.items()]


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["dominant", "memory"]))
def test_dress_kept_pools_decide_as_the_walk(data: st.DataObject, measure: str) -> None:
    # the pools' kept lists (and the rooms remembered as refused) against the walk over every pending app,
    # with categories learnt at random steps (a rebuild) and δ moved so that either pool fills
    state = small_cluster()
    ids = itertools.count()
    config = {"measure": measure, "theta": data.draw(st.sampled_from([0.05, 0.2, 0.5]))}
    kept, fresh = make_policy("dress", config), make_policy("dress", config)
    for step in range(data.draw(st.integers(1, 30))):
        random_step(state, state.snapshot(float(step)), data, ids, users="uv")
        snap = state.snapshot(step + 0.5)
        if data.draw(st.booleans()):
            delta = data.draw(st.sampled_from([0.0, 0.1, 0.3, 0.6, 1.0]))
            for policy in (kept, fresh):
                policy.observe(snap)  # type: ignore[attr-defined]
                policy.delta = delta  # type: ignore[attr-defined]
        for node in sorted(snap.nodes):
            view = dataclasses.replace(snap)
            assert kept.decide(snap, node) == fresh.decide(view, node), (measure, node)


def test_ffd_dp_lists_break_a_tie_between_sizes_by_submit_order() -> None:
    # on <4 GB, 4 vcores> a <2 GB, 1> task and a <1 GB, 2> task are equally fit (8 + 4 = 4 + 8, Eq. 1):
    # the walk takes the earlier app's first, and so must the kept lists
    node = Node("n1", "/r", Resources(4096, 4))
    apps = [App("a1", submit_s=1.0), App("a2", submit_s=2.0), App("a3", submit_s=3.0)]
    asks = [Ask("a1", 20, Resources(2048, 1), 1), Ask("a2", 20, Resources(1024, 2), 3),
            Ask("a3", 10, Resources(2048, 1), 2)]
    snap = snapshot_of(1.0, [node], apps, asks)
    kept, fresh = make_policy("ffd-dp", {}), make_policy("ffd-dp", {})
    decision = kept.decide(snap, "n1")
    assert decision == fresh.decide(dataclasses.replace(snap), "n1")
    assert decision.assignments[0].app_id == "a1"


def test_opera_smallest_demand_from_the_lists_as_from_the_walk() -> None:
    # MinTaskDemand (Alg. 3-4 line 3) as this heartbeat's grants use up asks: a size drops out only
    # once every ask of it is taken
    node = Node("n1", "/r", Resources(65536, 64))
    apps = [App("a1", submit_s=1.0), App("a2", submit_s=2.0)]
    asks = [Ask("a1", 10, Resources(4096, 1), 1), Ask("a1", 20, Resources(2048, 2), 2),
            Ask("a2", 20, Resources(2048, 2), 1), Ask("a2", 30, Resources(8192, 1), 1)]
    snap = snapshot_of(1.0, [node], apps, asks)
    lists = AskLists()
    assert lists.sync(snap)
    kept, walk = FairQueue(snap, lists), FairQueue(snap)
    mins = []
    for app, priority, size in [("a1", 10, (4096, 1)), ("a1", 20, (2048, 2)), ("a1", 20, (2048, 2)),
                                ("a2", 30, (8192, 1)), ("a2", 20, (2048, 2))]:
        assert kept.smallest() == walk.smallest()
        mins.append(walk.smallest())
        for queue in (kept, walk):
            queue.take(Task(app, priority, Resources(*size)))
    assert kept.smallest() is None and walk.smallest() is None
    # <2048, 2> outlives a1's asks of it (a2 still has one); <4096, 1> goes with a1's
    assert mins == [Resources(2048, 1), Resources(2048, 1), Resources(2048, 1), Resources(2048, 1), Resources(2048, 2)]


def test_dress_pool_sums_too_close_to_call_are_counted_afresh() -> None:
    # SD holds 1/24 of the cluster and a1 asks another 1/24; δ puts the limit (+ EPS) 1e-11 above their sum.
    # Running sums drifted by 8e-11 (rounding, injected here) would call the pool full: dress must count afresh.
    node = Node("n1", "/r", Resources(24576, 24))
    snap = snapshot_of(1.0, [node], [App("a0", submit_s=0.0), App("a1", submit_s=1.0)],
                       [Ask("a1", 20, Resources(1024, 1), 1)],
                       [Container("c0", "a0", "n1", 20, Resources(1024, 1), 0.0)])
    policy = make_policy("dress", {})
    policy.delta = 2 / 24 - EPS + 1e-11  # type: ignore[attr-defined]
    policy._use.sync(snap, policy.category, "dominant", 0)  # type: ignore[attr-defined]
    policy._use.used[Category.SD] += 8e-11  # type: ignore[attr-defined]
    decision = policy.decide(snap, "n1")
    walk = make_policy("dress", {"initial_reserve": policy.delta})  # type: ignore[attr-defined]
    assert decision == walk.decide(dataclasses.replace(snap), "n1")
    assert [a.app_id for a in decision.assignments] == ["a1"]


def test_opera_next_task_from_the_kept_order_as_from_the_sort() -> None:
    # GetNextTaskFromQueue (Alg. 3-4) as this heartbeat's grants raise what apps and queues hold: a1 holds
    # least and goes first until its 4 GB pass a2's 3 GB, then a2, a1, a2; once the default queue's 11 GB
    # and five grants pass q1's 20 GB, q1's a4; then the queues take turns
    node = Node("n1", "/r", Resources(65536, 64))
    apps = [App("a1", submit_s=1.0), App("a2", submit_s=2.0), App("a3", submit_s=3.0), App("a4", "q1", submit_s=0.0)]
    asks = [Ask(a, 20, Resources(2048, 1), 5) for a in ("a1", "a2", "a3", "a4")]
    held = [Container("c2", "a2", "n1", 20, Resources(3072, 1), 0.0), Container("c3", "a3", "n1", 20, Resources(8192, 1), 0.0),
            Container("c4", "a4", "n1", 20, Resources(20480, 1), 0.0)]
    snap = snapshot_of(1.0, [node], apps, asks, held)
    lists, order = AskLists(), PendingOrder()
    assert lists.sync(snap) and order.sync(snap)
    kept, walk = FairQueue(snap, lists, order), FairQueue(snap)
    picks = []
    for _ in range(8):
        t = walk.next()
        assert t is not None and kept.next() == t
        picks.append(t.app_id)
        for queue in (kept, walk):
            queue.take(t)
    assert picks == ["a1", "a1", "a2", "a1", "a2", "a4", "a1", "a4"]
    assert kept.next({("a3", 20)}) == walk.next({("a3", 20)})


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_opera_kept_order_catches_up_as_a_fresh_sort(data: st.DataObject) -> None:
    # the order follows the journal across random histories (apps moving queue, asks, containers),
    # and the queue read from it hands out tasks as the sorting one under random grants and exclusions
    state = small_cluster()
    ids = itertools.count()
    lists, order = AskLists(), PendingOrder()
    for step in range(data.draw(st.integers(1, 30))):
        random_step(state, state.snapshot(float(step)), data, ids, users="uv")
        snap = state.snapshot(step + 0.5)
        assert lists.sync(snap) and order.sync(snap)
        fresh: dict[str, list[tuple[object, str]]] = {}
        for app in snap.iter_pending_apps():
            fresh.setdefault(app.queue, []).append((app_key(snap.allocated(app.id), app), app.id))
        assert order.by_queue == {q: sorted(entries) for q, entries in fresh.items()}
        kept, walk = FairQueue(snap, lists, order), FairQueue(snap)
        for _ in range(data.draw(st.integers(0, 4))):
            exclude = frozenset(data.draw(st.lists(st.sampled_from([(a, p) for a in sorted(snap.apps) for p in (0, 10, 20)]),
                                                   max_size=2))) if snap.apps else frozenset()
            t = walk.next(exclude)
            assert kept.next(exclude) == t
            if t is None:
                break
            for queue in (kept, walk):
                queue.take(t)
