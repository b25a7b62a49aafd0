"""`yarnctl sls` refuses bad input in one line with exit 2, before Maven or any JVM starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.cli.main import main


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["sls", *argv])
    err = capsys.readouterr().err.strip()
    return rc, err


CASES = [
    ("missing-trace", ["--trace", "/nonexistent/t.json"], "no such trace file or shipped trace; shipped: sls-short"),
    ("unknown-policy", ["--scheduler", "native-fifo,lottery"], "unknown policy 'lottery'"),
    ("unknown-stock", ["--scheduler", "native-bogus"], "unknown stock scheduler 'native-bogus'"),
    ("twice", ["--scheduler", "fifo,fifo"], "lists a scheduler twice"),
    ("container-too-big", ["--container-mb", "8192"], "fit on no node"),
    ("tree-missing", ["--scheduler", "capacity", "--capacity-scheduler", "/nonexistent/cs.xml"],
     "--capacity-scheduler /nonexistent/cs.xml: cannot read: No such file or directory"),
    ("tree-under-fifo", ["--scheduler", "native-fifo", "--capacity-scheduler", "/nonexistent/cs.xml"],
     "native-fifo: --capacity-scheduler gives a CapacityScheduler queue tree; run native-capacity or a policy"),
]


@pytest.mark.parametrize("name,argv,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line(name: str, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _run(argv, capsys)
    assert rc == 2
    assert err.startswith("error: ") and message in err and "\n" not in err, err


def test_malformed_trace_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"am.type": "mapreduce", "job.start.ms": 0,\n')
    rc, err = _run(["--trace", str(bad)], capsys)
    assert rc == 2 and str(bad) in err and "malformed JSON" in err and "\n" not in err


def test_no_java_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty dir: no java
    monkeypatch.delenv("JAVA_HOME", raising=False)
    rc, err = _run([], capsys)
    assert rc == 2 and "no java on PATH" in err and "\n" not in err


@pytest.mark.parametrize(("text", "message"), [(b"<configuration", "not XML"),
                                               (b"<configuration/>", "not a capacity-scheduler.xml"),
                                               (b"\xff\xfe<configuration/>", "not a text file (not UTF-8)")])
def test_a_tree_file_that_is_not_one_is_one_line(text: bytes, message: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "cs.xml"
    f.write_bytes(text)
    rc, err = _run(["--scheduler", "capacity", "--capacity-scheduler", str(f)], capsys)
    assert rc == 2 and err.startswith(f"error: --capacity-scheduler {f}: {message}") and "\n" not in err, err
