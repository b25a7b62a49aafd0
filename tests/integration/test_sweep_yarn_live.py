"""`sweep run --executor yarn`: the cells as a map-only Hadoop streaming job on a real local cluster, same table as local."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from yarnctl.cluster.local import LocalCluster
from yarnctl.sweep.run import run_sweep
from yarnctl.sweep.spec import load_spec

pytestmark = pytest.mark.integration

# 2 policies x 3 parameter values x 3 seeds
SPEC = dict(workloads=["haste-mixed1"], params=["ffd-dp.memory_weight=0.5,1,2", "dress.initial_reserve=0.1:0.3:0.1"],
            seeds="0:2")


def test_yarn_gives_the_local_table(tmp_path: Path) -> None:
    lc = LocalCluster(tmp_path / "c")
    lc.up(native="fifo", policy=None, nodes=2)
    try:
        spec = load_spec(None, **SPEC)  # type: ignore[arg-type]
        on_yarn = run_sweep(spec, tmp_path / "yarn", executor="yarn", cluster_dir=tmp_path / "c", cells_per_task=3)
        again = run_sweep(spec, tmp_path / "yarn", executor="yarn", cluster_dir=tmp_path / "c")
        apps = lc.rm().apps()
    finally:
        lc.down()
    assert (on_yarn.cells, on_yarn.ran, on_yarn.failed) == (18, 18, ())
    assert (again.kept, again.ran) == (18, 0)  # nothing submitted the second time
    streaming = [a for a in apps if a.name == "yarnctl sweep"]
    assert len(streaming) == 1 and streaming[0].final_status == "SUCCEEDED", [(a.name, a.final_status) for a in apps]
    local = run_sweep(spec, tmp_path / "local", executor="local", workers=2)
    a, b = (pd.read_csv(tmp_path / d / "results.csv").drop(columns=["cell_s"]) for d in ("yarn", "local"))
    assert a["key"].is_unique and len(a) == 18
    pd.testing.assert_frame_equal(a, b)
