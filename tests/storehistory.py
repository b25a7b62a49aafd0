"""Random histories of a small cluster driven into one ClusterState (hypothesis), for the kept-state tests."""

from __future__ import annotations

import dataclasses
import itertools

from hypothesis import strategies as st

from yarnctl.model import ANY, AM_PRIORITY, App, Ask, ClusterSnapshot, Container, Locality, Resources
from yarnctl.state import ClusterState

OPS = ["app", "move", "gone", "ask", "alloc", "release", "resize"]


def small_cluster() -> ClusterState:
    """Three empty nodes of 8 GB and 8 vcores."""
    state = ClusterState()
    for i in range(3):
        state.put_node(f"n{i}", "/r", Resources(8192, 8), Resources(8192, 8))
    return state


def _size(data: st.DataObject) -> Resources:
    return Resources(data.draw(st.integers(1, 4)) * 1024, data.draw(st.integers(1, 3)))


def random_step(state: ClusterState, snap: ClusterSnapshot, data: st.DataObject, ids: itertools.count[int],
                users: str = "u") -> None:
    """One drawn change to `state`: an app arrives, moves queue or goes, asks, holds or releases a container, a node resizes."""
    op = data.draw(st.sampled_from(OPS))
    if op == "app" or (op != "resize" and not snap.apps):
        app_id = f"a{next(ids)}"
        state.add_app(App(app_id, data.draw(st.sampled_from(["q0", "q1"])), data.draw(st.sampled_from(users)),
                          "MAPREDUCE", app_id, (), float(data.draw(st.integers(0, 5)))))
    elif op == "move":
        old = snap.apps[data.draw(st.sampled_from(sorted(snap.apps)))]
        state.add_app(dataclasses.replace(old, queue="q1" if old.queue == "q0" else "q0"))
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
        state.resize_node(node, Resources(data.draw(st.integers(4, 16)) * 1024, data.draw(st.integers(4, 16))))
