"""`python -m yarnctl.bridge.shimbench` refuses a mode the Java benchmark does not know before starting anything."""

import pytest

from yarnctl.bridge import shimbench


def test_an_unknown_mode_is_one_line_naming_it_and_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        shimbench.main(["--modes", "native,shim-fair"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("error: unknown mode(s) shim-fair; choose from native, shim, native-cs, shim-cs")


@pytest.mark.parametrize("flag, value, problem", [
    ("--nodes", "100,lots", "expected node counts like 100,1000,5000, got '100,lots'"),
    ("--nodes", "0,100", "node counts must be at least 1, got '0,100'"),
    ("--floor-us", "0,fast", "expected microseconds like 0,100,300, got '0,fast'"),
    ("--floor-us", "-5", "microseconds must be 0 or more, got '-5'")])
def test_bad_number_lists_are_one_line(flag: str, value: str, problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        shimbench.main([flag, value])
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(f"error: argument {flag}: {problem}")


def test_too_few_heartbeats_for_a_p99_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        shimbench.main(["--heartbeats", "10"])
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("error: --heartbeats: at least 100 for a p99, got 10")
