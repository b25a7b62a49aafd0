"""`yarnctl serve --metrics-port`: refusals, and a serve process whose /metrics reflects fixture calls."""

from __future__ import annotations

import importlib.util
import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from fixturerm import FixtureRM
from prometheus_client.parser import text_string_to_metric_families
from wirefixtures import ROOT, STATE, text

from yarnctl.cli.main import main

# the raw py4j client of tests/bridge (it stands in for the RM's shim), loaded by path: that directory
# is on sys.path only when pytest collects it
_spec = importlib.util.spec_from_file_location("_fakeshim", ROOT / "tests" / "bridge" / "test_py4j_roundtrip.py")
assert _spec is not None and _spec.loader is not None
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
FakeShim = _mod.FakeShim

TOKEN = "tok-for-metrics-tests"


@pytest.fixture
def token(tmp_path: Path) -> Path:
    p = tmp_path / "bridge.token"
    p.write_text(TOKEN + "\n")
    p.chmod(0o600)
    return p


@pytest.mark.parametrize("args, message", [
    (["--metrics-port", "0", "--metrics-address", "0.0.0.0"], "--metrics-address 0.0.0.0 is not a loopback address"),
    (["--yarn-site", "/nope/yarn-site.xml"], "/nope/yarn-site.xml"),
    (["--status-file", "/"], "--status-file /: is a directory; give a file path"),  # it warned every second
    (["--status-file", "/dev/null/s.json"], "--status-file /dev/null/s.json: /dev/null is a file"),
], ids=["remote-address", "missing-yarn-site", "status-file-directory", "status-file-under-a-file"])
def test_serve_refuses_bad_metrics_flags(capsys: pytest.CaptureFixture[str], token: Path, tmp_path: Path,
                                         args: list[str], message: str) -> None:
    code = main(["serve", "--policy", "fifo", "--token-file", str(token), "--no-decision-log", *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


@pytest.mark.parametrize("args, message", [
    (["--metrics-port", "70000"], "argument --metrics-port: expected a port in 0-65535, got 70000"),
    (["--port", "-1"], "argument --port: expected a port in 0-65535, got -1"),
    (["--tune-interval", "0"], "argument --tune-interval: expected a finite number of seconds > 0, got 0"),
    (["--tune-interval", "inf"], "argument --tune-interval: expected a finite number"),  # the loop's thread died on it
], ids=["bad-port", "negative-port", "zero-interval", "endless-interval"])
def test_serve_refuses_bad_numbers_before_starting(capsys: pytest.CaptureFixture[str], token: Path,
                                                   args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--policy", "fifo", "--token-file", str(token), "--no-decision-log", *args])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == "" and message in err and err.count("\n") == 1


def test_serve_process_exports_what_the_shim_sent(token: Path) -> None:
    """A raw py4j client (FakeShim, standing in for the RM's shim) sends the fixtures; /metrics shows them."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "fifo", "--port", "0", "--token-file",
         str(token), "--no-decision-log", "--no-status-file", "--metrics-port", "0"],
        stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stderr is not None
        startup = proc.stderr.readline() + proc.stderr.readline()  # the metrics line, then the serving line
        port = int(re.search(r"on 127\.0\.0\.1:(\d+) \(token", startup).group(1))  # type: ignore[union-attr]
        mport = int(re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", startup).group(1))  # type: ignore[union-attr]
        shim = FakeShim(port, TOKEN)
        for name in STATE[:2]:
            shim.decide(text(name))
        shim.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=5) as r:
            body = r.read().decode()
        samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                   for f in text_string_to_metric_families(body) for s in f.samples}
        assert samples[("yarnctl_decisions_total", (("outcome", "ok"),))] == 2
        assert samples[("yarnctl_cluster_capacity_bytes", ())] == 2 * 8192 << 20
        assert samples[("yarnctl_bridge_up", ())] == 1
        assert TOKEN not in body
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)


def _metrics(mport: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=5) as r:
        body = r.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(body) for s in f.samples}


def _wait(what: str, check: object, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_control_loop_survives_an_rm_outage(token: Path, tmp_path: Path) -> None:
    """`serve --rm` against a real HTTP server answering with recorded RM responses, which then dies and returns."""
    rm = FixtureRM()
    status_file = tmp_path / "status.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "fifo", "--port", "0", "--token-file",
         str(token), "--no-decision-log", "--status-file", str(status_file), "--metrics-port", "0",
         "--rm", rm.url, "--tune-interval", "0.2", "--no-usage"],
        stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    back = None
    try:
        assert proc.stderr is not None
        startup = "".join(proc.stderr.readline() for _ in range(3))
        mport = int(re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", startup).group(1))  # type: ignore[union-attr]
        assert f"control loop polling {rm.url} every 0.2 s" in startup

        def status() -> dict:  # type: ignore[type-arg]
            return json.loads(status_file.read_text()) if status_file.exists() else {}

        _wait("a first good poll", lambda: (status().get("control_loop") or {}).get("polls", 0) >= 2)
        loop = status()["control_loop"]
        assert loop["stale"] is False and loop["nodes"] == 2 and loop["apps"] == 1
        assert status()["metrics_port"] == mport  # --metrics-port 0: the port the OS chose, for `cluster up` to print
        assert loop["shim"]["delegated"] > 0
        m = _metrics(mport)
        assert m[("yarnctl_control_loop_stale", ())] == 0
        assert ("yarnctl_shim_breaker_open", ()) in m

        rm.stop()
        _wait("the loop to notice", lambda: status()["control_loop"]["stale"] is True)
        m = _metrics(mport)
        assert m[("yarnctl_control_loop_stale", ())] == 1
        assert m[("yarnctl_control_loop_polls_total", (("outcome", "error"),))] >= 1
        assert ("yarnctl_shim_breaker_open", ()) in m  # the last good reading is kept
        assert proc.poll() is None, "serve died with its RM"

        back = FixtureRM(rm.port)
        _wait("the loop to recover", lambda: status()["control_loop"]["stale"] is False)
        assert _metrics(mport)[("yarnctl_control_loop_stale", ())] == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
        if back is not None:
            back.stop()
    assert proc.returncode == 0
    assert err.count("cannot read the cluster") == 1, err  # once per outage
    assert "readable again" in err
    assert "Traceback" not in err
