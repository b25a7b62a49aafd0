"""The floor server's service: an empty decision for the request's seq, after its CPU time."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from wirefixtures import STATE, text

from yarnctl.bridge import floor
from yarnctl.bridge.floor import FloorService
from yarnctl.bridge.response import parse_response


def test_it_answers_nothing_for_the_requests_seq_after_its_busy_time() -> None:
    f = FloorService(busy_us=2000)
    t0 = time.perf_counter()
    answer = f.decide(text(STATE[0]))
    assert time.perf_counter() - t0 >= 0.002
    assert json.loads(answer) == {"seq": json.loads(text(STATE[0]))["seq"]}
    assert parse_response(answer).a == () and f.calls == 1


def test_a_request_without_a_seq_gets_an_error_the_shim_falls_back_on() -> None:
    answer = json.loads(FloorService(busy_us=0).decide("not json"))
    assert answer == {"seq": 1, "err": "bad request: no seq"}


@pytest.mark.parametrize("busy, problem", [("-3", "expected 0 or more, got -3"), ("x", "expected microseconds, got 'x'")])
def test_a_bad_busy_time_is_one_line(busy: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        floor.main(["--token-file", str(tmp_path / "token"), "--busy-us", busy])
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(f"error: argument --busy-us: {problem}")
    assert not (tmp_path / "token").exists()  # refused before anything was created
