"""Property: any sequence of deltas leaves the mirror exactly where one full request of the final state does."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from wirefixtures import compact

from yarnctl.bridge.mirror import Mirror
from yarnctl.bridge.wire import parse_request
from yarnctl.model import ClusterSnapshot


class _RM:
    """A model RM: its state, and the rows of the delta being built (ids are never reused, as in YARN)."""

    def __init__(self) -> None:
        self.nodes: dict[str, list[Any]] = {}
        self.apps: dict[str, list[Any]] = {}
        self.asks: dict[tuple[str, int], list[Any]] = {}
        self.cs: dict[str, list[Any]] = {}
        self.ids = itertools.count()
        self.seq = 0
        self.rows: dict[str, list[Any]] = {}

    def emit(self, key: str, row: Any) -> None:
        self.rows.setdefault(key, []).append(row)

    def used(self, node: str) -> list[int]:
        mine = [c for c in self.cs.values() if c[2] == node]
        return [sum(c[4] for c in mine), sum(c[5] for c in mine), len(mine)]

    def request(self, node: str, full: bool) -> str:
        self.seq += 1
        doc: dict[str, Any] = {"v": 1, "seq": self.seq, "full": full, "t": 1000 + self.seq, "node": node,
                               "used": self.used(node)}
        if full:
            doc.update(min=[512, 1], nodes=list(self.nodes.values()), apps=list(self.apps.values()),
                       asks=[a for a in self.asks.values() if a[4] > 0], alloc=list(self.cs.values()))
        else:
            doc.update(base=self.seq - 1, **self.rows)
        self.rows = {}
        return compact(doc)


def _step(rm: _RM, data: st.DataObject) -> None:
    op = data.draw(st.sampled_from(["node", "resize", "lost", "app", "gone", "ask", "alloc", "done"]))
    pick = lambda xs: data.draw(st.sampled_from(sorted(xs)))  # noqa: E731
    if op == "node" or not rm.nodes:
        row = [f"h{next(rm.ids)}:45454", f"/r{data.draw(st.integers(0, 2))}", data.draw(st.integers(1, 9)) * 1024,
               data.draw(st.integers(1, 8))]
        rm.nodes[row[0]] = row
        rm.emit("nodes", row)
    elif op == "resize":
        row = list(rm.nodes[pick(rm.nodes)])
        row[2] = data.draw(st.integers(0, 9)) * 1024
        rm.nodes[row[0]] = row
        rm.emit("nodes", row)
    elif op == "lost" and len(rm.nodes) > 1:
        node = pick(rm.nodes)
        del rm.nodes[node]
        rm.cs = {k: c for k, c in rm.cs.items() if c[2] != node}
        rm.emit("lost", node)
    elif op == "app" or not rm.apps:
        # equal submit times are common (the order then falls back to the id)
        row = [f"application_{next(rm.ids)}", "q", "u", "YARN", "n", [], data.draw(st.integers(0, 3)) * 1000]
        rm.apps[row[0]] = row
        rm.emit("apps", row)
    elif op == "gone":
        app = pick(rm.apps)
        del rm.apps[app]
        rm.asks = {k: a for k, a in rm.asks.items() if k[0] != app}
        rm.cs = {k: c for k, c in rm.cs.items() if c[1] != app}
        rm.emit("gone", app)
    elif op == "ask":
        app, prio = pick(rm.apps), data.draw(st.sampled_from([0, 5, 10, 20]))
        locs = data.draw(st.lists(st.tuples(st.sampled_from(["h1", "/r1", "h2"]), st.integers(0, 3),
                                            st.integers(0, 1)), max_size=2, unique_by=lambda t: t[0]))
        row = [app, prio, 1024, 1, data.draw(st.integers(0, 4)), data.draw(st.integers(0, 1)), [list(x) for x in locs]]
        rm.asks[(app, prio)] = row
        rm.emit("asks", row)
    elif op == "alloc":
        row = [f"container_{next(rm.ids)}", pick(rm.apps), pick(rm.nodes), 20, data.draw(st.integers(0, 3)) * 512,
               data.draw(st.integers(0, 2)), 7, data.draw(st.integers(0, 1))]
        rm.cs[row[0]] = row
        rm.emit("alloc", row)
    elif op == "done" and rm.cs:
        cid = pick(rm.cs)
        del rm.cs[cid]
        rm.emit("done", [cid, 9, 0])


def _state(snap: ClusterSnapshot) -> dict[str, Any]:
    return {"nodes": dict(snap.nodes), "apps": list(snap.apps.items()), "requests": dict(snap.asks),
            "containers": sorted((c.id, c) for c in snap.containers.values()),
            "node_containers": {n: sorted(c.id for c in cs) for n, cs in snap.node_containers.items()},
            "app_allocated": dict(snap.app_allocated), "capacity": snap.capacity, "min": snap.min_allocation}


@given(st.data())
def test_deltas_equal_one_full_request(data: st.DataObject) -> None:
    rm = _RM()
    _step(rm, data)
    _step(rm, data)
    incremental = Mirror()
    incremental.apply(parse_request(rm.request(pick_node(rm, data), full=True)))
    for _ in range(data.draw(st.integers(1, 8), label="calls")):
        for _ in range(data.draw(st.integers(0, 6), label="events")):
            _step(rm, data)
        incremental.apply(parse_request(rm.request(pick_node(rm, data), full=False)))
    rebuilt = Mirror()
    rebuilt.apply(parse_request(rm.request(pick_node(rm, data), full=True)))
    assert _state(incremental.snapshot(0.0)) == _state(rebuilt.snapshot(0.0))


def pick_node(rm: _RM, data: st.DataObject) -> str:
    return data.draw(st.sampled_from(sorted(rm.nodes)), label="heartbeat")
