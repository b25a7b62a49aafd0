"""A stateful policy's history on disk: atomic saves, refusals that name the file, PolicyService.policy_state."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from yarnctl.bridge.service import PolicyService
from yarnctl.bridge.statefile import load_state, save_state
from yarnctl.errors import ConfigError
from yarnctl.model import ClusterSnapshot, Decision, NodeId
from yarnctl.policies import make_policy
from yarnctl.policies.contract import PolicyBase


class Counting(PolicyBase):
    """A policy that counts its decisions and keeps the count across restarts."""

    name = "counting"

    def __init__(self) -> None:
        self.decisions = 0

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        self.decisions += 1
        return Decision()

    def save_state(self) -> dict[str, Any]:
        return {"decisions": self.decisions}

    def load_state(self, doc: Mapping[str, Any]) -> None:
        n = doc["decisions"]
        if type(n) is not int or n < 0:
            raise ValueError(f"decisions: expected a count, got {n!r}")
        self.decisions = n


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "state" / "counting.json"
    assert save_state(path, "counting", {"decisions": 7})
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["policy"], doc["state"]) == (1, "counting", {"decisions": 7})
    fresh = Counting()
    assert load_state(path, "counting", fresh) and fresh.decisions == 7
    assert not list(path.parent.glob(".*.tmp")), "the temp file is renamed, not left behind"


def test_a_missing_file_is_a_fresh_start(tmp_path: Path) -> None:
    p = Counting()
    assert not load_state(tmp_path / "none.json", "counting", p) and p.decisions == 0


@pytest.mark.parametrize("content, message", [
    ("{not json", "not JSON"),
    ('{"format": 1, "policy": "counting"}', "not a yarnctl policy state file"),
    ('[1, 2]', "not a yarnctl policy state file"),
    ('{"format": 1, "policy": "hmrf", "saved": 0, "state": {}}', "holds the state of policy 'hmrf', not 'counting'"),
    ('{"format": 1, "policy": "counting", "saved": 0, "state": {"decisions": -1}}', "cannot load its state"),
    ('{"format": 1, "policy": "counting", "saved": 0, "state": {}}', "cannot load its state"),
], ids=["not-json", "no-state", "not-an-object", "other-policy", "bad-value", "missing-field"])
def test_bad_files_are_refused_naming_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as e:
        load_state(path, "counting", Counting())
    assert str(path) in str(e.value) and message in str(e.value) and "\n" not in str(e.value)


def test_an_unwritable_place_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with caplog.at_level(logging.WARNING):
        assert not save_state(blocker / "sub" / "s.json", "counting", {})
    assert "cannot save policy state" in caplog.text


def test_service_policy_state(caplog: pytest.LogCaptureFixture) -> None:
    assert PolicyService(make_policy("fifo")).policy_state() is None  # stateless
    p = Counting()
    p.decisions = 3
    assert PolicyService(p).policy_state() == {"decisions": 3}

    class Unserialisable(Counting):
        def save_state(self) -> dict[str, Any]:
            return {"when": object()}

    with caplog.at_level(logging.ERROR):
        assert PolicyService(Unserialisable()).policy_state() is None
    assert "failed to save its state" in caplog.text


def test_serve_keeps_hmrf_accounting_across_a_restart(tmp_path: Path) -> None:
    """`yarnctl serve --policy hmrf` saves its QueueTracker on SIGTERM and a restart restores it; a broken file
    is refused in one line (a raw py4j client stands in for the RM's shim)."""
    import importlib.util
    import re
    import signal
    import subprocess
    import sys

    from wirefixtures import ROOT, STATE, text

    spec = importlib.util.spec_from_file_location("_fakeshim", ROOT / "tests" / "bridge" / "test_py4j_roundtrip.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    token = tmp_path / "t"
    token.write_text("tok\n")
    token.chmod(0o600)
    state = tmp_path / "hmrf.json"
    argv = [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "hmrf", "--port", "0", "--token-file",
            str(token), "--no-decision-log", "--no-status-file", "--state-file", str(state)]

    def serve() -> tuple[subprocess.Popen[str], int, str]:
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        assert proc.stderr is not None
        lines = ""
        while (m := re.search(r"on 127\.0\.0\.1:(\d+) \(token", lines)) is None:
            line = proc.stderr.readline()
            assert line, f"serve exited: {lines}"
            lines += line
        return proc, int(m.group(1)), lines

    proc, port, _ = serve()
    shim = mod.FakeShim(port, "tok")
    for name in STATE:
        shim.decide(text(name))
    shim.close()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    saved = json.loads(state.read_text())
    assert saved["policy"] == "hmrf" and saved["state"]

    proc, _, startup = serve()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert f"state restored from {state}" in startup

    state.write_text("{broken")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and f"{state}: not JSON" in done.stderr


def _serve_fixtures(service: PolicyService) -> None:
    """Feed the wire fixtures (a full sync and two deltas) as the shim would."""
    from wirefixtures import STATE, text

    for name in STATE:
        assert '"err"' not in service.decide(text(name))


def test_rm_ha_servers_share_one_state_file_without_overwriting_each_other(tmp_path: Path) -> None:
    """The active RM's server saves; the standby's, which decided nothing, never writes its stale copy over it."""
    shared = tmp_path / "policy-state.json"
    active, standby = PolicyService(Counting(), state_file=shared), PolicyService(Counting(), state_file=shared)
    assert not active.save_state_file()  # nothing decided yet: nothing to save
    _serve_fixtures(active)
    assert active.save_state_file()
    assert json.loads(shared.read_text())["state"] == {"decisions": 3}
    assert not standby.save_state_file()
    assert not active.save_state_file()  # no call since the last save
    assert json.loads(shared.read_text())["state"] == {"decisions": 3}


def test_the_server_that_takes_over_starts_from_its_peers_saved_state(tmp_path: Path) -> None:
    """A failover and a failback: the new active loads the old one's history and claims the file; the old one's
    later saves are refused until it decides again and takes the file back."""
    shared = tmp_path / "policy-state.json"
    old, new = PolicyService(Counting(), state_file=shared), PolicyService(Counting(), state_file=shared)

    def saved() -> int:
        return int(json.loads(shared.read_text())["state"]["decisions"])

    _serve_fixtures(old)
    assert old.save_state_file() and saved() == 3
    _serve_fixtures(new)  # its first call adopts 3 and writes it back (the claim)
    assert new.engine.policy.decisions == 3 + 3  # type: ignore[attr-defined]
    assert saved() == 3
    _serve_fixtures(old)  # the old active's calls still in flight at the failover
    assert not old.save_state_file() and saved() == 3  # refused: its history is the stale one
    assert new.save_state_file() and saved() == 6
    # failback: the old server's next call takes the newer file first
    _serve_fixtures(old)
    assert old.engine.policy.decisions == 6 + 3  # type: ignore[attr-defined]
    assert old.save_state_file() and saved() == 9
    _serve_fixtures(new)
    assert not new.save_state_file() and saved() == 9


def test_a_broken_shared_file_is_logged_and_the_server_keeps_its_state(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    shared = tmp_path / "policy-state.json"
    service = PolicyService(Counting(), state_file=shared)
    shared.write_text("{broken")
    with caplog.at_level(logging.WARNING):
        _serve_fixtures(service)
    assert service.engine.policy.decisions == 3  # type: ignore[attr-defined]
    assert "not taking over the saved state" in caplog.text and f"{shared}: not JSON" in caplog.text
