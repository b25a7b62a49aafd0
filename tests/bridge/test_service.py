"""PolicyService: every kind of bad call gets an err or resync answer, and the next good call is served."""

from __future__ import annotations

import gc
import json
import random
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from wirefixtures import APP1, APP2, STATE, compact, doc, text

from yarnctl.bridge.bench import _FakeRM
from yarnctl.bridge.service import BESIDE_LARGE_CHARS, PolicyService
from yarnctl.collector import COLLECT_EVERY
from yarnctl.model import ClusterSnapshot, Decision
from yarnctl.policies import REGISTRY, make_policy
from yarnctl.policies.contract import PolicyBase


class Boom(PolicyBase):
    name = "boom"

    def decide(self, snap: ClusterSnapshot, node_id: str) -> Decision:
        return Decision() if snap.now_s < 0 else 1 // 0  # type: ignore[return-value]


class NotADecision(PolicyBase):
    name = "junk"

    def decide(self, snap: ClusterSnapshot, node_id: str) -> Any:
        return [("app", 1)]


def _answers(service: PolicyService, *requests: str) -> list[dict[str, Any]]:
    return [json.loads(service.decide(r)) for r in requests]


def test_fixtures_are_served() -> None:
    s = PolicyService(make_policy("fifo"))
    full, delta, delta2 = _answers(s, *[text(n) for n in STATE])
    # FIFO: alice first (priority 10 needs 4096, then maps); on n2 bob's AM asked for 3 x <1024, 2>
    assert full == {"seq": 1, "a": [[APP1, 10, 1], [APP1, 20, 1]]}
    assert delta["seq"] == 2 and delta["a"][0] == [APP1, 10, 1]
    assert delta2 == {"seq": 3, "a": [[APP2, 0, 3]]}
    assert s.stats.as_dict() | {"latency_us": None, "p50_us_le": None, "p99_us_le": None} == {
        "calls": 3, "ok": 3, "resync": 0, "errors": 0, "policy_errors": 0, "explain_errors": 0, "rejected": 0, "waited": 0, "tune_errors": 0,
        "rejected_by": {}, "assigned": 2 + sum(a[2] for a in delta["a"]) + 3, "full_syncs": 1, "auth_failures": 0,
        "latency_us": None, "p50_us_le": None, "p99_us_le": None}
    assert sum(s.stats.latency_us) == 3


@pytest.mark.parametrize(
    "policy, message",
    [(Boom(), "policy boom raised ZeroDivisionError: integer division or modulo by zero"),
     (NotADecision(), "policy junk returned no Decision")],
    ids=["raises", "returns-junk"],
)
def test_policy_failure_answers_err_and_keeps_serving(policy: Any, message: str) -> None:
    s = PolicyService(policy)
    assert _answers(s, text("request-full.json")) == [{"seq": 1, "err": message}]
    # the mirror is intact: a delta is still applied (the shim would send full state anyway)
    assert _answers(s, text("request-delta.json")) == [{"seq": 2, "err": message}]
    assert s.stats.policy_errors == 2 and s.stats.errors == 2 and s.stats.ok == 0 and s.stats.calls == 2


