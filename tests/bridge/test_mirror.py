"""The mirror after each shared fixture request, and the sequencing rules that force a resync."""

from __future__ import annotations

import json

import pytest
from wirefixtures import APP1, APP2, C1, C2, C3, compact, doc, text

from yarnctl.bridge.mirror import Mirror, MirrorMismatch
from yarnctl.bridge.wire import parse_request
from yarnctl.model import ANY, App, ClusterSnapshot, Container, ContainerKind, Locality, Node, Ask, Resources

R = Resources
ALICE = App(APP1, "default", "alice", "MAPREDUCE", "QuasiMonteCarlo", (), 1700000000.0)
BOB = App(APP2, "default", "bob", "YARN", "DistributedShell", ("yarnctl.iterations=3",), 1700000001.0)
CONT1 = Container(C1, APP1, "n1:45454", 0, R(2048, 1), 1700000000.5, is_am=True)
CONT2 = Container(C2, APP1, "n1:45454", 20, R(1024, 1), 1700000001.5, ContainerKind.OPPORTUNISTIC)  # placed by OPERA
CONT3 = Container(C3, APP2, "n2:45454", 0, R(1024, 1), 1700000002.5, is_am=True)
APP1_REQS = (
    Ask(APP1, 10, R(4096, 1), 1, ANY, Locality.ANY, True),
    Ask(APP1, 20, R(1024, 1), 4, ANY, Locality.ANY, True),
    Ask(APP1, 20, R(1024, 1), 2, "n1", Locality.NODE, True),
    Ask(APP1, 20, R(1024, 1), 2, "/r1", Locality.RACK, True),
)


def _mirror(*names: str) -> Mirror:
    m = Mirror()
    for n in names:
        m.apply(parse_request(text(n)))
    return m


def _state(snap: ClusterSnapshot) -> dict[str, object]:
    return {
        "nodes": dict(snap.nodes), "apps": list(snap.apps.values()), "requests": dict(snap.asks),
        "containers": {n: cs for n, cs in snap.node_containers.items() if cs},
        "app_allocated": dict(snap.app_allocated), "min": snap.min_allocation, "capacity": snap.capacity,
    }


EXPECTED = {
    "full": {
        "nodes": {"n1:45454": Node("n1:45454", "/r1", R(8192, 8), R(3072, 2), R(8192, 8)),
                  "n2:45454": Node("n2:45454", "/r2", R(8192, 8), R(0, 0), R(8192, 8))},
        "apps": [ALICE, BOB],
        "requests": {APP1: APP1_REQS, APP2: (Ask(APP2, 0, R(1024, 1), 1),)},
        "containers": {"n1:45454": (CONT1, CONT2)},
        "app_allocated": {APP1: R(3072, 2)}, "min": R(1024, 1), "capacity": R(16384, 16),
    },
    "full+delta": {
        "nodes": {"n1:45454": Node("n1:45454", "/r1", R(8192, 8), R(3072, 2), R(8192, 8)),
                  "n2:45454": Node("n2:45454", "/r2", R(8192, 8), R(1024, 1), R(8192, 8))},
        "apps": [ALICE, BOB],
        "requests": {APP1: APP1_REQS, APP2: (Ask(APP2, 0, R(1024, 2), 3),)},
        "containers": {"n1:45454": (CONT1, CONT2), "n2:45454": (CONT3,)},
        "app_allocated": {APP1: R(3072, 2), APP2: R(1024, 1)}, "min": R(1024, 1), "capacity": R(16384, 16),
    },
    "full+delta+delta-2": {
        "nodes": {"n1:45454": Node("n1:45454", "/r1", R(8192, 8), R(0, 0), R(8192, 8)),
                  "n2:45454": Node("n2:45454", "/r2", R(8192, 8), R(1024, 1), R(8192, 8)),
                  "n3:45454": Node("n3:45454", "/r1", R(4096, 4), R(0, 0), R(4096, 4))},
        "apps": [BOB],
        "requests": {APP2: (Ask(APP2, 0, R(1024, 2), 3),)},
        "containers": {"n2:45454": (CONT3,)},
        "app_allocated": {APP2: R(1024, 1)}, "min": R(1024, 1), "capacity": R(20480, 20),
    },
}
STEPS = {"full": ["request-full.json"], "full+delta": ["request-full.json", "request-delta.json"],
         "full+delta+delta-2": ["request-full.json", "request-delta.json", "request-delta-2.json"]}


@pytest.mark.parametrize("case", list(EXPECTED), ids=list(EXPECTED))
def test_state_after_fixture_requests(case: str) -> None:
    m = _mirror(*STEPS[case])
    snap = m.snapshot(1.5)
    assert _state(snap) == EXPECTED[case]
    assert snap.now_s == 1.5 and m.seq == len(STEPS[case])
    assert dict(snap.containers) == {c.id: c for cs in EXPECTED[case]["containers"].values()  # type: ignore[attr-defined]
                                     for c in cs}


