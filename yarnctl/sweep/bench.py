"""How fast each executor runs a 1,000-cell sweep, and what each costs per cell beyond the simulation.

    python -m yarnctl.sweep.bench [--yarn] [--out DIR]

The sweep: haste-mixed1 under ffd-dp with memory_weight 0.1..10 (100 values) x seeds 0..9. Each
executor starts from an empty cell store. Overhead per cell = wall time x the machine's cores /
cells - the mean simulation time of a cell on the local executor (its `cell_s`, the cost of the
work itself): what an executor adds per cell when it could keep every core busy. An executor's own
`cell_s` also counts imports in fresh processes and time sharing a core with more tasks than cores
(YARN runs more map containers than this machine has cores), so it is shown but not the reference. --yarn also starts a local cluster (native FIFO, 2 NodeManagers) and
runs the sweep as a streaming job of 10 cells per map task.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from yarnctl.sweep.run import run_sweep
from yarnctl.sweep.spec import load_spec

SPEC = dict(workloads=["haste-mixed1"], params=["ffd-dp.memory_weight=0.1:10:0.1"], seeds="0:9")


def measure(executor: str, out: Path, reference_cell_s: float | None = None, **opts: object) -> dict[str, object]:
    """One executor's run of the sweep from an empty store: wall time, cells/min, mean cell time, overhead per cell.

    The overhead is taken against `reference_cell_s` (the local executor's mean cell time), or this run's own.
    """
    spec = load_spec(None, **SPEC)  # type: ignore[arg-type]
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    done = run_sweep(spec, out, executor=executor, **opts)  # type: ignore[arg-type]
    wall = time.perf_counter() - t0
    cells = pd.read_csv(out / "results.csv")
    cores = os.cpu_count() or 1
    mean_cell = float(cells["cell_s"].mean())
    return {"executor": executor, "cells": done.ran, "failed": len(done.failed), "wall_s": round(wall, 1),
            "cells_per_min": round(done.ran / wall * 60), "mean_cell_s": round(mean_cell, 3),
            "overhead_per_cell_s": round(wall * cores / max(done.ran, 1) - (reference_cell_s or mean_cell), 3)}


def main(argv: list[str] | None = None) -> int:
    """Run the sweep on local processes, a 2-worker Dask LocalCluster and (with --yarn) YARN; print a table."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.sweep.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--yarn", action="store_true", help="also start a local cluster and run the sweep on YARN")
    p.add_argument("--out", type=Path, default=None, help="where the sweeps go (default: a temporary dir)")
    args = p.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="yarnctl-sweep-bench-"))
    rows = [measure("local", out / "local")]
    ref = float(rows[0]["mean_cell_s"])  # type: ignore[arg-type]
    rows.append(measure("dask", out / "dask", ref, workers=2))
    if args.yarn:
        from yarnctl.cluster.local import LocalCluster

        lc = LocalCluster(out / "cluster")
        lc.up(native="fifo", policy=None, nodes=2)
        try:
            rows.append(measure("yarn", out / "yarn", ref, cluster_dir=out / "cluster", cells_per_task=10))
        finally:
            lc.down()
    print(f"{len(rows)} executors, {os.cpu_count()} cores; results in {out}", file=sys.stderr)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
