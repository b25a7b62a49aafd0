"""`yarnctl`: simulate policies side by side, list workloads and policies."""

from __future__ import annotations

import argparse
import re
import logging
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn


from yarnctl import jsonout
from yarnctl import __version__
from yarnctl.cli import argtypes
from yarnctl.cli import bench as bench_cli
from yarnctl.cli import cluster as cluster_cli
from yarnctl.cli import policy as policy_cli
from yarnctl.cli import serve as serve_cli
from yarnctl.cli import sls as sls_cli
from yarnctl.cli import status as status_cli
from yarnctl.cli import sweep as sweep_cli
from yarnctl.cli import trace as trace_cli
from yarnctl.cli import whatif as whatif_cli
from yarnctl.cli.params import check_max_am_share, policy_params
from yarnctl.errors import ConfigError, YarnctlError

log = logging.getLogger("yarnctl")

# subcommand name -> handler; the modules that add subcommands register theirs in _build_parser
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}

MAIN_EPILOG = """\
start here:
  yarnctl simulate --workload haste-fig1 --policy fifo,ffd-dp   # two policies in the simulator, in a second
  yarnctl policies                                              # every policy, its paper and its parameters
  yarnctl cluster up --policy dress                             # a real local Hadoop cluster with the shim
  yarnctl status                                                # what that cluster and its policy are doing

`yarnctl COMMAND --help` explains each command. Papers are cited by key ([DRESS], [HaSTE], [OPERA],
[FEEDBACK], [H-MRF]; docs/papers.md); the guides are indexed in docs/README.md.
"""

EPILOG_SIMULATE = """\
examples:
  yarnctl simulate --workload haste-fig1 --policy fifo,ffd-dp
  yarnctl simulate --workload haste-mixed1 --policy fifo,fair,drf,capacity,ffd-dp --out out/
  yarnctl simulate --workload my.yaml --policy fair --param fair.assign_multiple=true --json
  yarnctl simulate --workload trace.json --sls-nodes topology.json --policy fifo,drf

--workload takes a built-in name (see `yarnctl workloads`), a YAML workload file
(docs/workloads.md) or a Hadoop SLS JSON trace.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line, as every other error of the CLI (subcommands inherit it)."""

    def error(self, message: str) -> NoReturn:
        """Print `message` and where the flags are described, and exit 2."""
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def _build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="yarnctl",
        description="Python scheduling policies for Hadoop YARN 2.7 (Hadoop's FIFO, Fair, DRF and Capacity, "
                    "and DRESS, HaSTE, OPERA, usage feedback and H-MRF from their papers): simulate them, "
                    "compare them, run them inside a real ResourceManager.",
        epilog=MAIN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"yarnctl {__version__}")
    p.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("simulate", help="run policies side by side on a workload in the simulator",
                       description="Run each policy on the same workload in the discrete-event simulator "
                                   "and compare makespan, waiting/completion times and utilisation.",
                       epilog=EPILOG_SIMULATE, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--workload", "-w", required=True, metavar="NAME|FILE",
                   help="built-in workload name, YAML workload file, or SLS JSON trace")
    s.add_argument("--policy", "-p", default="fifo,fair,drf,capacity,ffd-dp", metavar="P[,P...]",
                   help="comma-separated policies to compare (default: %(default)s)")
    s.add_argument("--seed", type=int, default=0, help="seed for drawn durations and arrivals (default 0)")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    s.add_argument("--out", type=argtypes.path, metavar="DIR", help="write CSV files and PNG plots into DIR")
    s.add_argument("--param", action="append", default=[], metavar="POLICY.KEY=VALUE",
                   help="set a policy parameter, e.g. fair.assign_multiple=true (repeatable)")
    s.add_argument("--policy-config", type=argtypes.path, metavar="FILE",
                   help="YAML file mapping policy name to its parameters")
    s.add_argument("--jobs", action=argparse.BooleanOptionalAction, default=None,
                   help="show the per-job table (default: when there are at most 25 jobs)")
    s.add_argument("--no-plots", action="store_true", help="with --out, write CSV only")
    s.add_argument("--max-time", type=float, default=math.inf, metavar="SECONDS",
                   help="stop each simulation at this simulated time")
    s.add_argument("--max-am-share", type=float, metavar="FRACTION",
                   help="share of cluster memory AMs may hold, for every policy (default: each policy's own, 0.5 "
                        "for most; 1 = no limit, as Hadoop's FifoScheduler)")
    s.add_argument("--explain", metavar="JOB[,JOB...]",
                   help="say why these jobs waited: each decided heartbeat that gave them nothing, with the reason "
                        "the policy gives (the last --explain-last of them per policy, and all by reason)")
    s.add_argument("--explain-last", type=int, default=10, metavar="N",
                   help="with --explain, how many of the latest reasons to list per job and policy (default 10)")
    s.add_argument("--model-noise", type=int, default=0, metavar="K",
                   help="run each policy K more times with the model's arbitrary choices drawn again (heartbeat "
                        "phases, the order of simultaneous events) and show how far its metrics and the ranking "
                        "move: a difference inside that spread is the model's, not the policies'")
    s.add_argument("--sls-nodes", metavar="FILE", help="SLS node topology JSON for an SLS trace")
    s.add_argument("--sls-container-mb", type=argtypes.positive, metavar="MB", help="SLS container memory (default 1024)")
    s.add_argument("--sls-container-vcores", type=argtypes.positive, metavar="N", help="SLS container vcores (default 1)")
    s.add_argument("--sls-node-mb", type=argtypes.positive, metavar="MB", help="SLS node memory (default 10240)")
    s.add_argument("--sls-node-vcores", type=argtypes.positive, metavar="N", help="SLS node vcores (default 10)")

    w = sub.add_parser("workloads", help="list the built-in workloads")
    w.add_argument("--json", action="store_true", help="print JSON")
    pol = sub.add_parser("policies", help="list the policies and their parameters")
    pol.add_argument("--json", action="store_true", help="print JSON")
    for module in (serve_cli, policy_cli, cluster_cli, status_cli, bench_cli, trace_cli, sls_cli, sweep_cli, whatif_cli):
        COMMANDS.update(module.add_parsers(sub))
    return p


