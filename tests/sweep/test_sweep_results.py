"""The sweep results committed under docs/sweep (docs/reproduction.md's ten-seed tables) are what the simulator gives today."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from yarnctl.sweep.cell import run_cell
from yarnctl.sweep.spec import Cell, load_spec

ROOT = Path(__file__).resolve().parents[2]
# one cheap cell per committed sweep whose numbers the docs quote (workload, label, seed)
SAMPLES = [
    ("repro-dress", "dress-mr20+jitter", "dress", 3),
    ("repro-dress", "dress-mixed-20+jitter", "capacity", 7),
    ("repro-haste", "haste-simple", "haste", 2),
    ("repro-opera", "opera-mr6", "opera[relief=aggressive]", 1),
    ("dress-theta", "dress-mr20+jitter", "dress[theta=0.05]", 0),
    ("opera-threshold", "opera-mr6", "opera[threshold_s=30]", 4),
    ("haste-reservations", "haste-mixed2", "fair[reservations=True]", 5),
    ("opera-reservations", "opera-mr6", "fair[reservations=True]", 2),
]


@pytest.mark.parametrize(("sweep", "workload", "label", "seed"), SAMPLES)
def test_a_committed_row_is_simulated_again_to_the_same_numbers(sweep: str, workload: str, label: str, seed: int) -> None:
    """A change to the simulator or a policy that moves these rows must regenerate the sweep and its tables."""
    df = pd.read_csv(ROOT / "docs" / "sweep" / sweep / "results.csv")
    row = df[(df["workload"] == workload) & (df["label"] == label) & (df["seed"] == seed)]
    assert len(row) == 1, f"{sweep}: no row {workload} {label} seed {seed}"
    (cell,) = [c for c in load_spec(Path(sweep)).cells() if (c.workload, c.label, c.seed) == (workload, label, seed)]
    assert isinstance(cell, Cell)
    fresh = run_cell(cell)
    for metric in ("makespan_s", "avg_completion_s", "avg_wait_s"):
        assert fresh[metric] == pytest.approx(float(row[metric].iloc[0]), rel=1e-6), \
            f"{sweep}: {metric} moved; re-run `yarnctl sweep run {sweep} --out docs/sweep/{sweep}` and the docs' tables"
