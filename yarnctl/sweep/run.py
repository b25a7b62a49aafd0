"""A sweep from spec to table: run the cells not yet kept, keep each as it finishes, write DIR/results.csv."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarnctl import jsonout
from yarnctl.sweep.cell import METRICS
from yarnctl.sweep.executors import run_dask, run_local
from yarnctl.sweep.spec import Cell, SweepSpec, cell_key, workload_digest
from yarnctl.sweep.store import CellStore, code_hash

Progress = Callable[[int, int, str], None]  # (finished, to run, the cell's label)


@dataclass(frozen=True, slots=True)
class SweepRun:
    """What one `sweep run` did."""

    cells: int                  # in the spec
    kept: int                   # already finished before this run (not run again)
    ran: int                    # finished now
    failed: tuple[tuple[str, str], ...] = field(default=())  # (cell label and seed, error)
    wall_s: float = 0.0
    table: Path | None = None


def keyed_cells(spec: SweepSpec) -> list[tuple[str, Cell]]:
    """Every cell of the spec with its content-hash key."""
    code = code_hash()
    digests = {w: workload_digest(w) for w in spec.workloads}
    return [(cell_key(c, digests[c.workload], code, spec.options), c) for c in spec.cells()]


def run_sweep(spec: SweepSpec, out: Path, *, executor: str = "local", workers: int | None = None,
              scheduler: str | None = None, progress: Progress | None = None, cluster_dir: Path | None = None,
              python_archive: Path | None = None, cells_per_task: int = 1) -> SweepRun:
    """Run the missing cells of `spec` into `out`, then write the table of all its cells; finished cells are kept on any failure."""
    t0 = time.perf_counter()
    store = CellStore(out)
    tasks = keyed_cells(spec)
    kept = store.done(k for k, _ in tasks)
    todo = [(k, c) for k, c in tasks if k not in kept]
    failed: list[tuple[str, str]] = []
    finished = 0

    def done(key: str, cell: Cell, row: dict[str, Any] | None, err: str | None) -> None:
        nonlocal finished
        finished += 1
        if row is not None:
            store.put(key, cell, row)
        else:
            failed.append((f"{cell.workload} {cell.label} seed {cell.seed}", err or "unknown error"))
        if progress:
            progress(finished, len(todo), cell.label)

    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").write_text(jsonout.dumps(_spec_doc(spec), indent=1) + "\n")
    if todo:
        if executor == "dask":
            run_dask(todo, spec.options, done, scheduler=scheduler, workers=workers)
        elif executor == "yarn":
            from yarnctl.sweep.yarn import run_yarn
            run_yarn(todo, spec.options, done, out, cluster_dir=cluster_dir, python_archive=python_archive,
                     cells_per_task=cells_per_task)
        else:
            run_local(todo, spec.options, done, workers=workers)
    table = write_table(spec, tasks, store, out / "results.csv")
    return SweepRun(len(tasks), len(kept), finished - len(failed), tuple(failed), time.perf_counter() - t0, table)


def write_table(spec: SweepSpec, tasks: list[tuple[str, Cell]], store: CellStore, path: Path) -> Path | None:
    """One row per kept cell of the spec (in spec order): workload, policy, label, every parameter, seed, metrics."""
    import pandas as pd

    names = sorted({k for _, grid in spec.grids for k, _ in grid})
    rows = []
    for key, cell in tasks:
        row = store.get(key)
        if row is None:
            continue  # failed or not run: the table holds what finished
        params = dict(cell.params)
        # an alias stands for its policy in the table, as the sweep file names it
        rows.append({"workload": cell.workload, "policy": cell.alias or cell.policy, "label": cell.label, "seed": cell.seed,
                     **{f"param.{n}": params.get(n) for n in names}, **row, "key": key})
    if not rows:
        path.unlink(missing_ok=True)  # an older spec's table must not pass for this one's
        return None
    df = pd.DataFrame(rows)
    # cell columns, the metrics in METRICS order, per job type ones, then the bookkeeping
    lead = ["workload", "policy", "label", "seed", *(f"param.{n}" for n in names)]
    metrics = [m for m in METRICS if m in df.columns]
    typed = sorted(c for c in df.columns if c not in lead and c not in metrics and c not in ("cell_s", "key"))
    df[[*lead, *metrics, *typed, "cell_s", "key"]].to_csv(path, index=False)
    return path


def _spec_doc(spec: SweepSpec) -> dict[str, Any]:
    """The expanded spec, kept beside the results so a report knows the baseline and the grid."""
    return {"name": spec.name, "workloads": list(spec.workloads), "seeds": list(spec.seeds),
            "baseline": spec.baseline, "grids": {p: {k: list(v) for k, v in g} for p, g in spec.grids},
            "aliases": dict(spec.aliases),
            **spec.options.doc()}
