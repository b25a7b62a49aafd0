"""The control socket and `yarnctl policy`: token-checked, 0600, one clear line for every refusal; a real swap end to end."""

from __future__ import annotations

import json
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from wirefixtures import STATE, text

from yarnctl.bridge.control import ControlError, ControlServer, accepts, request
from yarnctl.bridge.service import PolicyService
from yarnctl.cli.policy import parse_share, parse_window
from yarnctl.errors import ConfigError
from yarnctl.policies import make_policy

TOKEN = "tok-for-tests"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def control(tmp_path: Path) -> Iterator[tuple[ControlServer, PolicyService]]:
    service = PolicyService(make_policy("fifo"))
    ctl = ControlServer(tmp_path / "ctl.sock", TOKEN, service.control)
    ctl.start()
    yield ctl, service
    ctl.stop()


def test_show_set_and_rollback_over_the_socket(control: tuple[ControlServer, PolicyService]) -> None:
    ctl, service = control
    assert stat.S_IMODE(ctl.path.stat().st_mode) == 0o600
    assert request(ctl.path, TOKEN, {"command": "show"})["swap"]["policy"] == "fifo"
    ev = request(ctl.path, TOKEN, {"command": "set", "plan": {"policy": "drf", "check_calls": 1}})["event"]
    assert ev["event"] == "shadow" and service.candidate is not None
    service.decide(text(STATE[0]))
    service.check_swap()  # the status tick
    assert request(ctl.path, TOKEN, {"command": "show"})["swap"]["policy"] == "drf"
    assert request(ctl.path, TOKEN, {"command": "rollback"})["event"]["policy"] == "fifo"


@pytest.mark.parametrize("raw, error", [
    (b'{"command": "show"}\n', "wrong or missing bridge token"),
    (b'{"command": "show", "token": "guess"}\n', "wrong or missing bridge token"),
    (b"show\n", "request is not one line of JSON"),
    (b"[1]\n", "request is not a JSON object"),
    (b'{"token": "tok-for-tests", "command": "set", "plan": {"policy": "nope"}}\n', "unknown policy 'nope'"),
])
def test_a_bad_request_is_answered_and_the_server_goes_on(control: tuple[ControlServer, PolicyService],
                                                         raw: bytes, error: str) -> None:
    ctl, service = control
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(ctl.path))
        s.sendall(raw)
        answer = json.loads(s.makefile("rb").readline())
    assert answer["ok"] is False and error in answer["error"]
    assert service.candidate is None
    assert request(ctl.path, TOKEN, {"command": "show"})["ok"] is True


def test_a_probe_that_sends_nothing_is_not_a_refused_request(control: tuple[ControlServer, PolicyService],
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """`cluster up` and `restart-serve` connect and leave to see that the socket is up: no warning, no count."""
    ctl, _ = control
    assert accepts(ctl.path) and accepts(ctl.path)
    assert request(ctl.path, TOKEN, {"command": "show"})["ok"] is True  # the server goes on
    assert ctl.refused == 0 and "refused a request" not in caplog.text
    with socket.socket(socket.AF_UNIX) as s:  # a line that is not JSON still is one
        s.connect(str(ctl.path))
        s.sendall(b"\n")
        s.makefile("rb").readline()
    assert ctl.refused == 1


def test_client_errors_are_one_line(tmp_path: Path, control: tuple[ControlServer, PolicyService]) -> None:
    ctl, _ = control
    with pytest.raises(ControlError, match="no control socket"):
        request(tmp_path / "none.sock", TOKEN, {"command": "show"})
    with pytest.raises(ControlError, match="the policy server refused: wrong or missing bridge token"):
        request(ctl.path, "wrong", {"command": "show"})


def test_a_live_socket_is_not_taken_over_and_a_stale_one_is(tmp_path: Path,
                                                            control: tuple[ControlServer, PolicyService]) -> None:
    ctl, service = control
    with pytest.raises(ConfigError, match="another policy server listens there"):
        ControlServer(ctl.path, TOKEN, service.control).start()
    stale = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(stale))  # bound, never listening: what a killed server leaves
    second = ControlServer(stale, TOKEN, service.control)
    second.start()
    try:
        assert request(stale, TOKEN, {"command": "show"})["ok"]
    finally:
        second.stop()
    assert not stale.exists()
    status = tmp_path / "status.json"
    status.write_text("{}")  # a mistyped --control-socket must not delete the file there
    with pytest.raises(ConfigError, match="a file that is not a socket is there"):
        ControlServer(status, TOKEN, service.control).start()
    assert status.read_text() == "{}"
    with pytest.raises(ConfigError, match="over the 100 a Unix socket path may have"):
        ControlServer(tmp_path / ("x" * 120), TOKEN, service.control).start()


