"""The wire codec: request rows decode to typed values, and decisions round-trip through the response string."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wirefixtures import APP1, C1, text

from yarnctl.bridge.response import encode_decision, encode_error, encode_resync, parse_response, to_decision
from yarnctl.bridge.wire import LocalRow, WireError, parse_request
from yarnctl.model import Assignment, Container, ContainerKind, Decision, Kill, NodeResize, Resources


def test_full_request_rows() -> None:
    req = parse_request(text("request-full.json"))
    assert (req.seq, req.base, req.full, req.t_ms, req.node, req.used, req.min) == \
        (1, None, True, 1700000002000, "n1:45454", (3072, 2, 2), (1024, 1))
    assert req.asks[1].locals == (LocalRow("n1", 2, True), LocalRow("/r1", 2, True))
    assert req.alloc[0] == Container(C1, APP1, "n1:45454", 0, Resources(2048, 1), 1700000000.5, is_am=True)
    assert req.apps[1].tags == ("yarnctl.iterations=3",) and not req.lost and not req.done


def test_node_rows_carry_the_registered_size() -> None:
    """A resized node keeps the size it registered with beside its capacity; a 4-item row is registered as is."""
    base = '{"v":2,"seq":1,"full":true,"t":0,"node":"n1","used":[0,0,0],"min":[128,1],"nodes":[%s]}'
    [resized] = parse_request(base % '["n1","/r1",9216,6,4096,4]').nodes
    assert (resized.memory_mb, resized.vcores, resized.registered_mb, resized.registered_vcores) == (9216, 6, 4096, 4)
    [plain] = parse_request(base % '["n1","/r1",4096,4]').nodes
    assert (plain.registered_mb, plain.registered_vcores) == (4096, 4)
    for bad in ('["n1","/r1",4096,4,-1,4]', '["n1","/r1",4096,4,4096]', '["n1","/r1",4096,4,4096,4,1]'):
        with pytest.raises(WireError, match="nodes"):
            parse_request(base % bad)


@pytest.mark.parametrize(
    "decision, expected",
    [
        (Decision(), '{"seq":7}'),
        (Decision((Assignment("a", 20, "n", 2),)), '{"seq":7,"a":[["a",20,2]]}'),
        (Decision((Assignment("a", 20, "n", 1, ContainerKind.OPPORTUNISTIC),)), '{"seq":7,"a":[["a",20,1,1]]}'),
        (Decision(kills=(Kill("c", "why"),), resizes=(NodeResize("n", Resources(1, 2)),)),
         '{"seq":7,"k":[["c","why"]],"r":[["n",1,2]]}'),
    ],
    ids=["empty", "assign", "assign-opportunistic", "kill-resize"],
)
def test_encode_decision(decision: Decision, expected: str) -> None:
    assert encode_decision(7, decision) == expected


def test_status_responses() -> None:
    assert encode_resync(3) == '{"seq":3,"resync":true}'
    assert parse_response(encode_error(3, 'bad "x"\n')).err == 'bad "x"\n'


_ids = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)


@given(st.lists(st.tuples(_ids, st.integers(-5, 99), st.integers(1, 9), st.sampled_from(ContainerKind)), max_size=4),
       st.lists(st.tuples(_ids, st.text(max_size=8)), max_size=3),
       st.lists(st.tuples(_ids, st.integers(0, 10**6), st.integers(0, 64)), max_size=3),
       st.integers(1, 2**40))
def test_decision_round_trips(a: list[tuple[str, int, int, ContainerKind]], k: list[tuple[str, str]],
                              r: list[tuple[str, int, int]], seq: int) -> None:
    d = Decision(tuple(Assignment(app, p, "n1:1", n, kind) for app, p, n, kind in a), tuple(Kill(c, why) for c, why in k),
                 tuple(NodeResize(node, Resources(mb, vc)) for node, mb, vc in r))
    assert to_decision(parse_response(encode_decision(seq, d)), seq, "n1:1") == d


@pytest.mark.parametrize(
    "raw, field",
    [('{"seq":2,"a":[["x",1,1]],"resync":1}', "resync"), ('{"seq":2,"err":5}', "err"),
     ('{"seq":true}', "seq"), ('{"seq":2,"k":[["c"]]}', "k[0]"), ('{"seq":2,"r":{}}', "r")],
    ids=["resync-not-bool", "err-not-string", "seq-bool", "short-kill", "resize-not-array"],
)
def test_response_parser_names_the_field(raw: str, field: str) -> None:
    with pytest.raises(WireError) as e:
        parse_response(raw)
    assert e.value.field == field


def test_to_decision_refuses_other_seq() -> None:
    with pytest.raises(WireError, match="answer for call 1, expected 2"):
        to_decision(parse_response('{"seq":1}'), 2, "n")


def test_v1_requests_still_parse_and_their_containers_are_normal() -> None:
    # decision logs written before wire v2 are replayed: their alloc rows have no kind
    old = ('{"v":1,"seq":1,"full":true,"t":0,"node":"n1:1","used":[1024,1,1],"nodes":[["n1:1","/r",4096,4]],'
           '"apps":[["a1","q","u","YARN","n",[],0]],"alloc":[["c1","a1","n1:1",20,1024,1,0,0]]}')
    [row] = parse_request(old).alloc
    assert row.kind is ContainerKind.NORMAL
    new = old.replace('"v":1', '"v":2').replace("1024,1,0,0]", "1024,1,0,0,1]")
    assert parse_request(new).alloc[0].kind is ContainerKind.OPPORTUNISTIC
    with pytest.raises(WireError, match=r"alloc\[0\]"):
        parse_request(old.replace("1024,1,0,0]", "1024,1,0,0,2]"))


_ROW = ["c1", "a1", "n1:1", 20, 1024, 1, 0, 0, 0]


@pytest.mark.parametrize("row", [
    _ROW[:7], _ROW + [0], "c1a1n1:12", 9, None, {"c": 1},
    ["", *_ROW[1:]], ["c" * 513, *_ROW[1:]], [*_ROW[:2], 7, *_ROW[3:]],
    [*_ROW[:3], 1.5, *_ROW[4:]], [*_ROW[:4], -1, *_ROW[5:]], [*_ROW[:5], -1, *_ROW[6:]], [*_ROW[:5], True, *_ROW[6:]],
    [*_ROW[:6], -5, *_ROW[7:]], [*_ROW[:7], True, 0], [*_ROW[:7], 2, 0], [*_ROW[:8], True], [*_ROW[:8], 2],
    [*_ROW[:8], None],
], ids=["7-items", "10-items", "string", "int", "null", "object", "empty-id", "long-id", "node-not-str",
        "float-priority", "negative-mb", "negative-vcores", "bool-vcores", "negative-ms", "bool-am", "am-2",
        "bool-kind", "kind-2", "null-kind"])
def test_a_malformed_alloc_row_is_named(row: Any) -> None:
    """Every check of the alloc reader (the full sync's per-container path) refuses its bad row by index."""
    good = {"v": 3, "seq": 1, "full": True, "t": 0, "node": "n1:1", "used": [0, 0, 0], "alloc": [_ROW, _ROW]}
    assert len(parse_request(json.dumps(good)).alloc) == 2
    with pytest.raises(WireError, match=r"^alloc\[1\]: expected \[container, app, node"):
        parse_request(json.dumps({**good, "alloc": [_ROW, row]}))


_NODE = ["n1:1", "/r1", 4096, 4, 4096, 4]


@pytest.mark.parametrize("row", [
    _NODE[:3], _NODE[:5], _NODE + [1], "n1:1/r1409", None, ["", *_NODE[1:]], ["n" * 513, *_NODE[1:]],
    [_NODE[0], 7, *_NODE[2:]], [*_NODE[:2], True, *_NODE[3:]], [*_NODE[:3], -1, *_NODE[4:]],
    [*_NODE[:4], 1.5, 4], [*_NODE[:5], -4],
], ids=["3-items", "5-items", "7-items", "string", "null", "empty-id", "long-id", "rack-not-str", "bool-mb",
        "negative-vcores", "float-registered-mb", "negative-registered-vcores"])
def test_a_malformed_node_row_is_named(row: Any) -> None:
    """Every check of the node rows (inline, as the full sync's alloc rows) refuses its bad row by index."""
    good = {"v": 3, "seq": 1, "full": True, "t": 0, "node": "n1:1", "used": [0, 0, 0], "nodes": [_NODE, _NODE[:4]]}
    assert [n.registered_mb for n in parse_request(json.dumps(good)).nodes] == [4096, 4096]
    with pytest.raises(WireError, match=r"^nodes\[1\]: expected \[id, rack, MB, vcores"):
        parse_request(json.dumps({**good, "nodes": [_NODE, row]}))


def test_an_error_whose_text_is_not_utf8_is_still_answered() -> None:
    """orjson refuses a lone surrogate (a path that is not UTF-8 named in an error); the answer falls back to json."""
    assert json.loads(encode_error(3, "cannot read /tmp/\udc80.yaml")) == {"seq": 3, "err": "cannot read /tmp/\udc80.yaml"}
    assert encode_error(4, "δ too small") == '{"seq":4,"err":"δ too small"}'  # UTF-8 as is, as Jackson reads it
