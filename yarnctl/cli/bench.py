"""`yarnctl bench`: real jobs on a real cluster under several schedulers, reported like `yarnctl simulate`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from yarnctl import jsonout
from yarnctl.cli import argtypes
from yarnctl.errors import ConfigError

EPILOG = """\
examples:
  # 8 real MapReduce jobs, 5 s apart, under the stock CapacityScheduler and under the shim running dress
  yarnctl bench mr --spec mr-mix --scheduler native-capacity,dress --out /tmp/bench
  # HiBench on a local cluster with HDFS per scheduler, tiny data
  yarnctl bench hibench --home ~/HiBench --workloads micro/wordcount,micro/terasort --profile tiny \\
      --scheduler native-capacity,dress,haste --out /tmp/hb
  # HiBench on another cluster (run once per scheduler, then merge the JSON files)
  yarnctl bench hibench --home ~/HiBench --workloads micro/wordcount,micro/sort --rm http://rm:8088 \\
      --label capacity --out /tmp/hb-capacity
  yarnctl bench report /tmp/hb-capacity/bench.json /tmp/hb-dress/bench.json --out /tmp/hb
"""


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add `bench` and its backends to `sub`; return the handler."""
    b = sub.add_parser("bench", help="run real jobs on a cluster under several schedulers and compare them",
                       description="Submit real jobs on a schedule, wait for them, read each application back from "
                                   "the ResourceManager and the JobHistoryServer, and report makespan, waiting and "
                                   "completion times like `yarnctl simulate` (table, JSON, CSV, plots). A job that "
                                   "fails is reported as failed, never averaged in.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    bs = b.add_subparsers(dest="backend", metavar="BACKEND")
    mr = bs.add_parser("mr", help="Hadoop MapReduce examples on a local cluster, one cluster per scheduler",
                       description="Start a local Hadoop 2.7.7 cluster for each scheduler in turn (`native-fifo`, "
                                   "`native-capacity`, `native-fair` for the stock ones, any yarnctl policy for the "
                                   "shim), run the bench spec's jobs on their schedule, and compare.")
    mr.add_argument("--spec", default="mr-mix", metavar="NAME|FILE",
                    help="built-in bench spec or YAML file (default mr-mix: 8 jobs, 5 s apart)")
    mr.add_argument("--scheduler", "-s", default="native-capacity,dress", metavar="S[,S...]",
                    help="schedulers to compare (default native-capacity,dress)")
    mr.add_argument("--seed", type=int, default=0, help="seed of a random submission schedule (default 0)")
    mr.add_argument("--cluster-dir", type=argtypes.path, default=None, metavar="DIR",
                    help="where the local clusters live (default ~/.yarnctl/bench-cluster)")
    mr.add_argument("--hdfs", action="store_true",
                    help="run each cluster with HDFS, as `cluster up` does (default here: file:///, as the fidelity runs "
                         "were measured): inputs are put there, and each job's maps data-local / rack-local / "
                         "off-switch are reported (Hadoop's JobCounter)")
    mr.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                    help="extra argument for `yarnctl serve` under the shim (repeatable), e.g. --serve-arg=--tune-interval=1")
    mr.add_argument("--timeout", type=argtypes.seconds, default=1800.0, metavar="SECONDS",
                    help="give up on a scheduler's run after this long (default 1800)")
    _common(mr)
    for name, what in (("hibench", "HiBench"), ("tpcds", "hive-testbench TPC-DS")):
        s = bs.add_parser(name, help=f"drive a {what} checkout against an existing cluster",
                          description=f"Run {what} benchmarks on a schedule against a running cluster and read "
                                      "each one's YARN applications from the RM (their final status decides "
                                      "success, not the suite's own report). Run once per scheduler with "
                                      "--label, then merge with `yarnctl bench report`.")
        s.add_argument("--home", type=argtypes.path, required=True, metavar="DIR", help=f"the {what} checkout")
        if name == "hibench":
            s.add_argument("--workloads", required=True, metavar="CAT/WL[,...]",
                           help="HiBench workloads, e.g. micro/wordcount,micro/sort")
            s.add_argument("--framework", default="hadoop", choices=("hadoop", "spark"),
                           help="which run script (default hadoop)")
            s.add_argument("--skip-prepare", action="store_true", help="do not run prepare.sh first")
            s.add_argument("--profile", metavar="NAME",
                           help="HiBench's hibench.scale.profile (tiny, small, large, ...; default: the checkout's conf)")
        else:
            s.add_argument("--queries", required=True, metavar="N[,N...]", help="TPC-DS query numbers, e.g. 3,7,19")
            s.add_argument("--database", required=True, help="the Hive database hive-testbench loaded")
            s.add_argument("--hive", default="hive", help="the Hive CLI (default hive)")
        s.add_argument("--interval", type=argtypes.gap, default=5.0, metavar="SECONDS",
                       help="submission gap (default 5, as in [DRESS] Sec. V-A2)")
        r = s.add_mutually_exclusive_group(required=name == "tpcds")
        r.add_argument("--rm", action="append", default=[], metavar="URL", help="ResourceManager web address")
        r.add_argument("--yarn-site", type=argtypes.path, metavar="FILE", help="read the RM address from this yarn-site.xml")
        if name == "hibench":
            r.add_argument("--scheduler", "-s", metavar="S[,S...]",
                           help="start a local cluster with HDFS for each scheduler in turn (native-capacity, ..., or "
                                "a yarnctl policy, as `bench mr --scheduler`), run the workloads, stop it")
            r.add_argument("--cluster", nargs="?", type=argtypes.path, const=Path("~/.yarnctl/cluster"), metavar="DIR",
                           help="the running local cluster `yarnctl cluster up` started (default dir "
                                "~/.yarnctl/cluster). With --scheduler or --cluster, its RM, JobHistoryServer, HDFS "
                                "and Hadoop home (DIR/hadoop) go into a HiBench conf folder under --out, and python2 "
                                "for HiBench's scripts is found or fetched (~/.yarnctl/python2)")
            s.add_argument("--nodes", type=argtypes.positive, default=None, help="NodeManagers of each --scheduler cluster (default 2)")
            s.add_argument("--cluster-dir", type=argtypes.path, default=None, metavar="DIR",
                           help="where the --scheduler clusters live (default ~/.yarnctl/bench-cluster)")
        s.add_argument("--history", metavar="URL", help="MapReduce JobHistoryServer web address (task start times)")
        s.add_argument("--label", required=name == "tpcds",
                       help="name of the scheduler this cluster runs, for the report"
                            + (" (default with --cluster: its policy, or native-<scheduler>)" if name == "hibench" else ""))
        _common(s)
    from yarnctl.cli import fidelity

    fidelity.add_parser(bs)
    rep = bs.add_parser("report", help="merge bench.json files of separate runs into one comparison")
    rep.add_argument("files", nargs="+", type=argtypes.path, metavar="BENCH.JSON")
    _common(rep)
    return {"bench": _cmd_bench}


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=argtypes.path, metavar="DIR", help="write bench.json, CSV files and plots into DIR")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.add_argument("--no-plots", action="store_true", help="with --out, write no PNG")


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.backend is None:
        raise ConfigError("bench: give a backend: mr, fidelity, hibench, tpcds or report (see yarnctl bench --help)")
    if args.backend == "fidelity":
        from yarnctl.cli import fidelity

        return fidelity.run(args)
    runs: list[dict[str, Any]] = {"mr": _mr, "hibench": _suite, "tpcds": _suite, "report": _merge}[args.backend](args)
    return _report(args, runs)


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _mr(args: argparse.Namespace) -> list[dict[str, Any]]:
    from yarnctl.bench import mr
    from yarnctl.bench.spec import load_spec

    spec = load_spec(args.spec, args.seed)
    labels = _schedulers(args.scheduler)
    mr.check_labels(labels, spec)
    root = args.cluster_dir or Path.home() / ".yarnctl" / "bench-cluster"
    runs = []
    for label in labels:
        work = (args.out or root) / "work" / label
        done = mr.run(spec, label, root, work, serve_args=args.serve_arg, timeout_s=args.timeout, say=_say,
                      hdfs=args.hdfs)
        doc = mr.run_doc(spec, done, work / "history")
        if spec.queues:
            from yarnctl.bench.fidelity import FITTED
            from yarnctl.bench.shares import compare
            from yarnctl.errors import YarnctlError

            try:
                doc["queue_shares"] = [row.to_json() for row in compare(doc, spec, FITTED)]
            except YarnctlError as e:  # the run itself is kept: bench.json and the report still carry it
                doc["queue_shares_error"] = str(e)
                _say(f"{label}: no queue shares: {e}")
        runs.append(doc)
    return runs


