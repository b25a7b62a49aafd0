"""Differential property: the simulator's path and the wire's path through Mirror give equal snapshots.

Random sequences of RM events (nodes joining, resized and lost; apps accepted, re-tagged and removed;
asks set; containers allocated, released and killed) are applied twice: as the simulator applies
them (ClusterState mutations) and, encoded as wire rows, through `Mirror.apply`. After every step
both snapshots must be equal in every part a policy reads, apps in the same order, neither may
list an app holding nothing in `app_allocated`, and the store's AM, queue and user sums must equal
their recount from the containers (an app moved to another queue takes what it holds along).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from yarnctl.bridge.mirror import Mirror
from yarnctl.bridge.wire import parse_request
from yarnctl.model import ANY, App, ClusterSnapshot, Container, ContainerKind, Locality, Ask, Resources
from yarnctl.state import ClusterState

WIRE_KINDS = (ContainerKind.NORMAL, ContainerKind.OPPORTUNISTIC)  # wire v2 carries both


class _Both:
    """One RM history driven into a ClusterState directly and into a Mirror through wire requests."""

    def __init__(self) -> None:
        self.state = ClusterState(Resources(512, 1))
        self.mirror = Mirror()
        self.ids = itertools.count(1)
        self.seq = 0
        self.rows: dict[str, list[Any]] = {}
        self.tables: dict[str, dict[int, list[Ask]]] = {}  # the sim's per-app asks by priority
        self.node_rows: dict[str, list[Any]] = {}
        self.heartbeat = ""

    def emit(self, key: str, row: Any) -> None:
        self.rows.setdefault(key, []).append(row)

    def send(self) -> None:
        """Deliver the rows gathered since the last call as one request (the first one full)."""
        self.seq += 1
        node = self.state.node(self.heartbeat)
        assert node is not None
        used = [node.allocated.memory_mb, node.allocated.vcores, self.state.node_container_count(self.heartbeat)]
        doc: dict[str, Any] = {"v": 2, "seq": self.seq, "full": self.seq == 1, "t": 1000 * self.seq,
                               "node": self.heartbeat, "used": used, **self.rows}
        if self.seq == 1:
            doc["min"] = [512, 1]
        else:
            doc["base"] = self.seq - 1
        self.rows = {}
        self.mirror.apply(parse_request(json.dumps(doc)))


def _resources(data: st.DataObject) -> Resources:
    return Resources(data.draw(st.integers(1, 8)) * 512, data.draw(st.integers(1, 4)))


def _step(b: _Both, data: st.DataObject) -> None:
    taken = b.state.snapshot(0.0)
    # what the step picks from, as plain copies: no snapshot is held while it writes, so the store writes its maps
    # in place (ClusterState._own) unless a test keeps one
    nodes, apps, containers = dict(taken.nodes), dict(taken.apps), dict(taken.containers)
    del taken
    op = data.draw(st.sampled_from(["node", "resize", "lost", "app", "retag", "move", "gone", "ask", "alloc",
                                    "bulk", "release", "kill"]))
    pick = lambda xs: data.draw(st.sampled_from(sorted(xs)))  # noqa: E731
    if op == "node" or not nodes:
        nid, rack, cap = f"h{next(b.ids)}:45454", f"/r{data.draw(st.integers(0, 2))}", _resources(data)
        b.state.put_node(nid, rack, cap, cap)
        b.node_rows[nid] = [nid, rack, cap.memory_mb, cap.vcores, cap.memory_mb, cap.vcores]
        b.emit("nodes", b.node_rows[nid])
    elif op == "resize":
        nid, cap = pick(nodes), Resources(data.draw(st.integers(0, 8)) * 512, data.draw(st.integers(0, 4)))
        b.state.resize_node(nid, cap)
        b.node_rows[nid] = [*b.node_rows[nid][:2], cap.memory_mb, cap.vcores, *b.node_rows[nid][4:]]
        b.emit("nodes", b.node_rows[nid])
    elif op == "lost" and len(nodes) > 1:
        nid = pick(set(nodes) - {b.heartbeat})
        b.state.remove_node(nid)
        b.emit("lost", nid)
    elif op == "app" or (op in ("retag", "move", "gone", "ask", "alloc") and not apps):
        # submit times drawn, not increasing: apps may arrive out of order, as after a full sync
        app = App(f"application_1_{next(b.ids):04d}", f"q{data.draw(st.integers(0, 1))}", "u", "MAPREDUCE", "j",
                  (), data.draw(st.integers(0, 5)) * 1.0)
        b.state.add_app(app)
        b.emit("apps", [app.id, app.queue, app.user, app.type, app.name, list(app.tags), int(app.submit_s * 1000)])
    elif op == "retag":
        # an iterative job's next stage: the RM sees a new app; the simulator re-tags its record in place
        old = apps[pick(apps)]
        b.state.add_app(App(old.id, old.queue, old.user, old.type, old.name, (f"stage={next(b.ids)}",), old.submit_s))
        b.state.remove_app(old.id)
        b.tables.pop(old.id, None)
        b.emit("gone", old.id)
    elif op == "move":
        # `yarn application -movetoqueue`: the app keeps its containers, its queue's and user's sums move
        old = apps[pick(apps)]
        app = App(old.id, "q1" if old.queue == "q0" else "q0", old.user, old.type, old.name, old.tags, old.submit_s)
        b.state.add_app(app)
        b.emit("apps", [app.id, app.queue, app.user, app.type, app.name, list(app.tags), int(app.submit_s * 1000)])
    elif op == "gone":
        app_id = pick(apps)
        b.state.remove_app(app_id)
        b.tables.pop(app_id, None)
        b.emit("gone", app_id)
    elif op == "ask":
        app_id, prio = pick(apps), data.draw(st.sampled_from([0, 10, 20]))
        cap, count = _resources(data), data.draw(st.integers(0, 5))
        relax = data.draw(st.booleans())
        local = [[pick(nodes).rpartition(":")[0], count, 1]] if count and data.draw(st.booleans()) else []
        rows = [Ask(app_id, prio, cap, count, ANY, Locality.ANY, relax)] if count else []
        rows += [Ask(app_id, prio, cap, n, name, Locality.NODE, bool(r)) for name, n, r in local]
        tables = b.tables.setdefault(app_id, {})
        tables[prio] = rows
        # the simulator replaces an app's whole ask table at once; off-switch asks only take its cheap path
        rows = [r for p in sorted(tables) for r in tables[p]]
        if all(r.resource_name == ANY for r in rows):
            b.state.set_any_asks(app_id, tuple(rows))
        else:
            b.state.set_app_asks(app_id, rows)
        b.emit("asks", [app_id, prio, cap.memory_mb, cap.vcores, count, int(relax), local])
    elif op == "alloc":
        app_id, nid = pick(apps), pick(nodes)
        c = Container(f"container_{next(b.ids):06d}", app_id, nid, data.draw(st.sampled_from([0, 10, 20])),
                      _resources(data), b.seq * 1.0, data.draw(st.sampled_from(WIRE_KINDS)),
                      is_am=data.draw(st.booleans()))
        b.state.launch(c)  # the simulator places its containers itself
        b.emit("alloc", [c.id, c.app_id, c.node_id, c.priority, c.resource.memory_mb, c.resource.vcores,
                         int(c.start_s * 1000), int(c.is_am), int(c.kind is ContainerKind.OPPORTUNISTIC)])
    elif op == "bulk" and apps:
        # a request with BULK (16) allocations or more: the mirror adds them up in one pass (allocate_all)
        app_id = pick(apps)
        for nid in data.draw(st.lists(st.sampled_from(sorted(nodes)), min_size=16, max_size=20)):
            c = Container(f"container_{next(b.ids):06d}", app_id, nid, 20, _resources(data), b.seq * 1.0,
                          is_am=data.draw(st.booleans()))
            b.state.launch(c)
            b.emit("alloc", [c.id, c.app_id, c.node_id, c.priority, c.resource.memory_mb, c.resource.vcores,
                             int(c.start_s * 1000), int(c.is_am), 0])
    elif op in ("release", "kill") and containers:
        cid = pick(containers)
        b.state.release(cid)
        b.emit("done", [cid, 1000 * b.seq, 0 if op == "release" else -102])
    if b.heartbeat not in b.state.snapshot(0.0).nodes:
        b.heartbeat = sorted(b.state.snapshot(0.0).nodes)[0]


def _view(s: ClusterSnapshot) -> dict[str, Any]:
    """Every part of a snapshot a policy reads, with the apps' order."""
    return {"nodes": dict(s.nodes), "apps": list(s.apps.items()), "requests": dict(s.asks),
            "containers": {n: list(cs) for n, cs in s.node_containers.items()},
            "allocated": dict(s.app_allocated), "capacity": s.capacity, "min": s.min_allocation,
            "am": dict(s.app_am), "queue_am": dict(s.queue_am), "queues": dict(s.queue_allocated),
            "users": dict(s.user_allocated),
            "priorities": {a: dict(held) for a, held in s.priority_allocated.items()}}


