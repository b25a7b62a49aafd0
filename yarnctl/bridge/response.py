"""The wire response codec: a Decision to the response string, and response strings back (replay, tests)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from yarnctl.bridge.wire import WireError, flag, is_id, loads_object, rows
from yarnctl.model import Assignment, ContainerKind, Decision, Kill, NodeId, NodeResize, Resources

_RESPONSE_KEYS = frozenset({"seq", "a", "k", "r", "resync", "err"})


@dataclass(frozen=True, slots=True)
class WireResponse:
    """One decoded response, structurally valid; `to_decision` says whether it may be applied."""

    seq: int
    a: tuple[tuple[str, int, int, ContainerKind], ...] = ()
    k: tuple[tuple[str, str], ...] = ()
    r: tuple[tuple[str, int, int], ...] = ()
    resync: bool = False
    err: str | None = None


_JSON = json.JSONEncoder(separators=(",", ":")).encode


def _encode(doc: Mapping[str, Any]) -> str:
    # compact, as json with separators=(",", ":") writes it, in a tenth of the time; text is UTF-8 rather than
    # \u escapes, which the shim's Jackson reads alike
    try:
        return orjson.dumps(doc).decode()
    except TypeError:  # a lone surrogate in a text (an error naming a path that is not UTF-8): json escapes it
        return _JSON(doc)


def encode_decision(seq: int, decision: Decision) -> str:
    """The response string for `decision` (assignments all on the heartbeating node); empty keys omitted."""
    if not (decision.assignments or decision.kills or decision.resizes):
        return f'{{"seq":{seq}}}'
    doc: dict[str, Any] = {"seq": seq}
    if decision.assignments:
        # a normal assignment stays three items (the payload is the latency budget); v2 adds 1 for opportunistic
        doc["a"] = [[a.app_id, a.priority, a.count] if a.kind is ContainerKind.NORMAL
                    else [a.app_id, a.priority, a.count, 1] for a in decision.assignments]
    if decision.kills:
        doc["k"] = [[k.container_id, k.reason] for k in decision.kills]
    if decision.resizes:
        doc["r"] = [[r.node_id, r.capacity.memory_mb, r.capacity.vcores] for r in decision.resizes]
    return _encode(doc)


def encode_resync(seq: int) -> str:
    """The response asking the shim for full state."""
    return f'{{"seq":{seq},"resync":true}}'


def encode_error(seq: int, message: str) -> str:
    """The response saying Python could not decide (the shim decides natively)."""
    return _encode({"seq": seq, "err": message})


def _a(r: Any) -> tuple[str, int, int, ContainerKind]:
    app, prio, n, *kind = r
    if not (is_id(app) and type(prio) is int and type(n) is int and (kind == [] or (len(kind) == 1 and flag(kind[0])))):
        raise ValueError
    return (app, prio, n, ContainerKind.OPPORTUNISTIC if kind == [1] else ContainerKind.NORMAL)


def _k(r: Any) -> tuple[str, str]:
    c, reason = r
    if not (is_id(c) and type(reason) is str):
        raise ValueError
    return (c, reason)


def _r(r: Any) -> tuple[str, int, int]:
    node, mem, vc = r
    if not (is_id(node) and type(mem) is int and type(vc) is int):
        raise ValueError
    return (node, mem, vc)


def parse_response(text: str | bytes) -> WireResponse:
    """Decode one response string; counts and sizes are left to the validator (refused per row)."""
    return response_from_doc(loads_object(text, "response"))


def response_from_doc(doc: Mapping[str, Any]) -> WireResponse:
    """Decode one already JSON-decoded response object."""
    if not doc.keys() <= _RESPONSE_KEYS:
        raise WireError(sorted(doc.keys() - _RESPONSE_KEYS)[0], "unknown key")
    seq = doc.get("seq")
    if not (type(seq) is int and seq >= 1):
        raise WireError("seq", f"expected an integer >= 1, got {seq!r}")
    resync, err = doc.get("resync", False), doc.get("err")
    if type(resync) is not bool:
        raise WireError("resync", f"expected true or false, got {resync!r}")
    if err is not None and type(err) is not str:
        raise WireError("err", f"expected a string, got {err!r}")
    return WireResponse(seq, rows(doc, "a", _a), rows(doc, "k", _k), rows(doc, "r", _r), resync, err)


def to_decision(resp: WireResponse, seq: int, node_id: NodeId) -> Decision:
    """The decision the shim would apply for call `seq` on `node_id`; WireError when it refuses it whole."""
    if resp.seq != seq:
        raise WireError("seq", f"answer for call {resp.seq}, expected {seq}")
    if resp.resync:
        raise WireError("resync", "Python asked for full state")
    if resp.err is not None:
        raise WireError("err", resp.err)
    return Decision(
        tuple(Assignment(app, prio, node_id, n, kind) for app, prio, n, kind in resp.a),
        tuple(Kill(c, reason) for c, reason in resp.k),
        tuple(NodeResize(node, Resources(mem, vc)) for node, mem, vc in resp.r))
