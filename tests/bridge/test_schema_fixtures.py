"""Every wire fixture, and every response the Python side produces, validates against wire.schema.json."""

from __future__ import annotations

import json

import jsonschema
import pytest
from wirefixtures import FIXTURES, SCHEMA, STATE, doc, text

from yarnctl.bridge.service import PolicyService
from yarnctl.policies import make_policy
from yarnctl.policies.contract import PolicyBase

VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
MESSAGES = sorted(p.name for p in FIXTURES.glob("*.json") if p.name != "decisions.json")


def test_schema_is_valid() -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA.read_text()))


@pytest.mark.parametrize("name", MESSAGES, ids=MESSAGES)
def test_fixture_validates(name: str) -> None:
    VALIDATOR.validate(doc(name))


@pytest.mark.parametrize(
    "message",
    [
        {"v": 2, "seq": 0, "full": True, "t": 0, "node": "n1:1", "used": [0, 0, 0]},
        {"v": 2, "seq": 1, "full": True, "t": 0, "node": "n1:1", "used": [0, 0]},
        {"seq": 2, "a": [["app", 20, 1, 9]]},
        {"seq": 2, "extra": 1},
    ],
    ids=["request-seq-0", "request-short-used", "response-long-row", "response-unknown-key"],
)
def test_schema_refuses(message: object) -> None:
    # the schema must be able to fail, or the fixture tests above prove nothing
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(message)


def _responses() -> list[str]:
    class Boom(PolicyBase):
        name = "boom"

        def decide(self, snap: object, node_id: str) -> object:
            raise ZeroDivisionError("x")

    out = []
    for policy in (make_policy("fifo"), make_policy("drf"), Boom()):
        service = PolicyService(policy)  # type: ignore[arg-type]
        out += [service.decide(text(n)) for n in STATE]
    service = PolicyService(make_policy("fifo"))
    out += [service.decide(text("request-delta.json")), service.decide("garbage"), service.decide("[1]")]
    return out


@pytest.mark.parametrize("response", _responses())
def test_produced_responses_validate(response: str) -> None:
    VALIDATOR.validate(json.loads(response))
    assert response == json.dumps(json.loads(response), separators=(",", ":"))  # compact, one line


def test_one_refusal_vocabulary_in_python_the_schema_and_the_shim() -> None:
    import re

    from yarnctl.model import RejectCode

    codes = json.loads(SCHEMA.read_text())["$defs"]["rejection"]["enum"]
    assert [c.value for c in RejectCode] == codes
    applier = (FIXTURES.parent.parent / "java-bridge" / "src" / "main" / "java" / "io" / "yarnctl" / "shim"
               / "DecisionApplier.java").read_text()
    java = set(re.findall(r'reject\("([a-z-]+)"', applier))
    assert java and java <= set(codes), java - set(codes)
    table = json.loads((FIXTURES / "decisions.json").read_text())
    assert {r for case in table["cases"] for r in case["expect"]["rejected"]} <= set(codes)