def _schedulers(arg: str) -> list[str]:
    """The distinct labels of a --scheduler list, in order."""
    labels = [s.strip() for s in arg.split(",") if s.strip()]
    if not labels or len(set(labels)) != len(labels):
        raise ConfigError("--scheduler: give distinct schedulers, e.g. native-capacity,dress")
    return labels


def _suite(args: argparse.Namespace) -> list[dict[str, Any]]:
    from yarnctl.bench import suites

    # the suite's scripts run in --home: every path they are given must not depend on our cwd
    out = (args.out or Path.home() / ".yarnctl" / "bench").resolve()
    args.home = args.home.expanduser().resolve()
    if args.backend == "tpcds":
        jobs = suites.tpcds_jobs(args.home, _split(args.queries), args.database, args.hive, args.interval)
        suites.check_program(args.hive, args.home, "--hive")  # else Popen's traceback, once the cluster is busy
        return [_suite_run(args, jobs, out, args.label, args.history, {})]
    jobs = suites.hibench_jobs(args.home, _split(args.workloads), args.framework, args.interval,
                               prepare=not args.skip_prepare)
    overrides = {"hibench.scale.profile": args.profile} if args.profile else {}
    if args.scheduler:
        return _hibench_per_scheduler(args, jobs, out, overrides)
    if args.nodes is not None or args.cluster_dir is not None:
        raise ConfigError("bench hibench: --nodes and --cluster-dir shape the clusters --scheduler starts; "
                          "this run uses a running cluster")
    if args.cluster is not None:
        return [_hibench_local(args, jobs, out, args.cluster.expanduser(), overrides)]
    if not (args.rm or args.yarn_site):
        raise ConfigError("bench hibench: say which cluster: --scheduler S[,S...] (local clusters started for you), "
                          "--cluster [DIR] (a running local one), --rm URL or --yarn-site FILE")
    env = {"HIBENCH_CONF_FOLDER": str(suites.hibench_conf(args.home, out / "hibench-conf", overrides=overrides))
           } if overrides else {}
    return [_suite_run(args, jobs, out, args.label, args.history, env)]


