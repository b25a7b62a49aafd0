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
FIT = Startup(10.0, 3.0, 3.0)  # docs/fidelity.md, "A second machine"


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


# the four runs that first shared the machine with a test suite, run again on a quiet machine (docs/fidelity.md)
RERUN = {("fid-mixed", "dress"), ("fid-reduce", "native-fifo"), ("fid-reduce", "native-capacity"),
         ("fid-reduce", "native-fair")}


def _pct(errors: list[fid.JobError]) -> tuple[float, float, float]:
    s = fid.summary(errors, "sim")
    return tuple(round(100 * x, 1) for x in (s["completion_median"], s["completion_p90"], s["wait_median"]))  # type: ignore[return-value]


def test_the_documented_errors_and_rankings(runs: list[fid.RealRun]) -> None:
    result = suite.evaluate(runs, startup=FIT)
    errors = list(result.errors)
    assert _pct(errors) == (9.2, 26.6, 23.9)
    assert _pct([e for e in errors if e.scheduler == fid.CALIBRATION]) == (8.0, 21.4, 26.1)
    assert _pct([e for e in errors if e.scheduler != fid.CALIBRATION]) == (9.3, 27.4, 23.7)
    assert _pct([e for e in errors if (e.mix, e.scheduler) in RERUN]) == (7.7, 15.5, 19.4)
    assert _pct([e for e in errors if (e.mix, e.scheduler) not in RERUN]) == (9.7, 27.3, 24.6)
    assert round(100 * result.fit_score, 1) == 10.7
    pairs = [result.mixes[m]["sim_pairs"] for m in fid.SUITE]
    assert pairs == [[2, 7], [1, 4], [5, 5], [4, 6], [6, 7]]
    # the shim's dress is the fastest on fid-mixed for real, not in the simulator (the AM start-up: docs/fidelity.md)
    mixed = result.mixes["fid-mixed"]
    assert mixed["real_ranking"][0] == "dress" and mixed["sim_ranking"][0] != "dress"


@pytest.mark.slow
def test_the_fit_finds_the_documented_costs(runs: list[fid.RealRun]) -> None:
    found, score = fid.fit_startup([r for r in runs if r.label == fid.CALIBRATION])
    assert (found, round(100 * score, 1)) == (FIT, 10.7)