@pytest.mark.parametrize("given, plan", [("30s", {"check_s": 30.0}), ("2m", {"check_s": 120.0}),
                                         ("0s", {"check_s": 0.0}), ("200", {"check_calls": 200})])
def test_parse_window(given: str, plan: dict[str, Any]) -> None:
    assert parse_window(given) == plan


@pytest.mark.parametrize("given", ["", "30x", "0", "1.5", "-3s"])
def test_parse_window_refuses(given: str) -> None:
    with pytest.raises(ConfigError, match="--shadow"):
        parse_window(given)


def test_parse_share() -> None:
    assert (parse_share("10%"), parse_share("0.25"), parse_share("0%")) == (0.1, 0.25, 0.0)
    for bad in ("100%", "-1%", "ten"):
        with pytest.raises(ConfigError, match="--canary"):
            parse_share(bad)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "yarnctl.cli.main", *argv], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)


def test_policy_cli_without_a_server_is_one_line(tmp_path: Path) -> None:
    done = _cli("policy", "show", "--serve-status", str(tmp_path / "none.json"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no running yarnctl serve" in done.stderr
    done = _cli("policy", "set", "drf", "--shadow", "soon", "--control-socket", str(tmp_path / "x.sock"),
                "--token-file", str(tmp_path / "t"))
    assert done.returncode == 2 and "--shadow 'soon'" in done.stderr
    done = _cli("policy", "show", "--control-socket", str(tmp_path / "x.sock"), "--token-file", str(tmp_path / "t"))
    assert done.returncode == 2 and "no bridge token file" in done.stderr and not (tmp_path / "t").exists()
    done = _cli("policy", "set", "drf", "--param", "fair.x=1", "--control-socket", str(tmp_path / "x.sock"))
    assert done.returncode == 2 and "`policy set drf` takes drf.KEY=VALUE" in done.stderr


def test_swap_end_to_end_through_yarnctl_serve_and_yarnctl_policy(tmp_path: Path) -> None:
    """`yarnctl serve` in a process, the py4j calls of a stand-in shim (FakeShim), `yarnctl policy` in another."""
    from test_py4j_roundtrip import FakeShim

    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    dlog, status, sock = tmp_path / "d.jsonl", tmp_path / "status.json", tmp_path / "ctl.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "fifo", "--port", "0", "--token-file",
         str(token), "--decision-log", str(dlog), "--status-file", str(status), "--control-socket", str(sock)],
        stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stderr is not None
        m = re.search(r"serving policy fifo on 127\.0\.0\.1:(\d+)", proc.stderr.readline())
        assert m
        shim = FakeShim(int(m.group(1)), TOKEN)
        shim.decide(text(STATE[0]))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (status.exists() and json.loads(status.read_text())["calls"]):
            time.sleep(0.1)
        done = _cli("policy", "set", "drf", "--shadow", "2", "--serve-status", str(status))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("shadow      drf under check for 2 heartbeats (fifo decides meanwhile")
        for n in STATE[1:]:
            shim.decide(text(n))
        deadline = time.monotonic() + 10  # the server's status tick (every second) settles it
        while True:
            swap = json.loads(_cli("policy", "show", "--serve-status", str(status), "--json").stdout)["swap"]
            if swap["policy"] == "drf" or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert swap["policy"] == "drf" and swap["previous"] == "fifo"
        assert [e["event"] for e in swap["events"]] == ["shadow", "active"]
        shown = _cli("policy", "show", "--serve-status", str(status))
        text_show = shown.stdout
        # failed once in make check with nothing on stdout (2026-12-01): say what it said instead
        assert "serving    drf" in text_show and "rollback   fifo" in text_show, (shown.returncode, shown.stderr)
        back = _cli("policy", "rollback", "--serve-status", str(status))
        assert back.returncode == 0 and "fifo active again (from drf)" in back.stdout
        again = _cli("policy", "set", "nope", "--serve-status", str(status))
        assert again.returncode == 2 and "unknown policy 'nope'" in again.stderr
        shim.close()
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, rest
    assert "swap: drf active, replacing fifo (2 calls" in rest and TOKEN not in rest
    assert not sock.exists()
    events = [json.loads(line)["event"] for line in dlog.read_text().splitlines() if '"event"' in line]
    assert events == ["shadow", "active", "rolled-back"]


def test_accepts_tells_a_live_socket_from_a_dead_servers_file(tmp_path: Path) -> None:
    """A policy server killed with -9 leaves its control socket's file: it must read as not ready (restart-serve)."""
    path = tmp_path / "ctl.sock"
    assert not accepts(path)  # no file
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    assert accepts(path)
    server.close()  # the file stays, as after a crash
    assert path.exists() and not accepts(path)
