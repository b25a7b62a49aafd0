"""The work beside an answer (shadow decision, explanation, decision-log row) done after the answer has gone, in order."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from wirefixtures import STATE, text

from yarnctl.bridge.decisionlog import DecisionLog
from yarnctl.bridge.service import PolicyService
from yarnctl.bridge.waits import WaitBook
from yarnctl.policies import make_policy


class HeldLog(DecisionLog):
    """A decision log whose first row write blocks until released (fault injection: a slow disk)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.entered, self.release = threading.Event(), threading.Event()

    def write(self, *args: Any, **kwargs: Any) -> None:
        self.entered.set()
        assert self.release.wait(30), "the test never released the write"
        super().write(*args, **kwargs)


def _rows(path: Path) -> list[dict[str, Any]]:
    """The log's rows without what differs between two runs (wall-clock time, latencies, lock waits)."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        for k in ("t", "at", "us", "waited_us", "elapsed_s", "p95_us"):
            r.pop(k, None)
        r.get("shadow", {}).pop("us", None)
    return rows


def test_the_answer_does_not_wait_for_its_decision_log_row(tmp_path: Path) -> None:
    dlog = HeldLog(tmp_path / "d.jsonl")
    s = PolicyService(make_policy("fifo"), dlog, beside_thread=True)
    answer = json.loads(s.decide(text(STATE[0])))  # returns while the worker is stuck in the row's write
    assert answer["seq"] == 1 and answer["a"]
    assert dlog.entered.wait(30)  # the worker is in the row's write, and the answer is out
    dlog.release.set()
    s.close()
    dlog.close()
    assert [r["seq"] for r in _rows(dlog.path)] == [1]


def test_a_row_written_late_keeps_the_time_of_its_answer(tmp_path: Path) -> None:
    dlog = HeldLog(tmp_path / "d.jsonl")
    s = PolicyService(make_policy("fifo"), dlog, beside_thread=True)
    s.decide(text(STATE[0]))
    answered_ms = time.time_ns() // 1_000_000
    assert dlog.entered.wait(30)
    time.sleep(0.3)  # the row is written 300 ms after its answer
    dlog.release.set()
    s.close()
    dlog.close()
    row = json.loads(dlog.path.read_text())
    assert row["t"] <= answered_ms < row["t"] + 300


def test_the_worker_logs_what_inline_work_logs_in_the_same_order(tmp_path: Path) -> None:
    def run(beside_thread: bool) -> list[dict[str, Any]]:
        dlog = DecisionLog(tmp_path / f"{beside_thread}.jsonl")
        s = PolicyService(make_policy("fifo"), dlog, beside_thread=beside_thread)
        s.decide(text(STATE[0]))
        # shadowed from here on; no latency bar: on a busy machine one slow shadowed call would drop the swap
        s.control({"command": "set", "plan": {"policy": "drf", "check_calls": 2, "max_latency_ms": 1e6}})
        for name in STATE[1:]:
            s.decide(text(name))
        s.check_swap()  # drf takes over after its two shadowed calls
        s.decide(text(STATE[0]))  # a full sync decided by drf
        s.close()
        dlog.close()
        return _rows(dlog.path)

    inline, worker = run(False), run(True)
    assert [r.get("event") or r["policy"] for r in worker] == ["fifo", "shadow", "fifo", "fifo", "active", "drf"]
    assert [sh["policy"] for sh in (r.get("shadow") for r in worker) if sh] == ["drf", "drf"]
    assert worker == inline


def test_a_call_after_close_still_logs_its_row(tmp_path: Path) -> None:
    """py4j does not wait for a call in flight when the server stops: its row is written at once."""
    dlog = DecisionLog(tmp_path / "d.jsonl")
    s = PolicyService(make_policy("fifo"), dlog, beside_thread=True)
    s.decide(text(STATE[0]))
    s.close()
    s.decide(text(STATE[1]))
    dlog.close()
    assert [r["seq"] for r in _rows(dlog.path)] == [1, 2]


def test_cheap_work_waits_for_the_next_call_and_a_shadow_is_done_at_once(tmp_path: Path, monkeypatch: Any) -> None:
    """Waking the worker at every answer costs the shim's throughput: only a shadow decision wakes it."""
    monkeypatch.setattr("yarnctl.bridge.service.BESIDE_IDLE_S", 30.0)  # no idle flush within the test
    dlog = DecisionLog(tmp_path / "d.jsonl")
    s = PolicyService(make_policy("fifo"), dlog, beside_thread=True, waits=WaitBook(top=0))  # nothing to explain
    s.decide(text(STATE[0]))
    time.sleep(0.2)
    dlog.flush()
    assert dlog.path.read_text() == ""  # the row is the next call's to write
    s.control({"command": "set", "plan": {"policy": "drf", "check_calls": 5}})  # shadowed from here on
    s.decide(text(STATE[1]))
    deadline = time.monotonic() + 10
    while len(_rows_now(dlog)) < 3 and time.monotonic() < deadline:  # fifo's row, the shadow event, this row
        time.sleep(0.01)
    assert [r.get("event") or r["policy"] for r in _rows_now(dlog)] == ["fifo", "shadow", "fifo"]
    assert _rows_now(dlog)[-1]["shadow"]["policy"] == "drf"  # written by the worker, no call since
    s.close()
    dlog.close()


def _rows_now(dlog: DecisionLog) -> list[dict[str, Any]]:
    dlog.flush()
    return [json.loads(line) for line in dlog.path.read_text().splitlines()]


def _first_row_without_another_call(dlog: DecisionLog, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if _rows_now(dlog):
            return True
        time.sleep(0.005)
    return False


def test_left_over_work_is_done_within_the_idle_time_when_no_call_comes(tmp_path: Path) -> None:
    dlog = DecisionLog(tmp_path / "d.jsonl")
    s = PolicyService(make_policy("fifo"), dlog, beside_thread=True, waits=WaitBook(top=0))
    s.decide(text(STATE[0]))
    assert _first_row_without_another_call(dlog, 1.0)  # BESIDE_IDLE_S is 50 ms
    s.close()
    dlog.close()


def test_an_explanation_falling_due_or_a_large_request_wakes_the_worker_at_once(tmp_path: Path,
                                                                                 monkeypatch: Any) -> None:
    """Costly beside-work (WaitBook's explanation, a big request's row) is done between calls, not by the next one."""
    monkeypatch.setattr("yarnctl.bridge.service.BESIDE_IDLE_S", 30.0)
    dlog = DecisionLog(tmp_path / "due.jsonl")
    s = PolicyService(make_policy("fifo"), dlog, beside_thread=True)  # the first call's explanation is due
    s.decide(text(STATE[0]))
    assert _first_row_without_another_call(dlog, 10.0)
    s.close()
    dlog.close()
    monkeypatch.setattr("yarnctl.bridge.service.BESIDE_LARGE_CHARS", len(text(STATE[0])) - 1)
    dlog = DecisionLog(tmp_path / "large.jsonl")
    s = PolicyService(make_policy("fifo"), dlog, beside_thread=True, waits=WaitBook(top=0))
    s.decide(text(STATE[0]))
    assert _first_row_without_another_call(dlog, 10.0)
    s.close()
    dlog.close()