@pytest.mark.parametrize(
    "garbage, seq, field",
    [
        ("", 1, "not JSON"),
        ("{\"v\": 1, \"seq\": 7, \"a\": [[", 1, "not JSON"),
        ("[1, 2, 3]", 1, "expected a JSON object"),
        (compact({**doc("request-full.json"), "v": 4}), 1, "v: expected wire version 3"),
        (compact({**doc("request-full.json"), "seq": 12, "nodes": [["n1:45454", "/r1", "8G", 8]]}), 12,
         "nodes[0]: expected [id, rack, MB, vcores, registered MB, registered vcores]"),
        (compact({**doc("request-delta.json"), "base": None}), 2, "base: required when full is false"),
        (compact({**doc("request-full.json"), "extra": 1}), 1, "extra: unknown key"),
        (compact({**doc("request-full.json"), "used": [1, True, 1]}), 1, "used: expected [MB, vcores, containers]"),
        (compact({**doc("request-full.json"), "asks": [[APP1, 10, 1, 1, 1, 1, [["h", -1, 1]]]]}), 1, "asks[0]"),
    ],
    ids=["empty", "cut-off", "array", "version", "node-row-type", "delta-without-base", "unknown-key",
         "bool-as-int", "negative-local-count"],
)
def test_bad_request_answers_err_then_recovers(garbage: str, seq: int, field: str) -> None:
    s = PolicyService(make_policy("fifo"))
    [answer] = _answers(s, garbage)
    assert answer["seq"] == seq and field in answer["err"] and set(answer) == {"seq", "err"}
    # any failed call makes the shim send full state next; a delta gets a resync until it does
    assert _answers(s, compact({**doc("request-delta.json"), "seq": seq + 1, "base": seq})) == \
        [{"seq": seq + 1, "resync": True}]
    assert "a" in _answers(s, compact({**doc("request-full.json"), "seq": seq + 2}))[0]
    assert s.stats.errors == 1 and s.stats.resync == 1 and s.stats.ok == 1


def test_unreadable_seq_guesses_the_next_one() -> None:
    s = PolicyService(make_policy("fifo"))
    _answers(s, text("request-full.json"), text("request-delta.json"))
    assert _answers(s, "not json") == [{"seq": 3, "err": "bad request: request: not JSON "
                                                       "(invalid literal, expected 'null': line 1 column 1 (char 0))"}]


def test_huge_request_is_refused_without_decoding_and_serving_continues() -> None:
    s = PolicyService(make_policy("fifo"), max_request_chars=100_000)
    huge = "{" + " " * 200_000 + "}"
    [answer] = _answers(s, huge)
    assert answer["seq"] == 1 and "over the limit of 100000" in answer["err"]
    assert _answers(s, text("request-full.json"))[0]["seq"] == 1


@pytest.fixture
def collector() -> Iterator[None]:
    """Python's collector on and nothing frozen for the test, and left after it as it was found (a full sync freezes the heap)."""
    was_enabled = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_large_full_request_is_served(collector: None) -> None:
    nodes = [[f"n{i}:45454", f"/r{i % 40}", 8192, 8] for i in range(5000)]
    apps = [[f"application_1_{i:05d}", "q", "u", "T", "n", [], i] for i in range(2000)]
    asks = [[a[0], 20, 1024, 1, 5, 1, [[f"n{i}", 1, 1]]] for i, a in enumerate(apps)]
    req = compact({"v": 2, "seq": 1, "full": True, "t": 1, "node": "n7:45454", "used": [0, 0, 0],
                   "nodes": nodes, "apps": apps, "asks": asks})
    s = PolicyService(make_policy("fifo"))
    [answer] = _answers(s, req)
    assert answer == {"seq": 1, "a": [["application_1_00000", 20, 5], ["application_1_00001", 20, 3]]}
    assert s.stats.full_syncs == 1


