"""Hot policy swap in PolicyService: shadow, canary, take-over, drop, cancel and rollback, audited in the decision log."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from wirefixtures import STATE, text

from yarnctl.bridge.decisionlog import DecisionLog, LogReader
from yarnctl.bridge.replay import replay
from yarnctl.bridge.service import PolicyService
from yarnctl.bridge.swap import SwapPlan, in_canary
from yarnctl.errors import ConfigError
from yarnctl.model import ClusterSnapshot, Decision
from yarnctl.policies import make_policy
from yarnctl.policies.contract import PolicyBase


class Boom(PolicyBase):
    name = "boom"

    def decide(self, snap: ClusterSnapshot, node_id: str) -> Decision:
        raise RuntimeError("no")


class Slow(PolicyBase):
    name = "slow"

    def decide(self, snap: ClusterSnapshot, node_id: str) -> Decision:
        time.sleep(0.003)
        return Decision()


def _service(tmp_path: Path, policy: str = "fifo") -> tuple[PolicyService, DecisionLog]:
    dlog = DecisionLog(tmp_path / "d.jsonl")
    return PolicyService(make_policy(policy), dlog), dlog


def _records(dlog: DecisionLog) -> list[dict[str, Any]]:
    dlog.close()
    return [json.loads(line) for line in dlog.path.read_text().splitlines()]


def _fifo_answers() -> list[dict[str, Any]]:
    s = PolicyService(make_policy("fifo"))
    return [json.loads(s.decide(text(n))) for n in STATE]


def test_shadow_then_active_leaves_the_answers_alone_and_logs_each_phase(tmp_path: Path) -> None:
    s, dlog = _service(tmp_path)
    first = json.loads(s.decide(text(STATE[0])))
    started = s.control({"command": "set", "plan": {"policy": "drf", "check_calls": 2}})["event"]
    assert started["event"] == "shadow" and started["candidate"] == "drf" and s.policy_name == "fifo"
    rest = [json.loads(s.decide(text(n))) for n in STATE[1:]]
    s.check_swap()  # the status tick settles the candidate
    assert [first, *rest] == _fifo_answers()  # shadowed decisions are logged, not applied
    assert s.policy_name == "drf" and s.candidate is None and s.previous is not None
    recs = _records(dlog)
    assert [r.get("event") or r["policy"] for r in recs] == ["fifo", "shadow", "fifo", "fifo", "active"]
    shadows = [r["shadow"] for r in recs if "shadow" in r]
    assert [sh["policy"] for sh in shadows] == ["drf", "drf"] and all(not sh["same"] for sh in shadows)
    # drf serves bob's AM where fifo gave alice her maps
    assert shadows[0]["assign"] == [["application_1700000000000_0002", 0, 1]]
    active = recs[-1]
    assert (active["calls"], active["differ"], active["rejected"]) == (2, 2, 0)
    # the reader and replay skip the events
    reader = LogReader(dlog.path)
    assert len(list(reader)) == 3 and reader.events == 2
    assert replay(dlog.path, make_policy("fifo")).differ == 0


def test_a_candidate_that_raises_is_dropped_at_once(tmp_path: Path) -> None:
    s, dlog = _service(tmp_path)
    s.decide(text(STATE[0]))
    from yarnctl.bridge import service as svc

    # a policy outside the registry, so built here rather than by `yarnctl policy set`
    boom = svc.Recording(Boom())
    s.candidate = svc.Candidate(SwapPlan("boom", check_calls=5), boom, s._engine(boom), None, "fifo")
    answer = json.loads(s.decide(text(STATE[1])))
    s.check_swap()  # the status tick settles the candidate
    assert answer == _fifo_answers()[1] and s.candidate is None and s.policy_name == "fifo"
    recs = _records(dlog)
    assert recs[-1]["event"] == "dropped" and "boom raised RuntimeError: no" in recs[-1]["why"]
    assert recs[-2]["shadow"] == {"policy": "boom", "phase": "shadow", "error": "policy boom raised RuntimeError: no"}


def test_a_slow_candidate_is_dropped_at_the_end_of_its_window(tmp_path: Path) -> None:
    from yarnctl.bridge import service as svc

    s, dlog = _service(tmp_path)
    slow = svc.Recording(Slow())
    s.candidate = svc.Candidate(SwapPlan("slow", check_calls=2, check_s=None, max_latency_ms=1.0), slow,
                                s._engine(slow), None, "fifo")
    for n in STATE[:2]:
        s.decide(text(n))
    s.check_swap()  # the status tick settles the candidate
    ev = _records(dlog)[-1]
    assert ev["event"] == "dropped" and "over the 1 ms limit" in ev["why"] and s.policy_name == "fifo"
    assert ev["p95_us"] >= 3000


def test_canary_nodes_take_the_candidates_decision(tmp_path: Path) -> None:
    s, dlog = _service(tmp_path)
    nodes = ["n1:45454", "n2:45454"]
    share = 0.9999
    assert all(in_canary(n, share) for n in nodes)  # crc32 buckets of the fixture's two nodes
    s.control({"command": "set", "plan": {"policy": "drf", "check_calls": 3, "canary": share}})
    answers = [json.loads(s.decide(text(n))) for n in STATE]
    s.check_swap()  # the status tick settles the candidate
    assert answers[0] != _fifo_answers()[0] or answers[1] != _fifo_answers()[1]
    recs = [r for r in _records(dlog) if "seq" in r]
    assert [r["policy"] for r in recs] == ["drf", "drf", "drf"] and all("shadow" not in r for r in recs)
    assert s.policy_name == "drf" and s.swaps[-1]["applied"] == 3


def test_rollback_cancels_a_check_returns_to_the_previous_policy_and_toggles(tmp_path: Path) -> None:
    s, dlog = _service(tmp_path)
    with pytest.raises(ConfigError, match="nothing to roll back to: fifo has served since the server started"):
        s.rollback()
    s.control({"command": "set", "plan": {"policy": "drf"}})
    with pytest.raises(ConfigError, match="drf is under check since 0 s"):
        s.control({"command": "set", "plan": {"policy": "fair"}})
    assert s.rollback()["event"] == "cancelled" and s.candidate is None and s.policy_name == "fifo"
    s.control({"command": "set", "plan": {"policy": "drf", "check_calls": 1}})
    s.decide(text(STATE[0]))
    s.check_swap()  # the status tick settles the candidate
    assert s.policy_name == "drf"
    assert s.rollback()["event"] == "rolled-back" and s.policy_name == "fifo"
    assert s.rollback()["why"] == "from fifo" and s.policy_name == "drf"
    assert json.loads(s.decide(text(STATE[1])))["seq"] == 2
    assert [r["event"] for r in _records(dlog) if "event" in r] == [
        "shadow", "cancelled", "shadow", "active", "rolled-back", "rolled-back"]


def test_a_time_window_ends_at_the_status_tick_without_calls(tmp_path: Path) -> None:
    s, _ = _service(tmp_path)
    s.decide(text(STATE[0]))
    s.control({"command": "set", "plan": {"policy": "drf", "check_s": 0}})
    s.check_swap()
    assert s.policy_name == "fifo"  # no call decided yet: nothing to judge it by
    s.decide(text(STATE[1]))
    s.check_swap()  # the status tick settles the candidate
    assert s.policy_name == "drf"


def test_a_stateful_policy_is_saved_before_it_is_swapped_out_and_loaded_when_swapped_in(tmp_path: Path) -> None:
    state = tmp_path / "hmrf.json"
    s = PolicyService(make_policy("hmrf"), state_file=state, state_path=lambda p: tmp_path / f"{p.name}.json")
    for n in STATE:
        s.decide(text(n))
    s.control({"command": "set", "plan": {"policy": "fifo", "check_calls": 1}})
    s.decide(text(STATE[0]))
    s.check_swap()  # the status tick settles the candidate
    assert s.policy_name == "fifo" and s.state_file is None
    saved = json.loads(state.read_text())
    assert saved["policy"] == "hmrf"
    s.control({"command": "set", "plan": {"policy": "hmrf", "check_calls": 1}})
    assert s.candidate is not None and s.candidate.state_file == state
    assert s.candidate.policy.save_state() == saved["state"]


@pytest.mark.parametrize("plan, message", [
    ({}, "policy: expected a policy name"),
    ({"policy": "nope"}, "unknown policy 'nope'"),
    ({"policy": "dress", "params": {"initial_reserve": 2}}, "initial_reserve"),
    ({"policy": "drf", "params": [1]}, "params: expected a mapping"),
    ({"policy": "drf", "check_calls": 0}, "check_calls 0"),
    ({"policy": "drf", "check_calls": 5, "check_s": 3}, "not both"),
    ({"policy": "drf", "check_s": -1}, "check_s -1"),
    ({"policy": "drf", "canary": 1}, "canary 1"),
    ({"policy": "drf", "max_latency_ms": 0}, "max_latency_ms 0"),
])
def test_a_bad_plan_is_one_clear_error_and_changes_nothing(tmp_path: Path, plan: dict[str, Any],
                                                          message: str) -> None:
    s, _ = _service(tmp_path)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        s.control({"command": "set", "plan": plan})
    assert s.candidate is None and s.policy_name == "fifo" and not s.swaps


def test_unknown_command(tmp_path: Path) -> None:
    s, _ = _service(tmp_path)
    with pytest.raises(ConfigError, match="unknown command 'go'; expected show, set, rollback or state"):
        s.control({"command": "go"})


class Malformed(PolicyBase):
    name = "malformed"

    def decide(self, snap: ClusterSnapshot, node_id: str) -> Decision:
        return Decision(assignments=("junk",))  # type: ignore[arg-type]


class BadTune(PolicyBase):
    name = "badtune"

    def decide(self, snap: ClusterSnapshot, node_id: str) -> Decision:
        return Decision()

    def tune(self, obs: Any) -> None:
        raise ValueError("cannot read it")

    def tuning(self) -> dict[str, float]:
        return {}


def _candidate(s: PolicyService, policy: PolicyBase, **plan: Any) -> None:
    """A policy outside the registry as the candidate (`yarnctl policy set` builds registered ones)."""
    from yarnctl.bridge import service as svc

    rec = svc.Recording(policy)
    s.candidate = svc.Candidate(SwapPlan(policy.name, **plan), rec, s._engine(rec), None, s.policy_name)


def test_a_broken_serving_policy_can_be_swapped_out(tmp_path: Path) -> None:
    s = PolicyService(Boom())
    s.control({"command": "set", "plan": {"policy": "fifo", "check_calls": 2}})
    answers = [json.loads(s.decide(text(n))) for n in STATE[:2]]
    s.check_swap()  # the status tick settles the candidate
    assert all("err" in a for a in answers)  # the shim decides natively meanwhile
    assert s.policy_name == "fifo" and s.swaps[-1]["event"] == "active"
    assert "a" in json.loads(s.decide(text(STATE[2])))


def test_a_canary_with_a_malformed_decision_is_dropped_and_the_serving_policy_answers(tmp_path: Path) -> None:
    s, dlog = _service(tmp_path)
    _candidate(s, Malformed(), check_calls=5, canary=0.9999)
    answer = json.loads(s.decide(text(STATE[0])))
    s.check_swap()  # the status tick settles the candidate
    assert answer == _fifo_answers()[0] and s.candidate is None and s.stats.errors == 0
    recs = _records(dlog)
    assert recs[0]["policy"] == "fifo" and "shadow" not in recs[0]  # it failed once, and is not run again
    assert recs[1]["event"] == "dropped" and "canary malformed failed" in recs[1]["why"]


def test_a_candidate_that_cannot_take_in_observations_is_dropped(tmp_path: Path) -> None:
    from yarnctl.model import Observation

    s, _ = _service(tmp_path)
    _candidate(s, BadTune(), check_calls=1)
    s.tune(Observation(at_s=1.0, nodes=(), apps=(), containers=()))
    s.decide(text(STATE[0]))
    s.check_swap()  # the status tick settles the candidate
    assert s.policy_name == "fifo" and "badtune failed to take in a control-loop observation" in s.swaps[-1]["why"]


def test_a_policy_swapped_for_itself_with_new_parameters_keeps_its_history(tmp_path: Path) -> None:
    state = tmp_path / "hmrf.json"
    s = PolicyService(make_policy("hmrf"), state_file=state, state_path=lambda p: state)
    for n in STATE:
        s.decide(text(n))
    s.control({"command": "set", "plan": {"policy": "hmrf", "params": {"window_s": 120}, "check_calls": 1}})
    s.decide(text(STATE[0]))
    s.check_swap()  # the status tick settles the candidate
    assert s.policy_name == "hmrf" and s.active.params == {"window_s": 120}
    # the outgoing one's history, saved at the swap and handed over in memory: the same accounts
    saved = json.loads(state.read_text())["state"]["accounts"]
    assert saved and s.engine.policy.save_state()["accounts"] == saved  # type: ignore[attr-defined]


def test_a_canary_of_the_same_policy_is_neither_shadowed_nor_explained_as_the_serving_one(tmp_path: Path) -> None:
    """fifo swapped for fifo at every node: the canary's answers are the candidate's, not shadowed against itself."""
    s, dlog = _service(tmp_path)
    s.control({"command": "set", "plan": {"policy": "fifo", "check_calls": 3, "canary": 0.9999}})
    for n in STATE:
        s.decide(text(n))
    s.check_swap()
    recs = [r for r in _records(dlog) if "seq" in r]
    assert [r["policy"] for r in recs] == ["fifo"] * 3 and all("shadow" not in r for r in recs)
    assert s.swaps[-1]["applied"] == 3 and s.swaps[-1]["calls"] == 3 and s.swaps[-1]["differ"] == 0
