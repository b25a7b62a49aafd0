"""The `python -m yarnctl.sim.*` scripts answer a bad workload with one `error:` line and exit 2, not a traceback."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from yarnctl.errors import script_exit
from yarnctl.sim import opera_classifier, opera_compare, reproduce


@pytest.mark.parametrize("main, argv", [
    (reproduce.main, ["dress", "-w", "no-such-workload"]),
    (opera_compare.main, ["--workload", "no-such-workload"]),
    (opera_classifier.main, ["--workload", "no-such-workload"]),
], ids=["reproduce", "opera_compare", "opera_classifier"])
def test_unknown_workload_is_one_error_line(main: Callable[[Sequence[str] | None], int], argv: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert script_exit(main, argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: no-such-workload: no such file or built-in workload") and err.count("\n") == 1