def _suite_run(args: argparse.Namespace, jobs: Sequence[Any], out: Path, label: str | None, history_url: str | None,
               env: dict[str, str], rm_urls: Sequence[str] = ()) -> dict[str, Any]:
    """Run a suite's jobs against one cluster (`rm_urls`, else --rm / --yarn-site); its bench.json run."""
    from contextlib import closing

    from yarnctl.bench import suites
    from yarnctl.cli.rmopts import resource_manager
    from yarnctl.rm import HistoryServer, HttpSettings, ResourceManager

    if not label:
        raise ConfigError(f"bench {args.backend}: --label names the scheduler of this run (e.g. capacity)")
    settings = HttpSettings()
    rm = ResourceManager(list(rm_urls), settings=settings) if rm_urls else resource_manager(args, settings)
    assert rm is not None  # --rm or --yarn-site is required without a local cluster
    history = HistoryServer(history_url, settings=settings) if history_url else None
    started = time.monotonic()
    with closing(rm):
        m = rm.metrics()  # fails early, in one line, when the RM is unreachable
        records = suites.run(jobs, rm, history, out / "logs" / label, program=args.backend, say=_say, env=env)
    return {"label": label, "spec": args.backend, "capacity_mb": m.total.memory_mb, "capacity_vcores": m.total.vcores,
            "wall_s": time.monotonic() - started, "records": [r.to_json() for r in records]}


