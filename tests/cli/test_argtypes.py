"""Flag value types: a bad number, port or path stops the command on one line, before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.cli.main import main


@pytest.mark.parametrize("argv, message", [
    (["simulate", "--workload", "haste-fig1", "--out", ""], "argument --out: expected a path, got ''"),
    (["serve", "--policy", "fifo", "--decision-log", " "], "argument --decision-log: expected a path, got ' '"),
    (["serve", "--policy", "fifo", "--port", "http"], "argument --port: expected a port, got 'http'"),
    (["status", "--watch", "-1"], "argument --watch: expected a finite number of seconds > 0, got -1"),
    (["status", "--watch", "1e300"], "argument --watch: expected at most 9.22e+09 seconds, got 1e300"),
    (["simulate", "--workload"], "argument --workload/-w: expected one argument"),  # argparse's own, on one line too
], ids=["empty-out", "blank-log", "word-port", "negative-watch", "overflowing-watch", "missing-value"])
def test_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)  # an empty --out wrote the CSVs and plots here
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert err == f"error: {message} (see `yarnctl {argv[0]} --help`)\n"
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("argv, message", [
    (["bench", "fidelity", "--max-median-error", "nan"], "argument --max-median-error: expected a finite percentage >= 0, got nan"),
    (["bench", "fidelity", "--timeout", "0"], "argument --timeout: expected a finite number of seconds > 0, got 0"),
    (["sls", "--nm-vcores", "0"], "argument --nm-vcores: expected an integer >= 1, got 0"),
], ids=["nan-error-bound", "zero-timeout", "no-vcores"])
def test_long_runs_refuse_bad_numbers_before_starting(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                      message: str) -> None:
    with pytest.raises(SystemExit) as stop:  # bench fidelity with a NaN bound ran its real runs first
        main(argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["policy", "set", "nosuch"], "error: unknown policy 'nosuch'"),  # it said only "no running yarnctl serve"
    (["policy", "set", "dress", "--param", "dress.theta=5"], "error: policy dress: theta: must be in [0, 1], got 5"),
], ids=["unknown-policy", "bad-parameter"])
def test_policy_set_checks_the_policy_before_looking_for_a_server(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                   argv: list[str], message: str) -> None:
    code = main([*argv, "--serve-status", str(tmp_path / "none.json")])
    assert code == 2 and capsys.readouterr().err.startswith(message)


@pytest.mark.parametrize("argv, message", [
    (["bench", "mr", "--timeout", "-1"], "argument --timeout: expected a finite number of seconds > 0, got -1"),
    (["bench", "hibench", "--home", "/x", "--interval", "-5"],
     "argument --interval: expected a finite number of seconds >= 0, got -5"),
    (["sweep", "run", "--workers", "0", "--out", "/x"], "argument --workers: expected an integer >= 1, got 0"),
    (["policy", "set", "fifo", "--wait", "inf"], "argument --wait: expected a finite number of seconds > 0, got inf"),
    (["policy", "set", "fifo", "--max-latency-ms", "nan"],
     "argument --max-latency-ms: expected a finite number of milliseconds > 0, got nan"),
    # the --sls-* sizes were not checked at all once
    (["simulate", "-w", "t.json", "--sls-container-mb", "-5"], "argument --sls-container-mb: expected an integer >= 1, got -5"),
], ids=["bench-timeout", "negative-gap", "no-workers", "endless-wait", "nan-latency", "sls-size-negative"])
def test_bench_sweep_and_policy_flags(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err
