"""`yarnctl sweep run|report`: parameter studies over workloads, policies, parameter grids and seeds, with intervals."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from yarnctl.cli import argtypes
from yarnctl.errors import ConfigError

EPILOG_RUN = """\
examples:
  yarnctl sweep run --workload dress-mr20 --policy capacity --param dress.initial_reserve=0.1:0.5:0.1 --seeds 0:9 --out /tmp/sw
  yarnctl sweep run sweep.yaml --out /tmp/sw                      # a sweep file (format below)
  yarnctl sweep run sweep.yaml --out /tmp/sw --executor dask --scheduler tcp://10.0.0.5:8786
  yarnctl sweep report /tmp/sw --baseline capacity --metric avg_completion_s

A sweep file:
  workloads: [dress-mr20]
  policies:
    capacity: {}
    dress: {initial_reserve: "0.1:0.5:0.1"}  # START:STOP:STEP (STOP included), log:START:STOP:N, [a, b], a,b
  seeds: 0:9                          # FIRST:LAST, a list, or a count
  baseline: capacity

Every finished cell is kept in OUT/cells/ under a hash of (workload content, policy, parameters, seed,
yarnctl's simulator and policy sources): a sweep killed half-way, re-run, runs only what is missing,
and a grid extended later runs only the new cells. OUT/results.csv has one row per cell.
"""

EPILOG_REPORT = """\
Per cell (a workload and a policy with its parameters): the mean over seeds and its 95% interval
(Student's t, or --ci bootstrap); with --baseline, the paired difference (same workload, same
seed) and its interval, marked significant only when the interval excludes zero. Writes
OUT/report-METRIC.md, .csv and .png.
"""


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add `sweep run` and `sweep report` to `sub`; return the handler."""
    s = sub.add_parser("sweep", help="parameter studies: a grid of simulations with confidence intervals",
                       description="Simulate every (workload, policy, parameters, seed) cell of a grid once, keep "
                                   "each, and report means with confidence intervals and paired differences.")
    ss = s.add_subparsers(dest="sweep_command", metavar="SUBCOMMAND", required=True)
    r = ss.add_parser("run", help="run the cells not yet kept and write OUT/results.csv", epilog=EPILOG_RUN,
                      formatter_class=argparse.RawDescriptionHelpFormatter,
                      description="Run a sweep: a sweep file and/or flags name the workloads, policies, parameter "
                                  "grids and seeds.")
    r.add_argument("spec", type=argtypes.path, nargs="?", metavar="SWEEP.yaml", help="sweep file (optional with flags)")
    r.add_argument("--workload", action="append", default=[], metavar="W",
                   help="a built-in workload or a workload file (repeatable; added to the file's)")
    r.add_argument("--policy", default="", metavar="P[,P...]", help="policies run at their defaults (added)")
    r.add_argument("--param", action="append", default=[], metavar="POLICY.KEY=VALUES",
                   help="a parameter grid, e.g. dress.initial_reserve=0.1:0.5:0.05, feedback.alpha=log:0.01:1:5 or "
                        "opera.threshold_s=30,60,120 (repeatable; the policy joins the sweep)")
    r.add_argument("--seeds", default=None, metavar="SEEDS",
                   help="FIRST:LAST, a,b,c or a count N (0..N-1); default the file's, else 1 seed (0)")
    r.add_argument("--baseline", default=None, metavar="CELL",
                   help="a policy run with one parameter set, or one cell's label (e.g. 'fair[reservations=True]'); "
                        "recorded for `sweep report` (optional)")
    r.add_argument("--out", type=argtypes.path, required=True, metavar="DIR", help="where cells, results.csv and reports go")
    r.add_argument("--executor", choices=("local", "dask", "yarn"), default="local",
                   help="local: processes on this machine (default); dask: a Dask cluster (--scheduler, or a "
                        "LocalCluster started here); yarn: a map-only Hadoop streaming job on the local cluster "
                        "(`yarnctl cluster up`), one map task per --cells-per-task cells")
    r.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT", help="the Dask scheduler's address")
    r.add_argument("--workers", type=argtypes.positive, default=None, metavar="N",
                   help="local processes or LocalCluster workers (default: every core)")
    r.add_argument("--cluster-dir", type=argtypes.path, default=None, metavar="DIR",
                   help="yarn: the local cluster's directory (default: the one running)")
    r.add_argument("--python-archive", type=argtypes.path, default=None, metavar="ENV.tar.gz",
                   help="yarn: a packed Python environment with yarnctl (e.g. venv-pack), shipped to every task "
                        "through the distributed cache; default: this interpreter, which the local cluster's nodes share")
    r.add_argument("--cells-per-task", type=argtypes.positive, default=1, metavar="N", help="yarn: cells per map task (default 1)")
    r.add_argument("--dry-run", action="store_true", help="print the cells and how many are kept; run nothing")

    rep = ss.add_parser("report", help="means, 95%% intervals and paired differences from OUT/results.csv",
                        epilog=EPILOG_REPORT, formatter_class=argparse.RawDescriptionHelpFormatter,
                        description="Summarise a sweep's results per cell over seeds.")
    rep.add_argument("out", type=argtypes.path, metavar="DIR", help="the --out of `sweep run`")
    rep.add_argument("--metric", default="avg_completion_s", help="the column to summarise (default avg_completion_s)")
    rep.add_argument("--baseline", default=None, metavar="CELL",
                     help="a policy (or a cell label, e.g. 'dress[initial_reserve=0.3]') to compare every cell with; "
                          "default the sweep's")
    rep.add_argument("--ci", choices=("t", "bootstrap"), default="t", help="interval of a mean (default t)")
    rep.add_argument("--no-plot", action="store_true", help="skip the PNG")
    return {"sweep": _cmd_sweep}


def _cmd_sweep(args: argparse.Namespace) -> int:
    return _run(args) if args.sweep_command == "run" else _report(args)


def _run(args: argparse.Namespace) -> int:
    from yarnctl.sweep.run import keyed_cells, run_sweep
    from yarnctl.sweep.spec import load_spec
    from yarnctl.sweep.store import CellStore

    if args.scheduler is not None:
        from yarnctl.sweep.executors import check_scheduler

        if args.executor != "dask":
            raise ConfigError("--scheduler is the Dask scheduler's address: add --executor dask")
        check_scheduler(args.scheduler)
    if (args.cluster_dir or args.python_archive) and args.executor != "yarn":
        raise ConfigError("--cluster-dir and --python-archive are for --executor yarn")
    spec = load_spec(args.spec, workloads=args.workload, policies=[p.strip() for p in args.policy.split(",") if p.strip()],
                     params=args.param, seeds=args.seeds, baseline=args.baseline)
    if args.dry_run:
        tasks = keyed_cells(spec)
        kept = CellStore(args.out).done(k for k, _ in tasks)
        for key, c in tasks:
            print(f"{'kept' if key in kept else 'todo'}  {c.workload}  {c.label}  seed {c.seed}  {key}")
        print(f"{len(tasks)} cells, {len(kept)} kept, {len(tasks) - len(kept)} to run")
        return 0
    n = len(spec.cells())
    print(f"{spec.name}: {n} cells ({len(spec.workloads)} workloads x {len(spec.grids)} policies' grids x "
          f"{len(spec.seeds)} seeds) on {args.executor}", file=sys.stderr)
    with _Bar() as bar:
        done = run_sweep(spec, args.out, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
                         progress=bar.update, cluster_dir=args.cluster_dir, python_archive=args.python_archive,
                         cells_per_task=args.cells_per_task)
    rate = done.ran / done.wall_s * 60 if done.wall_s > 0 else 0.0
    print(f"{done.cells} cells: {done.kept} kept from before, {done.ran} run now ({rate:.0f} cells/min), "
          f"{len(done.failed)} failed; {done.wall_s:.1f} s")
    if done.table:
        print(f"wrote {done.table}")
    for what, err in done.failed[:5]:
        print(f"error: {what}: {err}", file=sys.stderr)
    if done.failed:
        print(f"error: {len(done.failed)} cell(s) failed; the {done.ran + done.kept} finished are kept in "
              f"{args.out / 'cells'} (re-run to retry the rest)", file=sys.stderr)
        return 1
    return 0


def _report(args: argparse.Namespace) -> int:
    from yarnctl.sweep.report import write_report

    text, written = write_report(args.out, args.metric, args.baseline, args.ci, plot=not args.no_plot)
    print(text)
    print(f"wrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0


class _Bar:
    """A progress bar on a terminal (rich), else a line at every tenth of the cells."""

    def __enter__(self) -> _Bar:
        self._progress: Any = None
        self._task: Any = None
        self._last_tenth = -1
        if sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeRemainingColumn(), transient=True)
            self._progress.__enter__()
        return self

    def update(self, finished: int, total: int, label: str) -> None:
        """One more cell finished."""
        if self._progress is not None:
            if self._task is None:
                self._task = self._progress.add_task("cells", total=total)
            self._progress.update(self._task, completed=finished, description=label[:40])
            return
        tenth = finished * 10 // max(total, 1)
        if tenth != self._last_tenth:
            self._last_tenth = tenth
            print(f"  {finished}/{total} cells", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)