def _cmd_simulate(args: argparse.Namespace) -> int:
    from yarnctl.cli import output
    from yarnctl.policies import REGISTRY
    from yarnctl.sim.runner import simulate
    from yarnctl.sim.workload import load_workload

    policies = [p.strip() for p in args.policy.split(",") if p.strip()]
    if not policies:
        raise ConfigError("--policy: give at least one policy")
    unknown = [p for p in policies if p not in REGISTRY]
    if unknown:
        raise ConfigError(f"unknown policy {unknown[0]!r}; valid policies: {', '.join(sorted(REGISTRY))}")
    if len(set(policies)) != len(policies):
        raise ConfigError("--policy: a policy is listed twice")
    check_max_am_share(args)
    if not args.max_time > 0:  # NaN too: it meant no limit, and 0 or less ran nothing to the end
        raise ConfigError(f"--max-time {args.max_time:g}: expected seconds > 0 (the default, inf, sets no limit)")
    params = policy_params(args, policies)
    from yarnctl.policies import make_policy
    for name in policies:
        make_policy(name, params.get(name))  # a bad parameter fails before anything is printed
    workload = load_workload(args.workload, seed=args.seed, **_sls_options(args))
    _sls_flags_apply(args)
    explain = list(dict.fromkeys(j.strip() for j in (args.explain or "").split(",") if j.strip()))
    if args.explain is not None and not explain:
        raise ConfigError("--explain: give at least one job id")
    unknown_jobs = sorted(set(explain) - {j.id for j in workload.jobs})
    if unknown_jobs:
        ids = [j.id for j in workload.jobs]
        raise ConfigError(f"--explain: no job {unknown_jobs[0]!r} in workload {workload.name}; its jobs: "
                          f"{', '.join(ids[:10])}{' ...' if len(ids) > 10 else ''}")
    if args.explain_last < 0:
        raise ConfigError(f"--explain-last: expected a count >= 0, got {args.explain_last}")
    if args.model_noise < 0:
        raise ConfigError(f"--model-noise: expected a number of extra runs >= 0, got {args.model_noise}")
    if not args.json:
        output.print_header(workload)
    started = time.perf_counter()
    progress = output.ProgressReporter(enabled=sys.stderr.isatty() or args.verbose > 0)
    with progress:
        pairs = simulate(workload, policies, params, max_time_s=args.max_time, progress=progress.for_policy,
                         max_am_share=args.max_am_share, explain=frozenset(explain))
    results = [r for r, _ in pairs]
    runs = [run for _, run in pairs]
    simulated_s = time.perf_counter() - started  # the runs compared, not the --model-noise ones
    noise = None
    if args.model_noise:
        from yarnctl.sim.noise import model_noise
        with output.ProgressReporter(enabled=progress.enabled) as more:
            noise = model_noise(workload, results, args.model_noise, params, max_time_s=args.max_time,
                                max_am_share=args.max_am_share, progress=more.for_policy)
    if args.json:
        from yarnctl.sim.report import to_json
        doc = to_json(workload.name, args.seed, results)
        if explain:
            doc["waits"] = {run.policy: [{"t": w.t, "job": w.job, "node": w.node, **w.wait.as_dict()}
                                         for w in run.waits] for run in runs}
        if noise is not None:
            doc["model_noise"] = noise.to_json()
        _print_json(doc)
    else:
        output.print_summary(results, simulated_s)
        show_jobs = args.jobs if args.jobs is not None else len(workload.jobs) <= 25
        if show_jobs:
            output.print_jobs(results)
        if explain:
            output.print_waits(runs, explain, args.explain_last)
        if noise is not None:
            output.print_model_noise(noise)
    if args.out:
        from yarnctl.sim.report import write_csv
        written = write_csv(args.out, results, runs)
        if not args.no_plots:
            from yarnctl.sim import plots
            written += plots.write_all(args.out, workload.name, results, runs)
        if not args.json:
            output.print_written(written)
    stuck = [r.policy for r in results if r.unfinished]
    if stuck:
        print(f"warning: jobs left unfinished under {', '.join(stuck)} (see 'unfinished')", file=sys.stderr)
    return 0