def _python2_path() -> dict[str, str]:
    """PATH for HiBench's scripts: a python2 that runs first (unpacked under ~/.yarnctl/python2 when PATH has none)."""
    import os

    from yarnctl.bench import suites

    py2 = suites.python2(Path.home() / ".yarnctl" / "python2", say=_say)
    return {"PATH": f"{py2}{os.pathsep}{os.environ.get('PATH', '')}"} if py2 else {}


def _hibench_local(args: argparse.Namespace, jobs: Sequence[Any], out: Path, cluster_dir: Path,
                   overrides: dict[str, str], path: dict[str, str] | None = None) -> dict[str, Any]:
    """HiBench on the running local cluster in `cluster_dir`: its Hadoop home, HDFS, RM and JobHistoryServer."""
    from yarnctl.bench import suites
    from yarnctl.cluster import LocalCluster

    info = LocalCluster(cluster_dir).info()  # one line when there is no cluster there
    if info.namenode is None:
        raise ConfigError(f"the cluster in {cluster_dir} runs no HDFS (started with --no-hdfs): HiBench would write "
                          "its data to the local root; start it with `yarnctl cluster up` (HDFS by default)")
    if not (info.hadoop_home / "bin" / "hadoop").is_file():
        raise ConfigError(f"{info.hadoop_home}/bin/hadoop: missing; restart the cluster with this yarnctl (`yarnctl cluster up`)")
    label = args.label or info.policy or f"native-{info.native}"
    # HiBench's own report (hibench.report, monitor files) goes beside ours, not into the checkout
    overrides = {"hibench.report.dir": str(out / "hibench-report" / label), **overrides}
    conf = suites.hibench_conf(args.home, out / "hibench-conf" / label, hadoop_home=info.hadoop_home,
                               default_fs=info.default_fs, overrides=overrides)
    env = {"HIBENCH_CONF_FOLDER": str(conf), **(_python2_path() if path is None else path)}
    history = args.history or (info.history.url if info.history else None)
    return _suite_run(args, jobs, out, label, history, env, rm_urls=info.rm_urls)


def _hibench_per_scheduler(args: argparse.Namespace, jobs: Sequence[Any], out: Path,
                           overrides: dict[str, str]) -> list[dict[str, Any]]:
    """Start a local cluster with HDFS per scheduler (as `bench mr` does), run HiBench on it, stop it."""
    from yarnctl.bench import mr, suites
    from yarnctl.cluster import LocalCluster

    labels = _schedulers(args.scheduler)
    if args.label:
        raise ConfigError("bench hibench: --label goes with --rm or --yarn-site; with --scheduler each run is named "
                          "after its scheduler")
    mr.check_labels(labels)
    # what can fail without a cluster fails before the first one starts
    suites.hibench_conf_source(args.home)
    path = _python2_path()
    root = args.cluster_dir or Path.home() / ".yarnctl" / "bench-cluster"
    runs = []
    for label in labels:
        native, policy = mr.scheduler_of(label)
        lc = LocalCluster(root)
        _say(f"{label}: starting a local cluster with HDFS")
        lc.up(policy=policy, native=native, hdfs=True, nodes=2 if args.nodes is None else args.nodes)
        try:
            runs.append(_hibench_local(argparse.Namespace(**{**vars(args), "label": label}), jobs, out, root,
                                       overrides, path))
        finally:
            lc.down()
    return runs


def _merge(args: argparse.Namespace) -> list[dict[str, Any]]:
    from yarnctl.bench.collect import check_run
    from yarnctl.sim.workload.reader import Reader

    runs: list[dict[str, Any]] = []
    for f in args.files:
        try:
            doc = json.loads(f.read_text())
            got = doc["runs"]
            if not isinstance(got, list):
                raise KeyError("runs")
        except OSError as e:
            raise ConfigError(f"{f}: cannot read: {e.strerror or e}") from None
        except (ValueError, KeyError, TypeError):
            raise ConfigError(f"{f}: not a bench.json written by `yarnctl bench --out`") from None
        if not got:
            raise ConfigError(f"{f}: runs: empty; nothing to report (a bench.json of `yarnctl bench --out` holds a "
                              f"run per scheduler)")
        r = Reader(str(f))
        for i, run in enumerate(got):
            check_run(r, run, f"runs[{i}]")
        runs += got
    labels = [r["label"] for r in runs]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"the same label appears twice across the files: {labels}")
    return runs


