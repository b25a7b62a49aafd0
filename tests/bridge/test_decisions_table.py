"""schema/fixtures/decisions.json, the table the Java DecisionApplier also runs, through the Python validator."""

from __future__ import annotations

from typing import Any

import pytest
from wirefixtures import compact, doc, text

from yarnctl.bridge.mirror import Mirror
from yarnctl.bridge.response import parse_response, to_decision
from yarnctl.bridge.wire import WireError, parse_request
from yarnctl.engine import validate
from yarnctl.model import Assignment, Kill, NodeResize

TABLE = doc("decisions.json")
NODE = TABLE["node"]
CASES = TABLE["cases"]
APPLIED = [c for c in CASES if "raw" not in c and not c["expect"]["error"]]
REFUSED = [c for c in CASES if "raw" in c or c["expect"]["error"]]


def _snapshot() -> Any:
    m = Mirror()
    for name in TABLE["state"]:
        m.apply(parse_request(text(name)))
    return m.snapshot(0.0)


SNAP = _snapshot()
SEQ = parse_request(text(TABLE["state"][-1])).seq


def test_table_covers_both_kinds() -> None:
    assert len(APPLIED) >= 10 and len(REFUSED) >= 5 and len(APPLIED) + len(REFUSED) == len(CASES)


@pytest.mark.parametrize("case", APPLIED, ids=[c["name"] for c in APPLIED])
def test_applied_case(case: dict[str, Any]) -> None:
    decision = to_decision(parse_response(compact(case["response"])), SEQ, NODE)
    result = validate(SNAP, decision, NODE)
    expect = case["expect"]
    assert [[a.app_id, a.priority, a.count] for a in result.accepted.assignments] == expect["allocated"]
    assert all(a.node_id == NODE for a in result.accepted.assignments)
    assert [r.code.value for r in result.rejected] == expect["rejected"]  # the shim refuses with the same codes
    if "killed" in expect:
        assert [k.container_id for k in result.accepted.kills] == expect["killed"]
    if "resized" in expect:
        assert [[r.node_id, r.capacity.memory_mb, r.capacity.vcores] for r in result.accepted.resizes] == \
            expect["resized"]
    # each refusal names the part it refused
    assert all(isinstance(r.item, (Assignment, Kill, NodeResize)) and r.reason for r in result.rejected)


@pytest.mark.parametrize("case", REFUSED, ids=[c["name"] for c in REFUSED])
def test_refused_case(case: dict[str, Any]) -> None:
    # whole-response refusals are the shim's parsing cases: the Python parser must refuse them too
    raw = case["raw"] if "raw" in case else compact(case["response"])
    with pytest.raises(WireError):
        to_decision(parse_response(raw), SEQ, NODE)