def test_snapshot_is_not_changed_by_later_requests() -> None:
    m = _mirror("request-full.json")
    before = m.snapshot(0.0)
    frozen = _state(before)
    m.apply(parse_request(text("request-delta.json")))
    m.apply(parse_request(text("request-delta-2.json")))
    m.snapshot(0.0)
    assert _state(before) == frozen


def _edit(name: str, **changes: object) -> str:
    d = doc(name)
    d.update(changes)
    return compact(d)


@pytest.mark.parametrize(
    "after, req, message",
    [
        ([], text("request-delta.json"), "no state yet"),
        (["request-full.json"], text("request-delta-2.json"), "delta on 2, mirror is at 1"),
        (["request-full.json"], _edit("request-delta.json", used=[2048, 1, 1]), "RM has [2048, 1, 1]"),
        (["request-full.json"], _edit("request-delta.json", used=[1024, 1, 2]), "RM has [1024, 1, 2]"),
        (["request-full.json"], _edit("request-delta.json", node="n9:1"), "n9:1 is unknown"),
        (["request-full.json"], _edit("request-delta.json", asks=[["app_x", 1, 1, 1, 1, 1, []]]), "unknown app"),
        (["request-full.json", "request-delta.json"],
         _edit("request-delta-2.json", alloc=[[C3, APP2, "n2:45454", 0, 1024, 1, 1, 1]]), "allocated twice"),
        (["request-full.json"],
         _edit("request-delta.json", alloc=[["c9", APP2, "n7:1", 0, 1, 1, 1, 0]]), "unknown node n7:1"),
    ],
    ids=["delta-before-full", "base-mismatch", "used-memory-mismatch", "used-count-mismatch",
         "unknown-heartbeating-node", "ask-unknown-app", "container-twice", "alloc-unknown-node"],
)
def test_mismatch_means_resync(after: list[str], req: str, message: str) -> None:
    m = _mirror(*after)
    with pytest.raises(MirrorMismatch, match=message.replace("[", r"\[").replace("]", r"\]")):
        m.apply(parse_request(req))


def test_base_mismatch_keeps_the_mirror_but_a_drift_invalidates_it() -> None:
    m = _mirror("request-full.json")
    with pytest.raises(MirrorMismatch):
        m.apply(parse_request(text("request-delta-2.json")))  # a stray call: the mirror is still right
    m.apply(parse_request(text("request-delta.json")))
    assert m.seq == 2
    with pytest.raises(MirrorMismatch):
        m.apply(parse_request(_edit("request-delta-2.json", used=[1, 1, 1])))
    assert m.seq is None
    with pytest.raises(MirrorMismatch, match="no state yet"):
        m.apply(parse_request(_edit("request-delta-2.json", base=2)))


def test_full_request_resets_everything() -> None:
    m = _mirror("request-full.json", "request-delta.json", "request-delta-2.json")
    only = {"v": 1, "seq": 9, "full": True, "t": 5000, "node": "x:1", "used": [0, 0, 0],
            "nodes": [["x:1", "/r", 100, 1]]}
    m.apply(parse_request(json.dumps(only)))
    snap = m.snapshot(0.0)
    assert m.seq == 9
    assert list(snap.nodes) == ["x:1"] and not snap.apps and not snap.asks and not snap.containers
    assert not snap.app_allocated and snap.capacity == R(100, 1)


@pytest.mark.parametrize(
    "ask, expected",
    [
        ([APP2, 5, 1, 1, 0, 1, []], None),
        ([APP2, 5, 1, 1, 0, 1, [["h1", 2, 1]]], None),
        ([APP2, 5, 1, 1, 2, 0, [["h1", 2, 1], ["/r9", 1, 0]]],
         (Ask(APP2, 5, R(1, 1), 2, ANY, Locality.ANY, False),
          Ask(APP2, 5, R(1, 1), 2, "h1", Locality.NODE, True),
          Ask(APP2, 5, R(1, 1), 1, "/r9", Locality.RACK, False))),
    ],
    ids=["count-0-removes", "count-0-with-locals-removes", "locals-and-strict-any"],
)
def test_ask_row_replaces_the_table(ask: list[object], expected: tuple[Ask, ...] | None) -> None:
    m = _mirror("request-full.json", "request-delta.json")
    m.apply(parse_request(_edit("request-delta-2.json", gone=[], done=[], nodes=[], node="n1:45454",
                                used=[3072, 2, 2], asks=[ask])))
    reqs = m.snapshot(0.0).asks[APP2]
    extra = tuple(r for r in reqs if r.priority == 5)
    assert extra == (expected or ())
    assert [r.priority for r in reqs] == sorted(r.priority for r in reqs)