def _split(text: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise ConfigError(f"expected a comma-separated list, got {text!r}")
    return items


def results_of(runs: Sequence[dict[str, Any]]) -> list[Any]:
    """One PolicyResult per run, in the runs' order."""
    from yarnctl.bench.collect import AppRecord, result

    out = []
    for run in runs:
        records = [AppRecord(**{**r, "maps_local": tuple(r.get("maps_local", ()))}) for r in run["records"]]
        out.append(result(run["label"], records, run["capacity_mb"], run["capacity_vcores"], {"wall_s": run["wall_s"]}))
    return out


def _write_tasks(path: Path, runs: Sequence[dict[str, Any]]) -> Path:
    """Every task attempt of every run, from the kept job history, in seconds from the run's first submit."""
    import csv

    from yarnctl.bench import taskstart
    from yarnctl.bench.jhist import read_jhist

    with path.open("w", newline="") as f:
        w = csv.writer(f)
        # jvm_s .. done_s: the task JVM's start-up steps from its container's syslog (bench/taskstart.py)
        w.writerow(["scheduler", "job", "app_id", "type", "attempt", "node", "start_s", "jvm_s", "task_s", "work_s",
                    "done_s", "shuffle_end_s", "finish_s", "status"])
        for run in runs:
            by_app = {r["app_id"]: r["job_id"] for r in run["records"]}
            t0 = min((r["submit_ms"] for r in run["records"] if r["submit_ms"]), default=0)
            sec = partial(_run_clock, t0)
            history = Path(run.get("history") or "/nonexistent")
            steps = taskstart.load(history.parent)
            for jh in sorted(history.glob("*.jhist")):
                h = read_jhist(jh)
                app = h.job_id.replace("job_", "application_", 1)
                for a in h.attempts:
                    s = steps.get(a.container_id)
                    steps_s = [sec(s.jvm_ms), sec(s.task_ms), sec(s.work_ms), sec(s.done_ms)] if s else ["", "", "", ""]
                    w.writerow([run["label"], by_app.get(app, ""), app, a.type, a.attempt_id, a.host, sec(a.start_ms),
                                *steps_s, sec(a.shuffle_finish_ms), sec(a.finish_ms), a.status])
    return path


def _run_clock(t0_ms: int, ms: int) -> float | str:
    """`ms` in seconds from `t0_ms`, or blank when the event never came (0)."""
    return round((ms - t0_ms) / 1000, 3) if ms else ""


def _report(args: argparse.Namespace, runs: list[dict[str, Any]]) -> int:
    from yarnctl.cli import output

    results = results_of(runs)
    if args.json:
        jsonout.dump({"runs": runs, "results": {r.policy: r.to_json() for r in results}}, default=str)
    else:
        output.print_summary(results, 0.0, measured=True)
        if len({tuple(j.id for j in r.jobs) for r in results}) == 1:  # the per-job table lines runs up by position
            output.print_jobs(results)
        if any(r.get("queue_shares") for r in runs):
            output.print_queue_shares(runs)
        if any(rec.get("maps_local") for r in runs for rec in r["records"]):
            output.print_map_locality(runs)
    if args.out:
        from yarnctl.sim.report import write_results_csv

        args.out.mkdir(parents=True, exist_ok=True)
        bench_json = args.out / "bench.json"
        bench_json.write_text(json.dumps({"runs": runs}, indent=1) + "\n")
        written = [bench_json, *write_results_csv(args.out, results)]
        if any(r.get("history") for r in runs):
            written.append(_write_tasks(args.out / "tasks.csv", runs))
        if not args.no_plots:
            from yarnctl.sim import plots

            written.append(plots.job_times(results, args.out / "jobs.png",
                                           f"{runs[0]['spec']}: per-job waiting and completion time (measured)"))
        if not args.json:
            output.print_written(written)
    failed = sum(r.failed for r in results)
    if failed:
        print(f"warning: {failed} job(s) did not succeed (state in jobs.csv / the per-job table)", file=sys.stderr)
    return 0