def _by_priority(s: ClusterSnapshot) -> dict[str, dict[int, tuple[int, Resources]]]:
    """Each app's containers counted and summed per priority, as the store keeps them."""
    out: dict[str, dict[int, tuple[int, Resources]]] = {}
    for c in s.containers.values():
        n, total = out.setdefault(c.app_id, {}).get(c.priority, (0, Resources(0, 0)))
        out[c.app_id][c.priority] = (n + 1, total + c.resource)
    return out


def _sums(s: ClusterSnapshot) -> list[dict[Any, Resources]]:
    """The AM (by app and by queue), queue and user sums recounted from the containers, as the store keeps them."""
    sums: list[dict[Any, Resources]] = [{}, {}, {}, {}]
    for c in s.containers.values():
        app = s.apps[c.app_id]
        for i, key, counted in ((0, c.app_id, c.is_am), (1, app.queue, c.is_am), (2, app.queue, True),
                                (3, (app.queue, app.user), True)):
            if counted:
                sums[i][key] = sums[i].get(key, Resources(0, 0)) + c.resource
    return sums


@given(st.data())
def test_the_simulators_path_and_the_wires_path_give_equal_snapshots(data: st.DataObject) -> None:
    b = _Both()
    for _ in range(data.draw(st.integers(1, 40))):
        _step(b, data)
        b.send()
        mine, wire = b.state.snapshot(1.0), b.mirror.snapshot(1.0)
        assert _view(mine) == _view(wire)
        assert list(mine.apps) == sorted(mine.apps, key=lambda a: (mine.apps[a].submit_s, a))
        assert all(not r.is_zero() for r in mine.app_allocated.values())  # absent, never zero
        assert set(mine.app_allocated) == {c.app_id for c in mine.containers.values()}
        assert _sums(mine) == [dict(mine.app_am), dict(mine.queue_am), dict(mine.queue_allocated),
                               dict(mine.user_allocated)]
        assert {a: dict(held) for a, held in mine.priority_allocated.items()} == _by_priority(mine)
        assert {c.kind for c in wire.containers.values()} <= set(WIRE_KINDS)
        for snap in (mine, wire):  # the store's kept list of apps with asks, against a walk of every app
            assert snap.pending_apps() == [a for a in snap.apps.values() if a.id in snap.asks]
        del mine, wire, snap  # held into the next step, they would make both stores copy rather than write in place


