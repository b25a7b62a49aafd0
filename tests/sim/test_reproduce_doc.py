"""docs/reproduction.md's DRESS table is what `python -m yarnctl.sim.reproduce dress` prints: the doc cannot drift
from the simulator silently (a change to the simulator or to dress that moves a number fails here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.sim.reproduce import DRESS_PAPER, dress_row, main

DOC = (Path(__file__).resolve().parents[2] / "docs" / "reproduction.md").read_text()


@pytest.mark.parametrize("workload", sorted(DRESS_PAPER))
def test_dress_rows_in_the_doc_are_regenerated_exactly(workload: str) -> None:
    row = dress_row(workload)
    assert row in DOC.splitlines(), f"docs/reproduction.md has no line\n{row}"


def test_haste_rows_name_the_paper_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["haste", "-w", "haste-simple"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("haste-simple (seed 0): makespan fifo ")
    assert "| haste against fifo | " in out and "(paper 27.0% shorter)" in out
