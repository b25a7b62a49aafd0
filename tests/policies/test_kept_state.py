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

from yarnctl.model import ANY, AM_PRIORITY, App, Ask, Container, Locality, Resources
from yarnctl.policies import make_policy
from yarnctl.state import ClusterState


def _size(data: st.DataObject) -> Resources:
    return Resources(data.draw(st.integers(1, 4)) * 1024, data.draw(st.integers(1, 3)))


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["capacity", "hmrf", "lt-drf", "af"]))
def test_kept_state_decides_as_a_fresh_read(data: st.DataObject, name: str) -> None:
    state = ClusterState()
    for i in range(3):
        state.put_node(f"n{i}", "/r", Resources(8192, 8), Resources(8192, 8))
    ids = itertools.count()
    config = {"max_am_resource_percent": 0.3} if name == "capacity" else {"entity": data.draw(
        st.sampled_from(["queue", "user"]))}
    kept, fresh = make_policy(name, config), make_policy(name, config)
    for step in range(data.draw(st.integers(1, 30))):
        snap = state.snapshot(float(step))
        op = data.draw(st.sampled_from(["app", "move", "gone", "ask", "alloc", "release", "resize"]))
        if op == "app" or (op != "resize" and not snap.apps):
            app_id = f"a{next(ids)}"
            state.add_app(App(app_id, data.draw(st.sampled_from(["q0", "q1"])), data.draw(st.sampled_from("uv")),
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
            state.resize_node(node, Resources(data.draw(st.integers(4, 16)) * 1024, 8))
        snap = state.snapshot(step + 0.5)
        for node in sorted(snap.nodes):
            view = dataclasses.replace(snap)
            assert view.version == -1
            assert kept.decide(snap, node) == fresh.decide(view, node), (name, node)
            if name != "capacity":  # what the trackers read, accounts in the order they opened
                assert _read(kept) == _read(fresh), (name, node)


def _read(policy: object) -> list[tuple[str, object, object, bool]]:
    accounts = policy.tracker.accounts  # type: ignore[attr-defined]
    return [(n, a.alloc, a.nonsharing, a.pending) for n, a in accounts.items()]