def test_a_snapshot_carries_the_store_version_and_a_copy_does_not() -> None:
    """Readers skip a snapshot whose version they read (the queue tracker): only the store's own may carry one."""
    import dataclasses

    state = ClusterState()
    state.put_node("n1", "/r", Resources(4096, 4))
    first = state.snapshot(0.0)
    assert first.version >= 0 and state.snapshot(1.0).version == first.version  # nothing changed
    state.add_app(App("a1", queue="q", user="u"))
    assert state.snapshot(2.0).version > first.version
    assert dataclasses.replace(first, capacity=Resources(1, 1)).version == -1  # a policy's view


def test_a_snapshot_replaced_with_other_asks_walks_its_apps() -> None:
    """The kept apps-with-asks list holds only for the asks it was read from: a view without an app's asks (the AM limit's) must not list it."""
    import dataclasses
    from types import MappingProxyType

    state = ClusterState()
    state.put_node("n1", "/r", Resources(4096, 4))
    for i, submit in enumerate((3.0, 1.0, 2.0)):
        app = App(f"a{i}", queue="q", user="u", submit_s=submit)
        state.add_app(app)
        state.set_any_asks(app.id, (Ask(app.id, 0, Resources(1024, 1), 1),))
    snap = state.snapshot(0.0)
    assert [a.id for a in snap.iter_pending_apps()] == ["a1", "a2", "a0"]
    view = dataclasses.replace(snap, asks=MappingProxyType({k: v for k, v in snap.asks.items() if k != "a2"}))
    assert [a.id for a in view.iter_pending_apps()] == ["a1", "a0"]
    state.set_any_asks("a1", ())
    assert [a.id for a in state.snapshot(1.0).iter_pending_apps()] == ["a2", "a0"]
    assert [a.id for a in snap.iter_pending_apps()] == ["a1", "a2", "a0"]  # an earlier snapshot stays as it was


