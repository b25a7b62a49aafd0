"""`yarnctl serve` and `yarnctl replay` from the command line: refusals, a real serve process, replays."""

from __future__ import annotations

import json
import math
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from wirefixtures import STATE, text

from yarnctl.bridge.decisionlog import DecisionLog
from yarnctl.bridge.service import PolicyService
from yarnctl.cli.main import main
from yarnctl.policies import make_policy


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def token(tmp_path: Path) -> Path:
    p = tmp_path / "bridge.token"
    p.write_text("tok-for-tests\n")
    p.chmod(0o600)
    return p


@pytest.mark.parametrize(
    "mode, args, message",
    [
        (0o644, [], "mode 0644 lets other users read the bridge token; chmod 600 it"),
        (0o640, [], "mode 0640 lets other users read the bridge token; chmod 600 it"),
        (0o620, [], "mode 0620 lets other users change the bridge token; chmod 600 it"),
        (0o600, ["--address", "0.0.0.0"], "--address 0.0.0.0 is not a loopback address"),
        (0o600, ["--address", "192.0.2.7"], "--address 192.0.2.7 is not a loopback address"),
        # with --allow-remote it was not resolved first, and ended in py4j's traceback at bind time
        (0o600, ["--address", "not.a.host.invalid", "--allow-remote"], "--address not.a.host.invalid: cannot resolve"),
        (0o600, ["--param", "fifo.nope=1"], "policy fifo: unknown parameter 'nope'"),
        (0o600, ["--param", "drf.x=1"], "parameters given for 'drf', which is not among --policy fifo"),
        (0o600, ["--max-am-share", "0"], "--max-am-share 0: expected a fraction in (0, 1]"),
    ],
    ids=["token-0644", "token-0640", "token-0620", "any-address", "remote-address", "unresolvable-address",
         "bad-param",
         "param-other-policy", "bad-am-share"],
)
def test_serve_refuses_with_one_line(capsys: pytest.CaptureFixture[str], token: Path, tmp_path: Path, mode: int,
                                     args: list[str], message: str) -> None:
    token.chmod(mode)
    code, out, err = _run(capsys, "serve", "--policy", "fifo", "--token-file", str(token),
                          "--decision-log", str(tmp_path / "d.jsonl"), *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert "tok-for-tests" not in err


def test_serve_on_a_port_in_use_says_so_in_one_line(token: Path) -> None:
    """py4j's own ERROR line and traceback came before the one-line error."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "fifo", "--port", str(port),
                            "--token-file", str(token), "--no-decision-log", "--no-status-file", "--no-control"],
                           capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 2 and r.stderr == f"error: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_serve_creates_a_private_token(tmp_path: Path) -> None:
    from yarnctl.bridge.server import load_token
    path = tmp_path / "new" / "dir" / "bridge.token"
    tok = load_token(path)
    assert len(tok) >= 40 and load_token(path) == tok
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700


def test_serve_process_answers_and_stops_cleanly_on_sigterm(token: Path, tmp_path: Path) -> None:
    from test_py4j_roundtrip import FakeShim
    dlog, status = tmp_path / "d.jsonl", tmp_path / "status.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "fifo", "--port", "0", "--token-file",
         str(token), "--decision-log", str(dlog), "--status-file", str(status)],
        stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"serving policy fifo on 127\.0\.0\.1:(\d+) \(token file (.+?), decision log", line)
        assert m, line
        assert m.group(2) == str(token) and "tok-for-tests" not in line
        shim = FakeShim(int(m.group(1)), "tok-for-tests")
        answers = [json.loads(shim.decide(text(n))) for n in STATE]
        assert [a["seq"] for a in answers] == [1, 2, 3]
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (status.exists() and json.loads(status.read_text())["calls"] == 3):
            time.sleep(0.1)
        doc = json.loads(status.read_text())
        assert doc["calls"] == 3 and doc["ok"] == 3 and doc["policy"] == "fifo" and doc["pid"] == proc.pid
        shim.close()
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, rest
    assert "stopped; stats" in rest and "tok-for-tests" not in rest
    assert len(dlog.read_text().splitlines()) == 3
    assert "stopped" in json.loads(status.read_text())


def _log(path: Path, policy: str = "fifo") -> Path:
    dlog = DecisionLog(path)
    service = PolicyService(make_policy(policy), dlog)
    for name in STATE:
        service.decide(text(name))
    service.decide(text("request-delta.json"))  # a stray repeat: resync, skipped by replay
    service.decide("not json")
    dlog.close()
    return path


def test_replay_same_policy_matches(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = _log(tmp_path / "d.jsonl")
    code, out, err = _run(capsys, "replay", str(log), "--policy", "fifo")
    assert code == 0, err
    assert "3 calls replayed with fifo (logged by fifo); skipped 1 bad request, 1 resync" in out
    assert "decisions differ on 0 of 3 calls" in out
    assert "consequences are not simulated" in out


def test_replay_other_policy_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = _log(tmp_path / "d.jsonl")
    code, out, err = _run(capsys, "replay", str(log), "--policy", "fair", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["calls_replayed"] == 3 and doc["calls_skipped"] == {"resync": 1, "bad request": 1}
    # fair gives one container per heartbeat; fifo filled each node
    assert doc["containers"] == {"logged": sum(v["logged"] for v in doc["per_app"].values()),
                                 "replayed": 3}
    assert doc["calls_differing"] == 3 and doc["containers"]["logged"] > 3
    assert "not simulated" in doc["note"]


def test_replay_truncated_log_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = _log(tmp_path / "d.jsonl")
    data = log.read_bytes()
    log.write_bytes(data[:-20])
    code, out, err = _run(capsys, "replay", str(log), "--policy", "fifo")
    assert code == 0 and "last line was cut off" in out


@pytest.mark.parametrize(
    "content, message",
    [(None, "cannot read the decision log"), (b"", "no decision log records"),
     (b"PK\x03\x04garbage\n", "1: not a decision log record"),
     # every request unreadable: it reported 0 calls replayed and exited 0
     (b'{"seq":1,"node":"n1","outcome":"ok","req":"garbage","resp":{}}\n'
      b'{"seq":2,"node":"n1","outcome":"ok","req":{},"resp":{}}\n',
      "none of its 2 records could be replayed (skipped 2 bad request); the first unreadable request: record 1: req: "
      "not a JSON object")],
    ids=["missing", "empty", "garbage", "no-readable-request"],
)
def test_replay_bad_log_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes | None,
                                    message: str) -> None:
    path = tmp_path / "d.jsonl"
    if content is not None:
        path.write_bytes(content)
    code, out, err = _run(capsys, "replay", str(path), "--policy", "fifo")
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_the_status_file_is_strict_json(tmp_path: Path) -> None:
    """A NaN in the status (an estimate not made yet) is written as null, an infinity as "inf" (strict parsers
    refuse both bare)."""
    from yarnctl.bridge.server import write_status

    path = tmp_path / "status.json"
    write_status(path, {"control_loop": {"estimate": math.nan, "cap": math.inf, "per_node": [1.5, -math.inf]},
                        "policy": "dress", "calls": 3})
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the status file"))
    assert doc == {"control_loop": {"estimate": None, "cap": "inf", "per_node": [1.5, "-inf"]}, "policy": "dress",
                   "calls": 3}


def test_a_policy_that_reserves_full_nodes_warns_unless_the_shim_calls_for_them(
        caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    """FairScheduler reserves full nodes (`reserves_full_nodes`); the shim asks about them only with call-when-full."""
    import argparse

    from yarnctl.cli.serve import _warn_full_nodes

    site = tmp_path / "yarn-site.xml"
    site.write_text("<configuration><property><name>yarnctl.shim.call-when-full</name><value>true</value>"
                    "</property></configuration>")
    cases = [("fair", {"reservations": True}, None, 1), ("fair", {"reservations": True}, site, 0),
             ("drf", {"reservations": True}, tmp_path / "missing.xml", 1), ("fair", {}, None, 0), ("fifo", {}, None, 0)]
    for name, params, yarn_site, warnings in cases:
        caplog.clear()
        _warn_full_nodes(argparse.Namespace(yarn_site=yarn_site), make_policy(name, params))
        said = [r.getMessage() for r in caplog.records if "call-when-full=true" in r.getMessage()]
        assert len(said) == warnings, (name, params, yarn_site, said)
