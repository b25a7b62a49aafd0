"""Flag value types: a bad number, port or path stops the command on one line, before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.cli.main import main


@pytest.mark.parametrize("argv, message", [
    (["simulate", "--workload", "haste-fig1", "--out", ""], "argument --out: expected a path, got ''"),
    (["serve", "--policy", "fifo", "--decision-log", " "], "argument --decision-log: expected a path, got ''"),
    (["serve", "--policy", "fifo", "--port", "http"], "argument --port: expected a port, got 'http'"),
    (["status", "--watch", "-1"], "argument --watch: expected a finite number of seconds > 0, got -1"),
    (["simulate", "--workload"], "argument --workload/-w: expected one argument"),  # argparse's own, on one line too
], ids=["empty-out", "blank-log", "word-port", "negative-watch", "missing-value"])
def test_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)  # an empty --out wrote the CSVs and plots here
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert err == f"error: {message} (see `yarnctl {argv[0]} --help`)\n"
    assert not any(tmp_path.iterdir())