def _cmd_workloads(args: argparse.Namespace) -> int:
    from yarnctl.cli import output
    from yarnctl.sim.workload import builtin_names, load_workload

    rows = []
    for name in builtin_names():
        w = load_workload(name)
        rows.append({"name": name, "nodes": len(w.cluster.nodes), "jobs": len(w.jobs), "tasks": w.tasks,
                     "source": w.source, "description": w.description})
    if args.json:
        _print_json(rows)
    else:
        output.print_workloads(rows)
    return 0


def _cmd_policies(args: argparse.Namespace) -> int:
    import dataclasses
    import inspect

    from yarnctl.cli import output
    from yarnctl.policies import REGISTRY
    from yarnctl.policies.base import param_ranges

    rows = []
    for name, cls in REGISTRY.items():
        doc = inspect.getdoc(inspect.getmodule(cls)) or ""
        params = {f.name: _plain(f.default if f.default is not dataclasses.MISSING else f.default_factory())
                  for f in dataclasses.fields(cls.Config)}
        summary = doc.split("\n")[0]
        cited = re.search(r"\[(DRESS|HaSTE|OPERA|FEEDBACK|H-MRF)\]", summary)  # keys of docs/papers.md
        ranges = param_ranges(cls.Config)
        rows.append({"name": name, "summary": summary, "paper": cited.group(0) if cited else None,
                     "parameters": params, "ranges": ranges})
    if args.json:
        _print_json(rows)
    else:
        output.print_policies(rows)
    return 0


def _print_json(doc: Any) -> None:
    jsonout.dump(doc)


def _plain(v: Any) -> Any:
    if hasattr(v, "items"):
        return {k: _plain(x) for k, x in v.items()}
    if hasattr(v, "as_dict"):
        return v.as_dict()
    return v


def _sls_options(args: argparse.Namespace) -> dict[str, Any]:
    """The --sls-* flags as `parse_sls` takes them (argparse checked each size); `load_workload` applies them to SLS traces only."""
    from yarnctl.model import Resources
    from yarnctl.sim.workload.sls import SLS_CONTAINER, SLS_NODE

    sizes = {"sls_container_mb": SLS_CONTAINER.memory_mb, "sls_container_vcores": SLS_CONTAINER.vcores,
             "sls_node_mb": SLS_NODE.memory_mb, "sls_node_vcores": SLS_NODE.vcores}
    v = {k: sizes[k] if getattr(args, k) is None else getattr(args, k) for k in sizes}
    return {"container": Resources(v["sls_container_mb"], v["sls_container_vcores"]),
            "node": Resources(v["sls_node_mb"], v["sls_node_vcores"]), "topology": args.sls_nodes}


def _sls_flags_apply(args: argparse.Namespace) -> None:
    """ConfigError when an --sls-* flag was given for a workload that is not an SLS trace (it would be ignored)."""
    from yarnctl.sim.workload import is_sls

    given = [k for k in ("sls_nodes", "sls_container_mb", "sls_container_vcores", "sls_node_mb", "sls_node_vcores")
             if getattr(args, k) is not None]
    if given and not is_sls(args.workload):  # a YAML workload or a built-in has its own cluster
        raise ConfigError(f"--{given[0].replace('_', '-')}: only for an SLS trace; {args.workload} is a workload "
                          "with its own cluster")
    nodes = [k for k in given if k.startswith("sls_node_")]
    if nodes and "efr" in args.workload.split("+")[1:]:  # the variant rebuilds the nodes at its own size
        raise ConfigError(f"--{nodes[0].replace('_', '-')}: +efr sets the nodes' size itself ([FEEDBACK] Sec. V-B)")


def _check_out(args: argparse.Namespace) -> None:
    """Any command's `--out DIR`: a directory, or a path where one can be made, checked before the work rather than after it."""
    from yarnctl.paths import file_in_the_way

    out = getattr(args, "out", None)
    if not isinstance(out, Path) or getattr(args, "sweep_command", None) == "report":  # report's DIR is read, not written
        return
    blocker = file_in_the_way(out)
    if blocker is not None:
        raise ConfigError(f"--out {out}: " + ("exists and is not a directory" if blocker == out
                                              else f"{blocker} is a file, not a directory"))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `yarnctl` console script."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING - 10 * min(args.verbose, 2),
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if args.command is None:
        parser.print_help()
        return 2
    commands = {"simulate": _cmd_simulate, "workloads": _cmd_workloads, "policies": _cmd_policies, **COMMANDS}
    try:
        _check_out(args)
        return commands[args.command](args)
    except YarnctlError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
