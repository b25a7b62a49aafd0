"""A malformed status file of `yarnctl serve` is one line naming the file and the field, not a live server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yarnctl.cli.main import main

SERVE = {"pid": 4242, "policy": "dress", "waiting": {}, "token_file": None, "control": None}
REASON = {"at": 1700000000.0, "node": "n1:45454", "code": "behind", "text": "dress served application_1_0001 first"}


@pytest.mark.parametrize("command", [["explain", "application_1_0002"], ["policy", "show"]], ids=["explain", "policy"])
@pytest.mark.parametrize(("text", "message"), [
    ("{}", "pid: missing; is this the status file of `yarnctl serve`?"),
    (json.dumps({**SERVE, "pid": "x"}), "pid: expected a positive integer, got 'x'"),
    (json.dumps({"pid": 1, "waiting": {}}), "policy: missing; is this the status file of `yarnctl serve`?"),
    (json.dumps({**SERVE, "waiting": 5}), "waiting: expected a mapping, got 5"),
    (json.dumps({**SERVE, "waiting": {"application_1_0002": 3}}),
     "waiting.application_1_0002: expected a list of reasons, got 3"),
    (json.dumps({**SERVE, "waiting": {"application_1_0002": [{**REASON, "at": "noon"}]}}),
     "waiting.application_1_0002[0].at: expected a number, got 'noon'"),
    (json.dumps({**SERVE, "waiting": {"application_1_0002": [{"at": 1.0}]}}),
     "waiting.application_1_0002[0].node: missing"),
    (json.dumps({**SERVE, "control": 5}), "control: expected a path or null, got 5"),
    ("[1, 2]", "not the status file of `yarnctl serve` (unreadable, or not a JSON object)"),
    ("not json", "not the status file of `yarnctl serve` (unreadable, or not a JSON object)"),
], ids=["empty", "pid", "no-policy", "waiting", "reasons", "at", "node", "control", "list", "not-json"])
def test_a_malformed_status_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str],
                                            text: str, message: str) -> None:
    status = tmp_path / "serve-status.json"
    status.write_text(text)  # just written: fresh enough to pass for a running server's
    assert main([*command, "--serve-status", str(status)]) == 2
    assert capsys.readouterr().err == f"error: {status}: {message}\n"


def test_a_well_formed_status_file_still_reaches_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = tmp_path / "serve-status.json"
    status.write_text(json.dumps({**SERVE, "waiting": {"application_1_0002": [REASON]}}))
    assert main(["explain", "application_1_0002", "--serve-status", str(status), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["waiting"] == [REASON]
    assert main(["policy", "show", "--serve-status", str(status)]) == 2
    assert "runs without a control socket" in capsys.readouterr().err