def test_snapshots_of_one_state_share_its_fields_and_match_a_fresh_one() -> None:
    """Snapshots at one version share their fields (DRESS asks again and again at one state); each is what a fresh one holds."""
    import dataclasses

    state = ClusterState()
    state.put_node("n1", "/r", Resources(8192, 8))
    state.add_app(App("a1", queue="q", user="u"))
    state.set_any_asks("a1", (Ask("a1", 20, Resources(1024, 1), 2),))
    state.launch(Container("c1", "a1", "n1", 20, Resources(1024, 1), 0.0, is_am=True))
    first, again = state.snapshot(1.0), state.snapshot(2.0)
    assert again.now_s == 2.0 and again.version == first.version and again.nodes is first.nodes
    assert again.containers is first.containers  # the container index is built once per state
    state._views = None  # what the store builds from scratch
    fresh = state.snapshot(2.0)
    one = Resources(1024, 1)  # each field where ClusterSnapshot has it (the store passes them by position)
    assert (set(fresh.nodes), list(fresh.apps), set(fresh.asks), set(fresh.node_containers)) == ({"n1"}, ["a1"],
                                                                                                {"a1"}, {"n1"})
    assert (fresh.app_allocated, fresh.app_am, fresh.queue_am, fresh.queue_allocated, fresh.user_allocated) == (
        {"a1": one}, {"a1": one}, {"q": one}, {"q": one}, {("q", "u"): one})
    assert (fresh.min_allocation, fresh.capacity, fresh.am_allocated, fresh.am_asked) == (
        Resources(1024, 1), Resources(8192, 8), one, Resources(0, 0))
    assert dict(fresh.priority_allocated["a1"]) == {20: (1, one)} and fresh.inactive == frozenset()
    assert fresh.journal is state.journal and fresh.journal_end == state.journal.end and fresh.pending_apps()
    for f in dataclasses.fields(again):
        mine, theirs = getattr(again, f.name), getattr(fresh, f.name)
        if f.name == "_pending":
            assert [list(m) for m in mine] == [list(m) for m in theirs]
        elif f.name != "_by_id":
            assert mine == theirs or (isinstance(mine, Mapping) and dict(mine) == dict(theirs)), f.name
    state.launch(Container("c2", "a1", "n1", 20, Resources(1024, 1), 0.0))
    after = state.snapshot(3.0)
    assert after.version > first.version and set(after.containers) == {"c1", "c2"} and "c2" not in first.containers
    assert after.app_allocated["a1"] == Resources(2048, 2) and first.app_allocated["a1"] == Resources(1024, 1)


