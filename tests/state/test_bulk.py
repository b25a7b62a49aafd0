"""`ClusterState.allocate_all` (a full sync's path) leaves the state exactly as `allocate` one container at a time."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from yarnctl.model import App, ClusterSnapshot, Container, ContainerKind, Resources
from yarnctl.state import ClusterState, StateError

NODES = [f"n{i}:45454" for i in range(4)]
APPS = [App(f"application_1_{i:04d}", f"q{i % 2}", f"u{i % 3}", submit_s=float(i)) for i in range(5)]


def _state() -> ClusterState:
    state = ClusterState()
    for n in NODES:
        state.put_node(n, "/r", Resources(1 << 20, 1 << 10))
    for a in APPS:
        state.add_app(a)
    return state


def _ordered(snap: ClusterSnapshot) -> dict[str, Any]:
    """Every field of the snapshot, each map as its list of items: equal means equal and in the same order."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(snap):
        if f.name in ("journal", "_by_id"):  # the store's own journal, compared by its entries
            continue
        value = getattr(snap, f.name)
        if f.name == "priority_allocated":
            value = [(a, list(held.items())) for a, held in value.items()]
        elif hasattr(value, "items"):
            value = list(value.items())
        out[f.name] = value
    out["containers"] = list(snap.containers.items())
    return out


containers = st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(APPS), st.sampled_from([0, 10, 20]),
                                st.integers(0, 3), st.integers(0, 2), st.booleans(), st.booleans()), max_size=30)


def _make(rows: list[tuple[str, App, int, int, int, bool, bool]], first: int) -> list[Container]:
    # empty containers too (the wire allows 0 MB, 0 vcores): where a sum first appears must still match
    return [Container(f"container_{first + i:06d}", app.id, node, prio, Resources(mb * 512, vc), 1.0,
                      ContainerKind.OPPORTUNISTIC if opp else ContainerKind.NORMAL, is_am=am)
            for i, (node, app, prio, mb, vc, am, opp) in enumerate(rows)]


@given(containers, containers)
# an empty container first: its queue's sum appears at the next non-empty one, after q1's
@example([], [(NODES[0], APPS[0], 0, 0, 0, True, False), (NODES[0], APPS[1], 0, 1, 1, True, False),
              (NODES[1], APPS[0], 10, 1, 0, True, False)])
def test_allocate_all_equals_allocate_one_by_one(before: Any, batch: Any) -> None:
    one, bulk = _state(), _state()
    for c in _make(before, 0):  # what the state already held (a delta's batch)
        one.allocate(c)
        bulk.allocate(c)
    one.snapshot(0.0), bulk.snapshot(0.0)
    cs = _make(batch, 1000)
    for c in cs:
        one.allocate(c)
    bulk.allocate_all(cs)
    a, b = one.snapshot(1.0), bulk.snapshot(1.0)
    assert _ordered(a) == _ordered(b)
    assert a.version == b.version
    assert one.journal.since(0, one.journal.end) == bulk.journal.since(0, bulk.journal.end)


@pytest.mark.parametrize("bad, message", [
    (Container("c2", APPS[0].id, "nowhere", 0, Resources(512, 1), 1.0), "alloc: container c2 on unknown node nowhere"),
    (Container("c2", "application_9", NODES[0], 0, Resources(512, 1), 1.0), "alloc: container c2 of unknown app"),
    (Container("c1", APPS[0].id, NODES[1], 0, Resources(512, 1), 1.0), "alloc: container c1 allocated twice"),
])
def test_a_refused_batch_names_the_container_and_changes_nothing(bad: Container, message: str) -> None:
    state = _state()
    good = Container("c1", APPS[0].id, NODES[0], 0, Resources(512, 1), 1.0)
    before = _ordered(state.snapshot(0.0))
    with pytest.raises(StateError, match=message):
        state.allocate_all([good, bad])
    assert _ordered(state.snapshot(0.0)) == before


nodes = st.lists(st.tuples(st.sampled_from([f"m{i}:1" for i in range(5)]), st.sampled_from(["/r1", "/r2"]),
                           st.integers(0, 4), st.integers(0, 3), st.one_of(st.none(), st.integers(1, 4))), max_size=12)


@given(nodes, nodes)
def test_put_nodes_equals_put_node_one_by_one(before: Any, batch: Any) -> None:
    """A full sync's nodes in one call: new ones, a node named twice, a known one resized, registered or not."""
    def rows(items: Any) -> list[tuple[str, str, Resources, Resources | None]]:
        return [(n, rack, Resources(mb * 1024, vc), None if reg is None else Resources(reg * 1024, reg))
                for n, rack, mb, vc, reg in items]

    one, bulk = ClusterState(), ClusterState()
    for state in (one, bulk):
        for row in rows(before):
            state.put_node(*row)
    for row in rows(batch):
        one.put_node(*row)
    bulk.put_nodes(rows(batch))
    a, b = one.snapshot(1.0), bulk.snapshot(1.0)
    assert _ordered(a) == _ordered(b) and a.version == b.version and one.capacity == bulk.capacity
