"""FIFO: FifoScheduler's app order and its stop-at-the-first-unservable-priority rule."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from snapshots import GB, running, snapshot

from yarnctl.model import App, Assignment, Ask
from yarnctl.policies import make_policy


def decide(snap, node="n1"):
    return make_policy("fifo").decide(snap, node).assignments


@pytest.mark.parametrize(
    "apps, requests, node_gb, expected",
    [
        # the older app takes what fits, the younger the rest
        ([App("b", submit_s=0), App("a", submit_s=5)],
         [Ask("a", 20, GB(1), 4), Ask("b", 20, GB(1), 2)], 4,
         [Assignment("b", 20, "n1", 2), Assignment("a", 20, "n1", 2)]),
        # equal submit times tie-break on id
        ([App("b"), App("a")], [Ask("a", 20, GB(2), 2), Ask("b", 20, GB(2), 2)], 2,
         [Assignment("a", 20, "n1", 1)]),
        # priorities ascending within an app: reduce (10) before map (20)
        ([App("a")], [Ask("a", 20, GB(1), 4), Ask("a", 10, GB(2), 1)], 4,
         [Assignment("a", 10, "n1", 1), Assignment("a", 20, "n1", 2)]),
        # FifoScheduler:504 - a priority that gets nothing stops the app; the next app is served
        ([App("a", submit_s=0), App("b", submit_s=1)],
         [Ask("a", 10, GB(6), 1), Ask("a", 20, GB(1), 4), Ask("b", 20, GB(1), 1)], 4,
         [Assignment("b", 20, "n1", 1)]),
        # a priority with nothing left to give (a table keeps its zero rows) neither serves nor stops the app
        ([App("a", submit_s=0), App("b", submit_s=1)],
         [Ask("a", 10, GB(6), 0), Ask("a", 20, GB(1), 3), Ask("b", 20, GB(1), 2)], 4,
         [Assignment("a", 20, "n1", 3), Assignment("b", 20, "n1", 1)]),
    ],
    ids=["submit-order", "tie-on-id", "priority-order", "stop-at-first-unservable-priority", "zero-row-passed"],
)
def test_fifo_order(apps, requests, node_gb, expected):
    snap = snapshot([("n1", GB(node_gb, 8))], apps, requests)
    assert list(decide(snap)) == expected


def test_fifo_counts_vcores_and_existing_allocation():
    snap = snapshot([("n1", GB(8, 4))], [App("a")], [Ask("a", 20, GB(1, 2), 5)],
                    [running("c0", "a", "n1", GB(1, 2))])
    # 4 vcores with 2 used leave room for one 2-vcore container, though memory would take 7
    assert decide(snap) == (Assignment("a", 20, "n1", 1),)


def test_fifo_gives_nothing_to_a_full_node():
    snap = snapshot([("n1", GB(2, 8))], [App("a")], [Ask("a", 20, GB(1), 5)],
                    [running("c0", "a", "n1", GB(2))])
    assert decide(snap) == ()


def _walk_as_written(snap, node, apps, min_allocation):
    """fill_in_order as it was written before its plain-int test: each app's first live ask through `times_fit`."""
    from yarnctl.model import ANY
    from yarnctl.policies.base import fill_app

    available, out = node.available, []
    for app in apps:
        if not min_allocation.fits_in(available):
            break
        for r in snap.asks.get(app.id, ()):
            if r.resource_name == ANY and r.count > 0:
                if r.capability.times_fit(available):
                    got, available = fill_app(snap, app, node, available)
                    out.extend(got)
                break
    return out


@given(st.data())
def test_fill_in_order_matches_its_times_fit_walk(data):
    """Empty components and nodes resized below what they hold (negative room) included: same assignments as the walk it replaced."""
    from yarnctl.model import Container, Resources
    from yarnctl.policies.base import fill_in_order
    from yarnctl.state import ClusterState

    # sizes on a coarse grid, so that asks often fill a node's room exactly
    size = st.builds(Resources, st.sampled_from([0, 1024, 2048, 3072]), st.integers(0, 3))
    state = ClusterState(data.draw(size))
    state.put_node("n1", "/r", data.draw(st.builds(Resources, st.sampled_from([0, 2048, 4096, 8192]), st.integers(0, 8))))
    for i in range(data.draw(st.integers(1, 6))):
        app = App(f"a{i}", queue="q", user="u", submit_s=float(i))
        state.add_app(app)
        asks = tuple(Ask(app.id, p, data.draw(size), data.draw(st.integers(0, 3)))
                     for p in sorted(data.draw(st.sets(st.integers(0, 30), max_size=3))))
        state.set_any_asks(app.id, asks)
    if data.draw(st.booleans()):  # a node holding more than it now offers
        state.launch(Container("c0", "a0", "n1", 20, data.draw(size), 0.0))
        state.put_node("n1", "/r", data.draw(st.builds(Resources, st.sampled_from([0, 1024, 2048]), st.integers(0, 2))))
    snap = state.snapshot(0.0)
    node = snap.nodes["n1"]
    apps = list(snap.iter_pending_apps())
    assert fill_in_order(snap, node, apps, snap.min_allocation) == _walk_as_written(snap, node, apps,
                                                                                     snap.min_allocation)