@given(st.data())
def test_a_kept_snapshot_keeps_what_it_read_while_the_store_writes_on(data: st.DataObject) -> None:
    """Snapshots read the store's own maps (`ClusterState._own`): one held over later writes stays as it was taken.

    Snapshots of both paths are kept for one to three steps among steps that keep none (which write in place),
    bulk allocations included; fails if a write to a map a snapshot reads skips `_own`.
    """
    b = _Both()
    kept: list[tuple[int, ClusterSnapshot, dict[str, Any]]] = []
    for step in range(data.draw(st.integers(1, 40))):
        if data.draw(st.booleans()):
            for taken in (b.state.snapshot(1.0), b.mirror.snapshot(1.0)) if b.mirror.seq else (b.state.snapshot(1.0),):
                kept.append((step + data.draw(st.integers(1, 3)), taken, _view(taken)))
            del taken
        _step(b, data)
        b.send()
        assert all(_view(snap) == seen for _, snap, seen in kept)  # no loop variable left holding one
        kept = [k for k in kept if k[0] > step]
    assert _view(b.state.snapshot(2.0)) == _view(b.mirror.snapshot(2.0))


def test_the_store_writes_in_place_once_no_snapshot_reads_its_maps() -> None:
    """A dropped snapshot costs no copy (the simulator drops it before applying the decision); a held one costs one per map."""
    state = ClusterState()
    state.put_node("n1", "/r", Resources(8192, 8))
    state.add_app(App("a1", queue="q", user="u"))
    state.set_any_asks("a1", (Ask("a1", 20, Resources(1024, 1), 2),))
    state.snapshot(1.0)
    state.launch(Container("c1", "a1", "n1", 20, Resources(1024, 1), 0.0, is_am=True))
    state.set_any_asks("a1", (Ask("a1", 20, Resources(1024, 1), 1),))
    assert state.copies == 0
    held = state.snapshot(2.0)
    allocated = held.app_allocated
    del held  # a map read out of a snapshot is still read
    state.launch(Container("c2", "a1", "n1", 20, Resources(1024, 1), 0.0))
    state.set_any_asks("a1", ())
    assert state.copies == 1 and dict(allocated) == {"a1": Resources(1024, 1)}
    state.snapshot(3.0)  # n1 refreshed in place: the snapshot that read the node maps is gone
    assert state.copies == 1
    held = state.snapshot(4.0)
    state.release("c2")  # the app's, queue's, user's and priority sums: one copy each
    state.snapshot(5.0)  # n1 refreshed: the nodes and their containers copied
    assert state.copies == 1 + 4 + 2
    assert held.nodes["n1"].allocated == Resources(2048, 2) and len(held.node_containers["n1"]) == 2


def test_a_view_with_other_containers_keeps_its_own_container_index() -> None:
    """A view `replace`d with other containers builds its own index: the store's later snapshots of that state keep theirs."""
    import dataclasses
    from types import MappingProxyType

    state = ClusterState()
    state.put_node("n1", "/r", Resources(8192, 8))
    state.add_app(App("a1", queue="q", user="u"))
    state.launch(Container("c1", "a1", "n1", 20, Resources(1024, 1), 0.0))
    view = dataclasses.replace(state.snapshot(1.0), node_containers=MappingProxyType({"n1": ()}))
    assert dict(view.containers) == {}
    assert set(state.snapshot(2.0).containers) == {"c1"}  # the shared index was the view's empty one
