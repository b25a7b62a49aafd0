"""The policy server's book of why pending apps wait: when it explains, what it keeps, and where it shows."""

from __future__ import annotations

import json
from pathlib import Path

from snapshots import GB, snapshot
from wirefixtures import APP1, APP2, STATE, text

from yarnctl.bridge.decisionlog import DecisionLog, LogReader
from yarnctl.bridge.service import PolicyService
from yarnctl.bridge.waits import WaitBook
from yarnctl.engine import Engine
from yarnctl.model import App, Ask, Assignment, Decision
from yarnctl.policies import make_policy
from yarnctl.policies.contract import PolicyBase


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


APPS = [App(f"a{i}", submit_s=float(i)) for i in range(4)]
NODES = [("n1", GB(4, 4))]


def _book(**kw):
    clock = Clock()
    return WaitBook(clock=clock, wall=lambda: 1000.0 + clock.t, **kw), clock


def test_it_explains_at_most_every_interval_the_oldest_apps_and_keeps_the_last_few():
    book, clock = _book(top=2, every_s=0.5, keep=3)
    e = Engine(make_policy("fifo"))
    snap = snapshot(NODES, APPS, [Ask(a.id, 20, GB(8), 1) for a in APPS])  # nothing fits: every app waits
    assert set(book.record(e, snap, "n1", Decision())) == {"a0", "a1"}  # the two oldest
    clock.t = 0.2
    assert book.record(e, snap, "n1", Decision()) == {}  # not due
    for t in (0.5, 1.0, 1.5, 2.0):
        clock.t = t
        book.record(e, snap, "n1", Decision())
    kept = book.latest["a0"]
    assert [x.at for x in kept] == [1000.0 + t for t in (1.0, 1.5, 2.0)]  # the last 3 of 5
    assert {x.wait.code.value for x in kept} == {"too-large"}
    assert book.by_reason() == {"too-large": 2} and book.explained == 10
    assert json.loads(json.dumps(book.as_status()))["a1"][-1]["values"]["ask_mb"] == 8192


def test_an_app_served_leaves_the_book_at_once_even_between_explanations():
    book, clock = _book(every_s=10.0)
    e = Engine(make_policy("fifo"))
    snap = snapshot(NODES, APPS[:2], [Ask("a0", 20, GB(4), 1), Ask("a1", 20, GB(1), 1)])
    got = book.record(e, snap, "n1", e.decide(snap, "n1").accepted)
    assert set(got) == {"a1"} and got["a1"].code.value == "behind"
    clock.t = 1.0
    book.record(e, snap, "n1", Decision((Assignment("a1", 20, "n1", 1),)))
    assert book.latest == {}


def test_the_service_explains_logs_and_survives_a_failing_explanation(tmp_path: Path):
    dlog = DecisionLog(tmp_path / "d.jsonl")
    s = PolicyService(make_policy("fifo"), decision_log=dlog)
    s.decide(text(STATE[0]))  # FIFO serves alice (APP1); bob (APP2) waits behind her
    assert s.waits.latest[APP2][-1].wait.code.value == "behind"
    assert s.waits.latest[APP2][-1].wait.values["served"] == APP1

    class Mute(PolicyBase):
        name = "mute"

        def decide(self, snap, node_id):
            return Decision()

        def why_waiting(self, snap, node_id, app_id, decision):
            raise RuntimeError("no words")

    bad = PolicyService(Mute(), decision_log=dlog)
    answer = json.loads(bad.decide(text(STATE[0])))
    assert answer == {"seq": 1} and bad.stats.errors == 0  # the decision stands
    assert bad.waits.latest[APP1][-1].wait.code.value == "held"  # the engine says so in its place
    dlog.close()
    records = list(LogReader(tmp_path / "d.jsonl"))
    assert records[0]["waiting"][APP2]["code"] == "behind"
    assert records[1]["waiting"][APP1]["text"] == "mute placed nothing on n1:45454 (it failed to say why)"


def test_explain_errors_are_counted_and_the_decision_stands(monkeypatch):
    s = PolicyService(make_policy("fifo"))

    def boom(*a, **k):
        raise ValueError("bug")

    monkeypatch.setattr(s.waits, "record", boom)
    answer = json.loads(s.decide(text(STATE[0])))
    assert answer["a"] and s.stats.explain_errors == 1 and s.stats.errors == 0


def test_a_due_call_stops_at_its_budget_and_the_next_goes_on_from_there():
    clock, ticks = Clock(), iter(range(1000))
    book = WaitBook(top=4, every_s=0.5, budget_s=0.5, clock=clock, wall=lambda: 0.0, timer=lambda: float(next(ticks)))
    e = Engine(make_policy("fifo"))
    snap = snapshot(NODES, APPS, [Ask(a.id, 20, GB(8), 1) for a in APPS])
    seen = []
    for t in range(4):
        clock.t = t * 0.5
        seen.append(sorted(book.record(e, snap, "n1", Decision())))
    assert seen == [["a0"], ["a1"], ["a2"], ["a3"]]  # each due call's budget holds one explanation
    assert sorted(book.latest) == ["a0", "a1", "a2", "a3"]  # the others keep their last reasons
