"""Releasing containers in any order leaves the store's sums as a recount would, empty containers included."""

from __future__ import annotations

import itertools

import pytest

from yarnctl.model import App, Container, Resources
from yarnctl.state import ClusterState

EMPTY, REAL = Resources(0, 0), Resources(2048, 1)


@pytest.mark.parametrize("sizes", [(REAL, EMPTY, EMPTY), (EMPTY, REAL, EMPTY)])
@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_an_app_with_empty_containers_releases_them_in_any_order(sizes: tuple[Resources, ...],
                                                                 order: tuple[int, ...]) -> None:
    """The wire allows a 0 MB, 0 vcore container; releasing one after the app's last real one raised KeyError."""
    state = ClusterState()
    state.put_node("n1:1", "/r", Resources(8192, 8))
    state.add_app(App("application_1_0001", "q", "u"))
    state.allocate(Container("container_e", "application_1_0001", "n1:1", 20, EMPTY, 0.0))
    assert state.snapshot(0.0).app_allocated == {}  # an empty container holds nothing
    assert state.release("container_e") is not None and state.snapshot(0.0).app_allocated == {}
    for i, size in enumerate(sizes):
        state.allocate(Container(f"container_{i}", "application_1_0001", "n1:1", 20, size, 0.0))
    assert state.snapshot(0.0).app_allocated == {"application_1_0001": REAL}
    for k, i in enumerate(order):
        assert state.release(f"container_{i}") is not None
        left = [sizes[j] for j in order[k + 1:]]
        held = Resources(sum(r.memory_mb for r in left), sum(r.vcores for r in left))
        snap = state.snapshot(0.0)
        # an app that holds nothing is absent, never zero (the store's module docstring)
        assert snap.app_allocated == ({"application_1_0001": held} if not held.is_zero() else {})
        assert snap.nodes["n1:1"].allocated == held


@pytest.mark.parametrize("sizes", [(EMPTY,), (EMPTY, EMPTY), (REAL, EMPTY)])
def test_an_app_leaving_takes_its_empty_containers(sizes: tuple[Resources, ...]) -> None:
    """An app removed while it held only empty containers left them behind, and their release raised KeyError."""
    state = ClusterState()
    state.put_node("n1:1", "/r", Resources(8192, 8))
    state.add_app(App("application_1_0001", "q", "u"))
    for i, size in enumerate(sizes):
        state.allocate(Container(f"container_{i}", "application_1_0001", "n1:1", 20, size, 0.0))
    if REAL in sizes:
        state.release(f"container_{sizes.index(REAL)}")  # the real one ends first: only empty ones are left
    gone = state.remove_app("application_1_0001")
    assert sorted(c.id for c in gone) == [f"container_{i}" for i, r in enumerate(sizes) if r == EMPTY]
    assert all(state.container(c.id) is None for c in gone)
    assert all(state.release(c.id) is None for c in gone)
    snap = state.snapshot(0.0)
    assert snap.node_containers["n1:1"] == () and snap.priority_allocated == {} and snap.app_allocated == {}
    assert state.remove_node("n1:1") == []


def test_launching_for_an_unknown_app_or_node_changes_nothing() -> None:
    """`launch` is the unchecked path (the simulator's), but a wrong app or node must not leave half a container behind."""
    state = ClusterState()
    state.put_node("n1:1", "/r", REAL)
    state.add_app(App("application_1_0001", "q", "u"))
    before = state.snapshot(0.0)
    for app, node in (("application_9_0009", "n1:1"), ("application_1_0001", "n9:9")):
        with pytest.raises(KeyError):
            state.launch(Container("container_x", app, node, 20, REAL, 0.0))
    state._views = None  # a fresh copy, not the one kept from `before`
    after = state.snapshot(0.0)
    assert (after.nodes["n1:1"].allocated, dict(after.app_allocated), state.container("container_x")) == (
        before.nodes["n1:1"].allocated, {}, None)
