"""The kept order (FairOrder, fed by the store's journal) decides exactly as re-sorting every heartbeat does.

Random histories of a small cluster (apps arriving out of order, moving queue, asking, holding and
releasing containers, nodes resized) are driven into one ClusterState; at every step each node is
decided twice by `serve_fairly`, once from the order kept across all the steps (per head ask size
on the store's snapshots), once sorting afresh, for fair and DRF keys, on the snapshot and on the
AM-limit view that hides held-back apps.
"""

from __future__ import annotations

import itertools
from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st
from storehistory import random_step, small_cluster

from yarnctl.fairness.comparators import drf_key, fair_share_key
from yarnctl.model import App, Ask, Container, Journal, Resources
from yarnctl.state import ClusterState
from yarnctl.policies import am_limit
from yarnctl.policies.fairshare import AppKeys, FairConfig, FairOrder, serve_fairly


@pytest.mark.parametrize("config", [FairConfig(), FairConfig(max_am_share=0.05)], ids=["default", "tight-am-share"])
@given(data=st.data())
def test_the_kept_order_decides_as_a_fresh_sort(config: FairConfig, data: st.DataObject) -> None:
    # a tight AM share makes the queue's AM limit skip AM asks (the kept lists skip a whole list of them)
    state = small_cluster()
    ids = itertools.count()
    kept = {"fair": (AppKeys(), FairOrder()), "drf": (AppKeys(), FairOrder())}
    for _ in range(data.draw(st.integers(1, 30))):
        random_step(state, state.snapshot(0.0), data, ids)
        snap = state.snapshot(1.0)
        views = [snap, am_limit.without(snap, am_limit.held_back(snap, 0.3))]
        for name, key in (("fair", fair_share_key), ("drf", partial(drf_key, cluster=snap.capacity))):
            keys, order = kept[name]
            for view in views:
                for node in sorted(view.nodes):
                    assert (serve_fairly(view, node, config, key, keys=keys, order=order)
                            == serve_fairly(view, node, config, key)), (name, node)


def test_the_journal_names_the_apps_touched_and_forgets_beyond_what_it_keeps() -> None:
    journal = Journal(keep=2)
    for app in ("a", "b", "a"):
        journal.note(app)
    assert journal.since(0, journal.end) == ["a", "b", "a"] and journal.since(1, 2) == ["b"]
    for app in ("c", "d"):
        journal.note(app)  # five entries with room for four: the oldest two are dropped
    assert journal.end == 5 and journal.since(0, 5) is None and journal.since(2, 5) == ["a", "c", "d"]


def test_a_resize_that_moves_dominant_shares_reorders_the_kept_lists() -> None:
    # DRF on 24 GB / 24 vcores: A holds <4096, 1> (1/6 of memory), B <1024, 3> (1/8 of vcores): B goes first.
    # Doubling memory makes A's share 1/12: A goes first. No app is touched, only the cluster's size.
    state = ClusterState()
    state.put_node("n0", "/r", Resources(24576, 24), Resources(24576, 24))
    for app_id, held in (("a", Resources(4096, 1)), ("b", Resources(1024, 3))):
        state.add_app(App(app_id, "q0", "u", "MAPREDUCE", app_id, (), 0.0))
        state.launch(Container(f"c-{app_id}", app_id, "n0", 20, held, 0.0))
        state.set_any_asks(app_id, (Ask(app_id, 20, Resources(1024, 1), 5),))
    keys, order, config = AppKeys(), FairOrder(), FairConfig()
    served = []
    for memory in (24576, 49152):
        state.resize_node("n0", Resources(memory, 24))
        snap = state.snapshot(1.0)
        key = partial(drf_key, cluster=snap.capacity)
        kept = serve_fairly(snap, "n0", config, key, keys=keys, order=order)
        assert kept == serve_fairly(snap, "n0", config, key)
        served.append(kept.assignments[0].app_id)
    assert served == ["b", "a"]
