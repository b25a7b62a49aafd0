"""`yarnctl serve --metrics-port`: refusals, and a serve process whose /metrics reflects fixture calls."""

from __future__ import annotations

import importlib.util
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
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
    (["--metrics-port", "70000"], "--metrics-port 70000: expected 0-65535"),
    (["--metrics-port", "0", "--metrics-address", "0.0.0.0"], "--metrics-address 0.0.0.0 is not a loopback address"),
], ids=["bad-port", "remote-address"])
def test_serve_refuses_bad_metrics_flags(capsys: pytest.CaptureFixture[str], token: Path, tmp_path: Path,
                                         args: list[str], message: str) -> None:
    code = main(["serve", "--policy", "fifo", "--token-file", str(token), "--no-decision-log", *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_serve_process_exports_what_the_shim_sent(token: Path) -> None:
    """A raw py4j client (FakeShim, standing in for the RM's shim) sends the fixtures; /metrics shows them."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "fifo", "--port", "0", "--token-file",
         str(token), "--no-decision-log", "--metrics-port", "0"],
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
