"""`yarnctl sls`: Hadoop 2.7.7's Scheduler Load Simulator under several schedulers, reported like `simulate`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from yarnctl import jsonout
from yarnctl.cli import argtypes
from yarnctl.errors import ConfigError

EPILOG = """\
examples:
  # the shipped 1-minute trace under stock FifoScheduler and under the shim with Python fifo: overhead ratio
  yarnctl sls
  # ... plus job runtimes under haste and dress (about 4.5 minutes: SLS runs in wall-clock time)
  yarnctl sls --scheduler native-fifo,fifo,haste,dress --out /tmp/sls
  # your own trace and topology
  yarnctl sls --trace my-trace.json --nodes topology.json --scheduler native-capacity,drf --json

SLS replays a trace in real time: every run takes as long as the trace (the shipped sls-short
trace: 8 jobs, 4 nodes, about 65 s per scheduler, runs one after another). The report is the
table of `yarnctl simulate` (waiting = submit to first task container allocated, from the RM's log;
completion = submit to the end SLS records in jobruntime.csv) plus the scheduler's cost from SLS's
own metrics: mean time of the RM's handle(NODE_UPDATE) over the run, the allocations it made per
second of that time, and for shim runs the ratio to native-fifo's (see docs/sls.md).
"""


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add `sls` to `sub`; return its handler."""
    s = sub.add_parser("sls", help="run Hadoop's Scheduler Load Simulator under several schedulers and compare them",
                       description="Run Hadoop 2.7.7's Scheduler Load Simulator (hadoop-sls from Maven Central: a "
                                   "real ResourceManager with simulated NodeManagers and MapReduce AMs) on an SLS "
                                   "trace, once per scheduler: `native-fifo`, `native-capacity`, `native-fair` for "
                                   "the stock ones, any yarnctl policy for the shim (a `yarnctl serve` is started "
                                   "for it). SLS runs in wall-clock time: each run lasts as long as the trace.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--trace", "-t", default="sls-short", metavar="NAME|FILE",
                   help="SLS JSON trace, or a shipped one by name (default sls-short: 8 jobs on 4 nodes, ~65 s)")
    s.add_argument("--scheduler", "-s", default="native-fifo,fifo", metavar="S[,S...]",
                   help="schedulers to run in turn (default native-fifo,fifo)")
    s.add_argument("--nodes", type=argtypes.path, metavar="FILE", help="SLS topology JSON (default: the trace's hosts)")
    s.add_argument("--nm-memory-mb", type=argtypes.positive, default=4096, help="memory of each simulated node (default 4096)")
    s.add_argument("--nm-vcores", type=argtypes.positive, default=4, help="vcores of each simulated node (default 4)")
    s.add_argument("--container-mb", type=argtypes.positive, default=1024, help="memory of every container (default 1024)")
    s.add_argument("--container-vcores", type=argtypes.positive, default=1, help="vcores of every container (default 1)")
    s.add_argument("--capacity-scheduler", type=argtypes.path, metavar="FILE",
                   help="a capacity-scheduler.xml whose queue tree the RM runs (the trace's job.queue.name must name "
                        "its leaves): native-capacity reads it, a policy runs on the shim on CapacityScheduler and "
                        "sees the tree; maximum-am-resource-percent is 1.0 unless the file sets it")
    s.add_argument("--work-dir", type=argtypes.path, metavar="DIR",
                   help="where each run's conf, SLS output and logs go (default: OUT/work, else ~/.yarnctl/sls)")
    s.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for `yarnctl serve` under the shim (repeatable), e.g. --serve-arg=--param=...")
    s.add_argument("--timeout", type=argtypes.seconds, default=None, metavar="SECONDS",
                   help="give up on a run after this long (default: 3 x the trace's length + 120 s)")
    s.add_argument("--out", type=argtypes.path, metavar="DIR", help="write sls.json, summary.csv, jobs.csv and jobs.png into DIR")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    s.add_argument("--no-plots", action="store_true", help="with --out, write no PNG")
    s.add_argument("--jobs", action=argparse.BooleanOptionalAction, default=None,
                   help="show the per-job table (default: when there are at most 25 jobs)")
    return {"sls": _cmd_sls}


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _capacity_site(path: Path) -> str:
    """The text of a capacity-scheduler.xml, or one line saying why it is not one."""
    import xml.etree.ElementTree as ET

    try:
        text = path.read_text()
        root = ET.fromstring(text)
    except OSError as e:
        raise ConfigError(f"--capacity-scheduler {path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"--capacity-scheduler {path}: not a text file (not UTF-8)") from None
    except ET.ParseError as e:
        raise ConfigError(f"--capacity-scheduler {path}: not XML ({e})") from None
    if root.tag != "configuration" or not any(p.findtext("name", "") == "yarn.scheduler.capacity.root.queues"
                                              for p in root.iter("property")):
        raise ConfigError(f"--capacity-scheduler {path}: not a capacity-scheduler.xml (a <configuration> setting "
                          "yarn.scheduler.capacity.root.queues)")
    return text


def _cmd_sls(args: argparse.Namespace) -> int:
    from yarnctl.cluster.local import find_java_home
    from yarnctl.model import Resources
    from yarnctl.sim.workload import parse_sls
    from yarnctl.sls import shipped_traces, trace_path
    from yarnctl.sls import report as rep
    from yarnctl.sls.run import check_labels, run_once

    labels = [x.strip() for x in args.scheduler.split(",") if x.strip()]
    check_labels(labels, queues=args.capacity_scheduler is not None)
    capacity_site = _capacity_site(args.capacity_scheduler) if args.capacity_scheduler else None
    trace = trace_path(args.trace)
    if not trace.is_file():
        raise ConfigError(f"{args.trace}: no such trace file or shipped trace; shipped: {', '.join(shipped_traces())}")
    if args.nodes is not None and not args.nodes.is_file():
        raise ConfigError(f"{args.nodes}: no such topology file")
    jobs = rep.read_trace(trace)
    # the simulator's reader checks the rest (numbers, task times, container fits on a node) and counts nodes
    workload = parse_sls(trace.read_text(), str(trace), container=Resources(args.container_mb, args.container_vcores),
                         node=Resources(args.nm_memory_mb, args.nm_vcores),
                         topology=str(args.nodes) if args.nodes else None)
    find_java_home()  # no JDK: one line now, not after Maven
    length_s = max(j.end_ms for j in jobs) / 1000.0
    timeout = args.timeout if args.timeout is not None else 3 * length_s + 120
    nodes = len(workload.cluster.nodes)
    work_root = args.work_dir or ((args.out / "work") if args.out else Path.home() / ".yarnctl" / "sls")
    _say(f"{trace.name}: {len(jobs)} jobs, {workload.tasks} tasks on {nodes} simulated nodes of "
         f"{args.nm_memory_mb} MB / {args.nm_vcores} vcores; trace length {length_s:.0f} s, "
         f"{len(labels)} run(s) in wall-clock time")
    results, docs = [], []
    for label in labels:
        info = run_once(trace, label, work_root / label, nodes_file=args.nodes, nm_memory_mb=args.nm_memory_mb,
                        nm_vcores=args.nm_vcores, container_memory_mb=args.container_mb,
                        container_vcores=args.container_vcores, serve_args=args.serve_arg, timeout_s=timeout,
                        capacity_site=capacity_site, say=_say)
        r = rep.sls_result(info, jobs, nodes * args.nm_memory_mb, nodes * args.nm_vcores)
        _say(f"{label}: {'stopped' if info.timed_out else 'done'} after {info.wall_s:.0f} s "
             f"({len(r.jobs) - r.failed} of {len(r.jobs)} jobs finished); files in {info.files.work}")
        results.append(r)
        docs.append(rep.run_doc(info, r))
    ratio = rep.overhead(results)
    if args.json:
        jsonout.dump({"trace": str(trace), "results": {r.policy: r.to_json() for r in results}, "overhead": ratio},
                     default=str)
    else:
        print_comparison(results, ratio)
        show_jobs = args.jobs if args.jobs is not None else len(jobs) <= 25
        if show_jobs:
            from yarnctl.cli import output

            output.print_jobs(results)
    if args.out:
        _write(args, str(trace), results, docs, ratio)
    failed = sum(r.failed for r in results)
    if failed:
        stopped = [r.policy for r in results if r.stats.get("timed_out")]
        print(f"warning: {failed} job(s) did not finish (state in the per-job table / jobs.csv)"
              + (f"; stopped at the timeout: {', '.join(stopped)}" if stopped else ""), file=sys.stderr)
    return 0


def _write(args: argparse.Namespace, trace: str, results: Sequence[Any], docs: Sequence[dict[str, Any]],
           ratio: dict[str, dict[str, float]]) -> None:
    from yarnctl.cli import output
    from yarnctl.sim.report import write_results_csv
    from yarnctl.sls import report as rep

    args.out.mkdir(parents=True, exist_ok=True)
    written = [rep.write_json(args.out / "sls.json", trace, docs, ratio), *write_results_csv(args.out, results)]
    if not args.no_plots:
        from yarnctl.sim import plots

        written.append(plots.job_times(results, args.out / "jobs.png",
                                       f"{Path(trace).stem}: per-job waiting and completion time (SLS)"))
    if not args.json:  # with --json stdout holds only the JSON object
        output.print_written(written)


def print_comparison(results: Sequence[Any], ratio: dict[str, dict[str, float]]) -> None:
    """simulate's summary rows plus the scheduler-cost rows, one column per scheduler."""
    from rich.table import Table

    from yarnctl.cli import output

    def s(x: float | None, fmt: str = "{:,.1f}") -> str:
        return "-" if x is None else fmt.format(x)

    t = Table()
    t.add_column("metric")
    for r in results:
        t.add_column(r.policy, justify="right")
    rows: list[tuple[str, list[str]]] = [
        ("makespan (s)", [s(r.makespan_s) for r in results]),
        ("avg wait (s)", [s(r.avg_wait_s) for r in results]),
        ("median wait (s)", [s(r.median_wait_s) for r in results]),
        ("avg completion (s)", [s(r.avg_completion_s) for r in results]),
        ("median completion (s)", [s(r.median_completion_s) for r in results]),
        ("cpu allocated", [f"{100 * r.utilization['cpu']:.1f}%" for r in results]),
        ("memory allocated", [f"{100 * r.utilization['memory']:.1f}%" for r in results]),
        ("failed / unfinished jobs", [f"{r.failed} / {r.unfinished}" for r in results]),
        ("containers allocated", [f"{int(r.stats['containers']):,}" for r in results]),
        ("NODE_UPDATE calls", [f"{int(r.stats['node_updates']):,}" for r in results]),
        ("NODE_UPDATE mean (ms)", [s(r.stats["node_update_ms"], "{:.3f}") for r in results]),
        ("heartbeats / s of handle time", [s(r.stats["heartbeats_per_sched_s"], "{:,.0f}") for r in results]),
        ("allocations / s of handle time", [s(r.stats["containers_per_sched_s"], "{:,.0f}") for r in results]),
        ("allocate() mean (ms)", [s(r.stats["allocate_ms"], "{:.3f}") for r in results]),
        ("handle time vs native-fifo", [s(ratio.get(r.policy, {}).get("handle_time_ratio"), "{:.2f}x")
                                        for r in results]),
        ("throughput vs native-fifo", [s(ratio.get(r.policy, {}).get("throughput_ratio"), "{:.2f}x")
                                       for r in results]),
        ("policy calls ok / errors", [f"{int(r.stats['policy_ok']):,} / {int(r.stats['policy_errors'])}"
                                      if "policy_ok" in r.stats else "-" for r in results]),
        ("wall time (s)", [f"{r.stats.get('wall_s', 0):.0f}" for r in results]),
    ]
    for label, cells in rows:
        t.add_row(label, *cells)
    output.out.print(t)
    untimed = [r.policy for r in results if r.stats.get("timings_missing")]
    inexact = [r.policy for r in results if not r.stats.get("timing_exact", 1.0) and r.policy not in untimed]
    output.out.print("[dim]SLS (real RM, simulated NMs and AMs, wall-clock time): waiting = submit to first task "
                     "container allocated (RM log), completion = submit to the end in jobruntime.csv; handle "
                     "times are SLS's own timers over the whole run; ratios are against native-fifo[/dim]")
    if untimed:
        output.out.print(f"[yellow]SLS recorded no scheduler timings for {', '.join(untimed)} (its metrics wrapper "
                         "leaves CapacityScheduler's empty): job times only, costs shown as 0[/yellow]")
    if inexact:
        output.out.print(f"[yellow]timings of {', '.join(inexact)} cover only the last calls: the run had more "
                         "calls than SLS's timer window[/yellow]")