def test_the_collector_is_held_off_during_a_large_request_only(collector: None) -> None:
    """A full sync is collected once and frozen out of later collections; a delta, or a large request that fails, is not."""
    seen: list[bool] = []

    class Watching(PolicyBase):
        name = "watching"

        def decide(self, snapshot: ClusterSnapshot, node_id: str) -> Decision:
            seen.append(gc.isenabled())
            return Decision()

    class Cycle:
        me: object = None

    nodes = [[f"n{i}:45454", f"/r{i % 40}", 8192, 8] for i in range(3000)]
    full = compact({"v": 2, "seq": 1, "full": True, "t": 1, "node": "n7:45454", "used": [0, 0, 0], "nodes": nodes})
    delta = compact({"v": 2, "seq": 2, "base": 1, "full": False, "t": 2, "node": "n7:45454", "used": [0, 0, 0]})
    assert len(full) > BESIDE_LARGE_CHARS > len(delta)
    s = PolicyService(Watching())
    try:
        cycle = Cycle()
        cycle.me = cycle
        gone = weakref.ref(cycle)
        del cycle
        gc.freeze()  # as the last full sync would have frozen it before it became garbage
        assert _answers(s, full) == [{"seq": 1}] and _answers(s, delta) == [{"seq": 2}]
        assert seen == [False, True] and gc.isenabled()
        assert gone() is None  # the next full sync unfroze and collected it: frozen garbage does not pile up
        frozen = gc.get_freeze_count()
        assert frozen > 3000  # the mirror's nodes, at least
        broken = full.replace('"full":true', '"full":"yes"')
        assert "bad request" in _answers(s, broken)[0]["err"]
        assert gc.isenabled() and gc.get_freeze_count() <= frozen  # no full sync: nothing more frozen (some may be freed)
        gc.unfreeze()
        gc.disable()  # someone else's choice is kept
        assert _answers(s, full.replace('"seq":1', '"seq":3')) == [{"seq": 3}]
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()  # the fixture restores what the test found


def test_later_full_syncs_freeze_without_collecting_until_every_eighth(collector: None) -> None:
    """Only the first full sync and every COLLECT_EVERY-th after it collect: a cycle frozen in between lives until then."""
    class Cycle:
        me: object = None

    nodes = [[f"n{i}:45454", f"/r{i % 40}", 8192, 8] for i in range(3000)]

    def full(seq: int) -> str:
        return compact({"v": 2, "seq": seq, "full": True, "t": 1, "node": "n7:45454", "used": [0, 0, 0], "nodes": nodes})

    s = PolicyService(make_policy("fifo"))
    assert _answers(s, full(1)) == [{"seq": 1}]  # the first: collects
    cycle = Cycle()
    cycle.me = cycle
    gone = weakref.ref(cycle)
    del cycle
    gc.freeze()  # as a sync that froze it alive would have
    for seq in range(2, COLLECT_EVERY + 1):
        assert _answers(s, full(seq)) == [{"seq": seq}]
        assert gone() is not None, f"sync {seq} collected"
    assert gc.isenabled()
    assert _answers(s, full(COLLECT_EVERY + 1)) == [{"seq": COLLECT_EVERY + 1}]
    assert gone() is None  # the bound: frozen garbage lives at most COLLECT_EVERY syncs


def test_a_settled_service_freezes_its_first_full_sync_without_collecting(collector: None) -> None:
    """`settle` (what `yarnctl serve` does before serving) collects the start-up heap, so the first sync only freezes."""
    class Cycle:
        me: object = None

    nodes = [[f"n{i}:45454", f"/r{i % 40}", 8192, 8] for i in range(3000)]
    full = compact({"v": 2, "seq": 1, "full": True, "t": 1, "node": "n7:45454", "used": [0, 0, 0], "nodes": nodes})
    s = PolicyService(make_policy("fifo"))
    early = Cycle()
    early.me = early
    early_gone = weakref.ref(early)
    del early
    s.settle()
    assert early_gone() is None  # garbage at start-up is collected, not frozen
    cycle = Cycle()
    cycle.me = cycle
    gone = weakref.ref(cycle)
    del cycle
    gc.freeze()
    assert _answers(s, full) == [{"seq": 1}]
    assert gone() is not None and gc.isenabled() and gc.get_freeze_count() > 3000  # frozen, not collected


