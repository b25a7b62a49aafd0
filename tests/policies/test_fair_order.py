"""The kept order (FairOrder, fed by the store's journal) decides exactly as re-sorting every heartbeat does.

Random histories of a small cluster (apps arriving out of order, moving queue, asking, holding and
releasing containers, nodes resized) are driven into one ClusterState; at every step each node is
decided twice by `serve_fairly`, once walking the order kept across all the steps, once sorting
afresh, for fair and DRF keys, on the snapshot and on the AM-limit view that hides held-back apps.
"""

from __future__ import annotations

import itertools
from functools import partial

from hypothesis import given
from hypothesis import strategies as st

from yarnctl.fairness.comparators import drf_key, fair_share_key
from yarnctl.model import ANY, AM_PRIORITY, App, Ask, Container, Journal, Locality, Resources
from yarnctl.policies import am_limit
from yarnctl.policies.fairshare import AppKeys, FairConfig, FairOrder, serve_fairly
from yarnctl.state import ClusterState


def _size(data: st.DataObject) -> Resources:
    return Resources(data.draw(st.integers(1, 4)) * 1024, data.draw(st.integers(1, 3)))


@given(st.data())
def test_the_kept_order_decides_as_a_fresh_sort(data: st.DataObject) -> None:
    state = ClusterState()
    for i in range(3):
        state.put_node(f"n{i}", "/r", Resources(8192, 8), Resources(8192, 8))
    ids = itertools.count()
    kept = {"fair": (AppKeys(), FairOrder()), "drf": (AppKeys(), FairOrder())}
    config = FairConfig()
    for _ in range(data.draw(st.integers(1, 30))):
        snap = state.snapshot(0.0)
        op = data.draw(st.sampled_from(["app", "move", "gone", "ask", "alloc", "release", "resize"]))
        if op == "app" or (op != "resize" and not snap.apps):
            app_id = f"a{next(ids)}"
            state.add_app(App(app_id, data.draw(st.sampled_from(["q0", "q1"])), "u", "MAPREDUCE", app_id, (),
                              float(data.draw(st.integers(0, 5)))))
        elif op == "move":
            old = snap.apps[data.draw(st.sampled_from(sorted(snap.apps)))]
            state.add_app(App(old.id, "q1" if old.queue == "q0" else "q0", old.user, old.type, old.name, (),
                              old.submit_s))
        elif op == "gone":
            state.remove_app(data.draw(st.sampled_from(sorted(snap.apps))))
        elif op == "ask":
            app_id = data.draw(st.sampled_from(sorted(snap.apps)))
            prios = data.draw(st.lists(st.sampled_from([AM_PRIORITY, 10, 20]), unique=True, max_size=2))
            state.set_any_asks(app_id, tuple(Ask(app_id, p, _size(data), data.draw(st.integers(1, 3)), ANY,
                                                 Locality.ANY, True) for p in sorted(prios)))
        elif op == "alloc":
            app_id, node = data.draw(st.sampled_from(sorted(snap.apps))), data.draw(st.sampled_from(sorted(snap.nodes)))
            size = _size(data)
            if size.fits_in(snap.nodes[node].available):
                state.launch(Container(f"c{next(ids)}", app_id, node, 20, size, 0.0, is_am=data.draw(st.booleans())))
        elif op == "release" and snap.containers:
            state.release(data.draw(st.sampled_from(sorted(snap.containers))))
        elif op == "resize":
            node = data.draw(st.sampled_from(sorted(snap.nodes)))
            state.resize_node(node, Resources(data.draw(st.integers(4, 16)) * 1024, 8))
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
