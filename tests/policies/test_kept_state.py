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

from yarnctl.model import App, Ask, Node, Resources
from yarnctl.policies import make_policy
from yarnctl.state import snapshot_of


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["capacity", "hmrf", "lt-drf", "af", "ffd-dp"]))
def test_kept_state_decides_as_a_fresh_read(data: st.DataObject, name: str) -> None:
    state = small_cluster()
    ids = itertools.count()
    config = {"max_am_resource_percent": 0.3} if name == "capacity" else {} if name == "ffd-dp" else {
        "entity": data.draw(st.sampled_from(["queue", "user"]))}
    kept, fresh = make_policy(name, config), make_policy(name, config)
    for step in range(data.draw(st.integers(1, 30))):
        random_step(state, state.snapshot(float(step)), data, ids, users="uv")
        snap = state.snapshot(step + 0.5)
        for node in sorted(snap.nodes):
            view = dataclasses.replace(snap)
            assert view.version == -1
            assert kept.decide(snap, node) == fresh.decide(view, node), (name, node)
            if name not in ("capacity", "ffd-dp"):  # what the trackers read, accounts in the order they opened
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