@pytest.mark.parametrize("policy", sorted(REGISTRY))
def test_serving_leaves_no_reference_cycles(collector: None, policy: str) -> None:
    """What lets a full sync freeze without collecting: a sync, deltas and a resync leave nothing for the collector."""
    rm = _FakeRM(200, 50, random.Random(3))
    s = PolicyService(make_policy(policy))
    gc.collect()
    gc.disable()  # the service's own syncs then neither collect nor freeze
    try:
        rm.apply(0, s.decide(rm.full(0)))
        for k in range(300):
            rm.apply(k % 200, s.decide(rm.delta(k % 200, 2)))
        rm.apply(0, s.decide(rm.resync(0)))
        assert s.stats.ok == 302 and s.stats.full_syncs == 2
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_concurrent_calls_are_serialised() -> None:
    s = PolicyService(make_policy("fifo"))
    s.decide(text("request-full.json"))
    answers: list[str] = []
    stray = compact({**doc("request-delta.json"), "seq": 50, "base": 49})  # a late call on another thread

    def call(r: str) -> None:
        answers.append(s.decide(r))

    threads = [threading.Thread(target=call, args=(r,)) for r in [stray] * 20 + [text("request-delta.json")]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers).count('{"seq":50,"resync":true}') == 20
    assert s.mirror.seq == 2 and s.stats.calls == 22 and s.stats.ok == 2


def test_max_am_share_overrides_the_policys_am_limit() -> None:
    # TestFifoScheduler#testHeadroom's cluster: one 4 GB node, AMs of 1 GB and 2 GB waiting; fifo's own
    # limit (half the memory) starts one, stock FifoScheduler's (none, `serve --max-am-share 1`) both
    req = {"v": 2, "seq": 1, "full": True, "t": 1000, "node": "n1:1", "used": [0, 0, 0], "min": [1024, 0],
           "nodes": [["n1:1", "/default-rack", 4096, 4, 4096, 4]],
           "apps": [["application_100_0001", "default", "u", "YARN", "a", [], 1],
                    ["application_200_0002", "default", "u", "YARN", "b", [], 2]],
           "asks": [["application_100_0001", 0, 1024, 0, 1, 1, []], ["application_200_0002", 0, 2048, 0, 1, 1, []]]}
    limited = json.loads(PolicyService(make_policy("fifo")).decide(json.dumps(req)))
    stock = json.loads(PolicyService(make_policy("fifo"), max_am_share=1.0).decide(json.dumps(req)))
    assert limited["a"] == [["application_100_0001", 0, 1]]
    assert stock["a"] == [["application_100_0001", 0, 1], ["application_200_0002", 0, 1]]


def test_served_deltas_write_the_mirror_in_place_unless_a_snapshot_is_held() -> None:
    """Between calls the service holds no snapshot, control-loop ticks and scrapes included, so deltas copy no map."""
    from yarnctl.bridge.mirrorsource import MirrorSource
    from yarnctl.rm.observe import ControlLoop

    rm = _FakeRM(20, 10, random.Random(3))
    service = PolicyService(make_policy("dress"))
    rm.apply(0, service.decide(rm.full(0)))
    loop = ControlLoop(MirrorSource(service), service.tune, 1.0)
    for k in range(200):
        node = (k + 1) % 20
        rm.apply(node, service.decide(rm.delta(node, 2)))
        if k % 50 == 0:  # a control-loop tick and a metrics scrape between two calls
            assert loop.poll().feed_errors == 0 and service.last_snapshot is not None
    assert service.stats.errors == service.stats.resync == 0 and service.mirror.state.copies == 0
    held = service.last_snapshot  # e.g. a scrape still reading it when the next call comes
    assert held is not None
    seen = ({n: len(cs) for n, cs in held.node_containers.items()}, dict(held.app_allocated),
            dict(held.queue_allocated), {a: dict(p) for a, p in held.priority_allocated.items()}, dict(held.nodes))
    rm.apply(1, service.decide(rm.delta(1, 2)))
    assert service.mirror.state.copies > 0 and service.stats.errors == 0
    assert ({n: len(cs) for n, cs in held.node_containers.items()}, dict(held.app_allocated),
            dict(held.queue_allocated), {a: dict(p) for a, p in held.priority_allocated.items()}, dict(held.nodes)) == seen
