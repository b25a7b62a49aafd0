"""The fidelity runs of 2026-11-27 (docs/fidelity/runs-2026-11-27.tar.gz) re-scored: docs/fidelity.md's numbers hold.

Real runs of the suite on the local cluster, kept as `bench fidelity` keeps them (bench.json and job
history per mix); no cluster is needed to replay them. A simulator change that moves these numbers
fails here, and docs/fidelity.md is re-measured with it.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from yarnctl.bench import fidelity as fid
from yarnctl.fidelity import suite
from yarnctl.sim.workload import Startup

ARCHIVE = Path(__file__).parents[2] / "docs" / "fidelity" / "runs-2026-11-27.tar.gz"
FIT = Startup(15.0, 2.0, 4.0)  # docs/fidelity.md, "A second machine"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[fid.RealRun]:
    out = tmp_path_factory.mktemp("fid")
    with tarfile.open(ARCHIVE) as t:
        t.extractall(out, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))  # 3.11.4+
    return [r for mix in fid.SUITE for r in fid.load_runs(out / mix / "bench.json", mix)]


def test_every_run_of_the_suite_is_kept_with_its_history(runs: list[fid.RealRun]) -> None:
    assert len(runs) == len(fid.SUITE) * len(fid.SCHEDULERS) == 25
    assert sum(len(fid.real_times(r)) for r in runs) == 155
    assert all(len(r.history) == len(r.records) for r in runs)


def test_the_documented_errors_and_rankings(runs: list[fid.RealRun]) -> None:
    result = suite.evaluate(runs, startup=FIT)
    s = fid.summary(result.errors, "sim")
    assert (round(100 * s["completion_median"]), round(100 * s["completion_p90"]), round(100 * s["wait_median"])) \
        == (10, 30, 26)
    assert round(100 * result.fit_score, 1) == 12.2
    pairs = [result.mixes[m]["sim_pairs"] for m in fid.SUITE]
    assert pairs == [[4, 7], [4, 4], [6, 9], [4, 6], [7, 7]]


@pytest.mark.slow
def test_the_fit_finds_the_documented_costs(runs: list[fid.RealRun]) -> None:
    found, score = fid.fit_startup([r for r in runs if r.label == fid.CALIBRATION])
    assert (found, round(100 * score, 1)) == (FIT, 12.2)
