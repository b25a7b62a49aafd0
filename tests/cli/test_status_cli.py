"""`yarnctl status` against a real HTTP server answering with RM responses recorded from a live 2.7.7 RM."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixturerm import FIXTURES, FixtureRM

from yarnctl.cli.main import main

SERVE = {"pid": 4242, "policy": "dress", "uptime_s": 312.0, "decisions_per_s": 3.5, "calls": 1234, "errors": 1,
         "rejected": 2, "p99_us_le": 500, "tuning": {"dress_reserve_ratio": 0.25},
         "control_loop": {"rm": "http://rm:8088", "interval_s": 5.0, "stale": False, "error": "", "age_s": 1.5,
                          "containers_measured": 3}}


@pytest.fixture
def rm() -> Iterator[FixtureRM]:
    server = FixtureRM()
    yield server
    server.stop()


def _status(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["status", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, doc: dict[str, Any], age_s: float = 0.0) -> Path:
    path.write_text(json.dumps(doc))
    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def test_status_shows_nodes_queue_apps_shim_and_serve(capsys: pytest.CaptureFixture[str], rm: FixtureRM,
                                                      tmp_path: Path) -> None:
    serve = _write(tmp_path / "s.json", SERVE)
    code, out, err = _status(capsys, "--rm", rm.url, "--serve-status", str(serve))
    assert code == 0 and err == ""
    nodes = json.loads((FIXTURES / "nodes_running.json").read_text())["nodes"]["node"]
    app = json.loads((FIXTURES / "apps_running.json").read_text())["apps"]["app"][0]
    for n in nodes:
        assert n["id"] in out
    assert app["id"] in out and app["name"] in out and f"{app['memorySeconds']:,}" in out
    assert "ResourceManager ACTIVE, Hadoop 2.7.7" in out
    assert "default (fifo)" in out
    assert "dress serving · pid 4242 · up 5m12s · 3.5 decisions/s · calls 1,234" in out
    assert "dress_reserve_ratio=0.25" in out
    assert "fresh · polls http://rm:8088 every 5 s · last good 1.5 s ago · 3 containers measured" in out
    assert "breaker closed" in out and "heartbeats 11 by policy" in out


def test_tuning_values_not_finite_show_as_dash_and_inf(capsys: pytest.CaptureFixture[str], rm: FixtureRM,
                                                       tmp_path: Path) -> None:
    """serve writes a NaN tuning value as null and an infinite one as "inf" (strict JSON); status took the file for
    one it cannot read."""
    serve = _write(tmp_path / "s.json", {**SERVE, "tuning": {"hmrf_beta{queue=\"a\"}": None, "hmrf_beta{queue=\"b\"}": "inf",
                                                            "z": 0.5}})
    code, out, err = _status(capsys, "--rm", rm.url, "--serve-status", str(serve))
    assert code == 0 and err == ""
    assert 'hmrf_beta{queue="a"}=-, hmrf_beta{queue="b"}=inf, z=0.5' in out, out


def test_an_old_or_stopped_status_file_is_not_running(capsys: pytest.CaptureFixture[str], rm: FixtureRM,
                                                      tmp_path: Path) -> None:
    old = _write(tmp_path / "old.json", SERVE, age_s=60)
    assert "not running" in _status(capsys, "--rm", rm.url, "--serve-status", str(old))[1]
    stopped = _write(tmp_path / "stopped.json", {**SERVE, "stopped": time.time()})
    assert "not running" in _status(capsys, "--rm", rm.url, "--serve-status", str(stopped))[1]
    missing = tmp_path / "none.json"
    assert f"no yarnctl serve status at {missing}" in _status(capsys, "--rm", rm.url, "--serve-status", str(missing))[1]


def test_a_stale_control_loop_says_why(capsys: pytest.CaptureFixture[str], rm: FixtureRM, tmp_path: Path) -> None:
    doc = {**SERVE, "control_loop": {**SERVE["control_loop"], "stale": True, "age_s": 42.0,  # type: ignore[dict-item]
                                     "error": "no ResourceManager answered"}}
    out = _status(capsys, "--rm", rm.url, "--serve-status", str(_write(tmp_path / "s.json", doc)))[1]
    assert "STALE · polls http://rm:8088 every 5 s · last good 42 s ago" in out
    assert "no ResourceManager answered" in out


def test_json(capsys: pytest.CaptureFixture[str], rm: FixtureRM, tmp_path: Path) -> None:
    code, out, _ = _status(capsys, "--rm", rm.url, "--serve-status", str(_write(tmp_path / "s.json", SERVE)),
                           "--json")
    doc = json.loads(out)
    assert code == 0
    assert len(doc["nodes"]) == 2 and doc["apps"][0]["id"].startswith("application_")
    assert doc["metrics"]["total"] == {"memory_mb": 8192, "vcores": 8}
    assert doc["serve"]["running"] is True and doc["shim"]["breaker_open"] is False


def test_unreachable_rm_is_one_line(capsys: pytest.CaptureFixture[str], rm: FixtureRM) -> None:
    rm.stop()
    code, out, err = _status(capsys, "--rm", rm.url)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert rm.url in err and "Connection refused" in err


def test_rm_from_the_environment(capsys: pytest.CaptureFixture[str], rm: FixtureRM,
                                 monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("YARNCTL_RM", rm.url)
    code, out, _ = _status(capsys, "--serve-status", str(tmp_path / "none.json"))
    assert code == 0 and rm.url in out


@pytest.mark.parametrize("every", ["0", "inf"])
def test_bad_watch_interval(capsys: pytest.CaptureFixture[str], rm: FixtureRM, every: str) -> None:
    with pytest.raises(SystemExit) as stop:
        _status(capsys, "--rm", rm.url, "--watch", every)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"argument --watch: expected a finite number of seconds > 0, got {every}" in err


WAITING = {"application_1_0002": [
    {"at": 1700000000.0, "node": "n1:45454", "code": "behind", "text": "dress served application_1_0001 first", "values": {}},
    {"at": 1700000000.5, "node": "n2:45454", "code": "dress-reserve",
     "text": "its category LD may hold 80.0% of the cluster (δ = 0.200) and holds 80.0%; its ask needs 6.2% more",
     "values": {"delta": 0.2}}]}


def test_status_lists_why_the_oldest_pending_apps_wait(capsys: pytest.CaptureFixture[str], rm: FixtureRM,
                                                       tmp_path: Path) -> None:
    serve = _write(tmp_path / "s.json", {**SERVE, "waiting": WAITING})
    code, out, _ = _status(capsys, "--rm", rm.url, "--serve-status", str(serve))
    assert code == 0 and "WAITING APP" in out
    assert "application_1_0002  dress-reserve  its category LD may hold 80.0%" in " ".join(out.split("\n"))


def test_explain_prints_the_latest_reasons(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    serve = _write(tmp_path / "s.json", {**SERVE, "waiting": WAITING})
    assert main(["explain", "application_1_0002", "--serve-status", str(serve)]) == 0
    out = capsys.readouterr().out
    assert "why application_1_0002 waits under dress" in out
    assert out.index("behind") < out.index("dress-reserve")  # latest last
    assert main(["explain", "application_1_0002", "--serve-status", str(serve), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["policy"] == "dress" and [r["code"] for r in doc["waiting"]] == ["behind", "dress-reserve"]


def test_explain_an_app_not_waiting_or_no_server(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    serve = _write(tmp_path / "s.json", {**SERVE, "waiting": WAITING})
    assert main(["explain", "application_9_0009", "--serve-status", str(serve)]) == 1
    err = capsys.readouterr().err
    assert "application_9_0009 is not waiting at the policy server's latest look" in err
    assert "waiting now: application_1_0002" in err
    old = _write(tmp_path / "old.json", {**SERVE, "waiting": WAITING}, age_s=60)
    assert main(["explain", "application_1_0002", "--serve-status", str(old)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no running yarnctl serve at") and "\n" not in err


def test_status_shows_a_swap_under_check_then_the_last_one(capsys: pytest.CaptureFixture[str], rm: FixtureRM,
                                                           tmp_path: Path) -> None:
    from yarnctl.bridge.swap import SwapPlan

    plan = SwapPlan("drf", check_calls=50, check_s=None).as_doc()
    cand = {"policy": "drf", "phase": "shadow", "replacing": "dress", **plan, "started": time.time(),
            "elapsed_s": 3.0, "calls": 12, "applied": 0, "differ": 4, "rejected": 0, "p95_us": 310, "failure": None}
    doc = {**SERVE, "swap": {"policy": "dress", "candidate": cand, "previous": None, "events": []}}
    out = _status(capsys, "--rm", rm.url, "--serve-status", str(_write(tmp_path / "s.json", doc)))[1]
    assert "drf in shadow: 12/50 heartbeats, 12 calls, 4 decided otherwise, 0 refused, p95 0.31 ms" in out
    active = {"at": time.time(), "event": "active", "policy": "drf", "candidate": "drf", "replacing": "dress",
              "plan": plan, "calls": 50, "differ": 9, "rejected": 0, "p95_us": 400, "elapsed_s": 20.0}
    doc = {**SERVE, "policy": "drf", "swap": {"policy": "drf", "candidate": None, "previous": "dress",
                                               "events": [active]}}
    out = _status(capsys, "--rm", rm.url, "--serve-status", str(_write(tmp_path / "s.json", doc)))[1]
    assert "active: drf active, replacing dress (50 calls in 20.0 s, 9 decided otherwise" in out
    assert "rollback to dress" in out


@pytest.mark.parametrize("change, why", [
    ({"calls": "many"}, "calls: expected an integer"), ({"pid": None}, "pid: expected"),
    ({"tuning": {"d": "x"}}, "(ValueError: "), ({"control_loop": {"stale": True, "age_s": "old"}}, "(ValueError: "),
    ({"waiting": {"app": [5]}}, "waiting.app[0]: expected a mapping"),
], ids=["calls-word", "pid-null", "tuning-word", "age-word", "reason-number"])
def test_a_serve_status_of_the_wrong_shape_is_named_and_the_cluster_still_shown(
        capsys: pytest.CaptureFixture[str], rm: FixtureRM, tmp_path: Path, change: dict[str, Any], why: str) -> None:
    path = _write(tmp_path / "s.json", {**SERVE, **change})
    code, out, err = _status(capsys, "--rm", rm.url, "--serve-status", str(path))  # each was a traceback
    assert code == 0 and err == "", err
    line = next(x for x in out.splitlines() if x.startswith("Policy"))
    assert line.startswith(f"Policy   {path}: ") and why in line, line
    assert "Cluster  2 nodes running" in out and "default (fifo)" in out


def test_markup_in_a_serve_status_is_shown_as_written(capsys: pytest.CaptureFixture[str], rm: FixtureRM,
                                                      tmp_path: Path) -> None:
    doc = {**SERVE, "policy": "[/x]", "control_loop": {**SERVE["control_loop"], "stale": True,  # type: ignore[dict-item]
                                                       "error": "[bold]refused[/]"}}
    code, out, _ = _status(capsys, "--rm", rm.url, "--serve-status", str(_write(tmp_path / "s.json", doc)))
    assert code == 0 and "Policy   [/x] serving" in out and "[bold]refused[/]" in out  # a MarkupError traceback
