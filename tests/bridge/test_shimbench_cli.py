"""`python -m yarnctl.bridge.shimbench` refuses a mode the Java benchmark does not know before starting anything."""

import pytest

from yarnctl.bridge import shimbench


def test_an_unknown_mode_is_one_line_naming_it_and_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        shimbench.main(["--modes", "native,shim-fair"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("error: unknown mode(s) shim-fair; choose from native, shim, native-cs, shim-cs")
