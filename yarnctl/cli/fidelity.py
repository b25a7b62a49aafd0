"""`yarnctl bench fidelity`: the simulator's and SLS's per-job error against the real local cluster."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yarnctl import jsonout
from yarnctl.cli import argtypes
from yarnctl.errors import ConfigError
from yarnctl.sim.report import SAME_RANK_MARGIN

if TYPE_CHECKING:
    from yarnctl.sim.workload import Startup

DESCRIPTION = """\
Run each mix of the fidelity suite on the local real Hadoop 2.7.7 cluster under every scheduler
(`bench mr`; runs already kept in OUT/<mix>/bench.json are reused, so an interrupted suite resumes),
fit what starting a container costs on the native-fifo runs (AM start-up, launch, growth per
container starting beside it; or, with --model cpu, the CPU-seconds each start takes on the cores the
NodeManagers share), replay every run in the simulator under the matching policy and in
Hadoop SLS, and print per job how far each prediction is from what the real cluster did, plus
whether each mix ranks the schedulers as the real cluster does (docs/fidelity.md).
"""
EPILOG = """\
examples:
  # the whole suite (5 mixes x 5 schedulers, about an hour of real runs, then SLS)
  yarnctl bench fidelity --out ~/fidelity
  # one mix, two schedulers, no SLS; fail if the simulator's median completion error exceeds 20%
  yarnctl bench fidelity --mix fid-mixed --scheduler native-fifo,native-fair --no-sls --max-median-error 20
  # re-score kept runs with given start-up costs (AM s, launch s, per concurrent launch s) instead of a fit
  yarnctl bench fidelity --out ~/fidelity --startup 4,3,0.5 --no-sls
  # ... or any of a workload's cluster.startup keys (docs/workloads.md), here the CPU model's
  yarnctl bench fidelity --out ~/fidelity --no-sls --startup am_s=1,launch_s=3,launch_cpu_s=1.5,am_cpu_s=3,client_cpu_s=3,launch_cores=1.5,launch_shared=true
  # fit the CPU model instead of the linear one, and see how it carries to a mix it has not seen
  yarnctl bench fidelity --out ~/fidelity --no-sls --model cpu --cross-validate
  # a second round of two mixes beside the first: how far the real cluster is from itself, which
  # scheduler pairs both rounds order alike, and how many of those the simulator gets
  yarnctl bench fidelity --mix fid-mixed,fid-wide --out ~/fidelity-2 --round ~/fidelity --startup 10,3,3 --no-sls
  # how the fitted start-up costs carry to a mix they were not fitted on (leave each mix out in turn)
  yarnctl bench fidelity --out ~/fidelity --no-sls --cross-validate
  # the best any start-up costs of the CPU model reach on the kept runs, picked in hindsight
  yarnctl bench fidelity --out ~/fidelity --no-sls --model cpu --ceiling
"""


def add_parser(bs: Any) -> None:
    """Add the `fidelity` backend to `bench`'s subparsers."""
    from yarnctl.bench import fidelity as fid

    p = bs.add_parser("fidelity", help="measure the simulator (and SLS) against the real local cluster",
                      description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mix", default=",".join(fid.SUITE), metavar="M[,M...]",
                   help=f"bench specs to run (default the suite: {', '.join(fid.SUITE)})")
    p.add_argument("--scheduler", "-s", default=",".join(fid.SCHEDULERS), metavar="S[,S...]",
                   help=f"schedulers (default {','.join(fid.SCHEDULERS)}; {fid.CALIBRATION} is needed for the fit)")
    p.add_argument("--sls-scheduler", default="native-fifo,native-capacity,native-fair", metavar="S[,S...]",
                   help="schedulers also replayed in SLS (default the three stock ones; SLS runs in wall-clock time)")
    p.add_argument("--no-sls", action="store_true", help="do not run SLS")
    p.add_argument("--startup", metavar="AM_S,LAUNCH_S,PER_S",
                   help="use these start-up costs instead of fitting them: three numbers (the linear model), or "
                        "KEY=VALUE pairs of a workload's cluster.startup (e.g. am_s=1,launch_cpu_s=2,launch_cores=2)")
    p.add_argument("--model", choices=fid.MODELS, default="linear",
                   help="the start-up model the fit searches: linear (AM start-up, launch, and more per container "
                        "starting beside it; 1,200 candidates) or cpu (each start's CPU-seconds, its client's and its "
                        "AM's too, processor-shared on the machine's cores; 2,880 candidates); default linear")
    p.add_argument("--rerun", action="store_true", help="run the real runs of the chosen mixes and schedulers again, even if kept in OUT (others stay kept)")
    p.add_argument("--max-median-error", type=argtypes.percent, metavar="PCT",
                   help="exit 1 if the simulator's median |error| of job completion exceeds PCT percent")
    p.add_argument("--cluster-dir", type=argtypes.path, metavar="DIR", help="where the local clusters live "
                   "(default ~/.yarnctl/bench-cluster)")
    p.add_argument("--timeout", type=argtypes.seconds, default=1800.0, metavar="SECONDS", help="give up on a real run after this long")
    p.add_argument("--out", type=argtypes.path, metavar="DIR", help="where runs and results are kept (default ~/.yarnctl/fidelity)")
    p.add_argument("--round", type=argtypes.path, action="append", default=[], metavar="DIR", dest="rounds",
                   help="also score the real runs kept in DIR (another `bench fidelity --out`, the same mixes) as "
                        "another round: the real cluster's spread between rounds and the scheduler pairs every round "
                        "orders alike (repeatable); written to OUT/rounds.json")
    p.add_argument("--phases", type=int, default=0, metavar="K",
                   help="with --round: also replay every run at K NodeManager heartbeat phases (two nodes: the second "
                        "at each K-th of the interval after the first) and count the repeatable pairs the simulator "
                        "can order alike at some phase of each run (each real run had its own, unknown phase)")
    p.add_argument("--cross-validate", action="store_true",
                   help="also leave each mix out in turn: fit the start-up costs on the other mixes' native-fifo "
                        "runs and score the mix left out (how the fit carries to a workload it has not seen; "
                        "about 50 s of replays per mix on 2 cores; writes OUT/crossval.json)")
    p.add_argument("--ceiling", action="store_true",
                   help="also score every candidate of --model's grid on every run, in hindsight: how many meet the "
                        f"targets (median |error| of completion <= {100 * fid.TARGET_MEDIAN:.0f}%%, p90 <= "
                        f"{100 * fid.TARGET_P90:.0f}%%), and the best any of the model's costs reach on these runs: "
                        "whether the model can express the targets at all (about 3 min of replays for the linear "
                        "model's grid on 25 runs, 7 for cpu's, on 2 cores; writes OUT/ceiling.json)")
    p.add_argument("--json", action="store_true", help="print fidelity.json instead of tables")
    p.add_argument("--no-plots", action="store_true", help="write no PNG")


def run(args: argparse.Namespace) -> int:
    """The `bench fidelity` command."""
    from yarnctl.bench import fidelity as fid
    from yarnctl.fidelity import suite
    from yarnctl.bench.mr import check_labels
    from yarnctl.bench.spec import load_spec
    from yarnctl.sim.workload import Startup

    mixes = _split(args.mix, "--mix")
    labels = _split(args.scheduler, "--scheduler")
    check_labels(labels)
    sls_labels = [] if args.no_sls else [x for x in _split(args.sls_scheduler, "--sls-scheduler") if x in labels]
    startup = None
    if args.startup:
        startup = _startup(args.startup)
    elif fid.CALIBRATION not in labels:
        raise ConfigError(f"--scheduler: include {fid.CALIBRATION} (the fit's runs) or give --startup")
    if args.startup and args.model != "linear" and not (args.cross_validate or args.ceiling):
        raise ConfigError(f"--model {args.model}: nothing to fit with --startup given (unless --cross-validate, "
                          "whose folds are fitted under it, or --ceiling, which scores its grid)")
    if args.cross_validate and len(mixes) < 2:
        raise ConfigError(f"--cross-validate: needs at least two mixes (--mix), got {len(mixes)}: each is scored "
                          "with costs fitted on the others' runs")
    if args.cross_validate and fid.CALIBRATION not in labels:
        raise ConfigError(f"--cross-validate: needs {fid.CALIBRATION} among the schedulers (--scheduler): the "
                          "costs are fitted on its runs")
    if args.phases and not args.rounds:
        raise ConfigError("--phases needs --round DIR: it counts the pairs every real round repeats")
    if args.phases < 0 or args.phases > 1000:
        raise ConfigError(f"--phases {args.phases}: expected a number of phases from 1 to 1000 (0: off)")
    for m in mixes:
        load_spec(m)  # a bad mix fails here, before any cluster starts
    others = [_round(d, mixes, labels) for d in args.rounds]  # a missing round fails before any cluster starts
    out = args.out or Path.home() / ".yarnctl" / "fidelity"
    cluster_dir = args.cluster_dir or Path.home() / ".yarnctl" / "bench-cluster"
    runs = []
    for mix in mixes:
        path = suite.real_runs(mix, labels, out, cluster_dir, rerun=args.rerun, timeout_s=args.timeout, say=_say)
        runs += [r for r in fid.load_runs(path, mix) if r.label in labels]
    result = suite.evaluate(runs, startup=startup, sls_labels=sls_labels, out=out, say=_say, model=args.model)
    written = suite.write(out, result, plots=not args.no_plots)
    across = None
    if others:
        across = fid.across_rounds([runs, *others], result.startup, args.phases)
        across["dirs"] = [str(out), *(str(d) for d in args.rounds)]
        (out / "rounds.json").write_text(jsonout.dumps(across, indent=1) + "\n")
        written.append(out / "rounds.json")
    crossval = None
    if args.cross_validate:
        crossval = fid.cross_validate(runs, _say, fid.model_grid(args.model))
        (out / "crossval.json").write_text(jsonout.dumps(crossval, indent=1) + "\n")
        written.append(out / "crossval.json")
    bound = None
    if args.ceiling:
        bound = fid.ceiling(runs, fid.model_grid(args.model), _say)
        bound["model"] = args.model
        (out / "ceiling.json").write_text(jsonout.dumps(bound, indent=1) + "\n")
        written.append(out / "ceiling.json")
    if args.json:
        doc = json.loads(written[0].read_text())
        if across is not None:
            doc["rounds"] = across
        if crossval is not None:
            doc["cross_validation"] = crossval
        if bound is not None:
            doc["ceiling"] = bound
        jsonout.dump(doc)
    else:
        _print(result)
        if across is not None:
            _print_rounds(across)
        if crossval is not None:
            _print_crossval(crossval, result, given=startup is not None)
        if bound is not None:
            _print_ceiling(bound)
        from yarnctl.cli import output

        output.print_written(written)
    overall = fid.summary(result.errors, "sim")["completion_median"]
    if args.max_median_error is not None and overall is not None and 100 * overall > args.max_median_error:
        print(f"error: the simulator's median |error| of job completion is {100 * overall:.1f}%, above "
              f"--max-median-error {args.max_median_error:g}%", file=sys.stderr)
        return 1
    return 0


def _round(path: Path, mixes: list[str], labels: list[str]) -> list[Any]:
    """The real runs another `bench fidelity --out` kept for `mixes` and `labels`: one more round."""
    from yarnctl.bench import fidelity as fid

    runs = []
    for mix in mixes:
        kept = path / mix / "bench.json"
        if not kept.is_file():
            raise ConfigError(f"--round {path}: no {kept} (run `yarnctl bench fidelity --mix {mix} --out {path}` first)")
        runs += [r for r in fid.load_runs(kept, mix) if r.label in labels]
    return runs


def _print_rounds(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from yarnctl.cli import output

    phases = any("sim_repeatable_phases" in m for m in doc["mixes"].values())
    t = Table(title=f"{doc['rounds']} real rounds (OUT's first, then each --round): clear pairs ordered alike")
    for col in ("mix", "each --round vs OUT", "sim vs the last round", "sim on pairs every round repeats",
                *(["... at some phase"] if phases else []), "fastest per round"):
        t.add_column(col)
    for mix, m in doc["mixes"].items():
        reach = ["{}/{}".format(*m["sim_repeatable_phases"])] if phases else []
        t.add_row(mix, ", ".join(f"{a}/{n}" for a, n in m["rounds_alike"]), "{}/{}".format(*m["sim_on_last"]),
                  "{}/{}".format(*m["sim_repeatable"]), *reach, ", ".join(r[0] if r else "-" for r in m["real_rankings"]))
    output.out.print(t)
    output.out.print(f"the same job under one scheduler, each --round against OUT ({doc['jobs']} jobs): "
                     f"{_pct(doc['spread_median'])} apart at the median, {_pct(doc['spread_p90'])} at p90, of OUT's times")


def _print_crossval(doc: dict[str, Any], result: Any, given: bool) -> None:
    from rich.table import Table

    from yarnctl.bench import fidelity as fid
    from yarnctl.cli import output
    from yarnctl.sim.workload import Startup

    st = result.startup
    costs = f"({', '.join(f'{v:g}' for v in fid.costs(st).values())})"
    main = f"given by --startup {costs}" if given else f"fitted on every mix {costs}"
    t = Table(title="each mix left out of the fit: job completion |error| median / p90")
    folds = {mix: Startup(**m["startup"]) for mix, m in doc["mixes"].items()}
    names = ", ".join(fid.COST_LABELS[k][0] for k in fid.costs(next(iter(folds.values()))))
    for col in ("mix left out", f"fitted on the others ({names})", "left out", main):
        t.add_column(col, justify="left" if col == "mix left out" else "right")
    for mix, m in doc["mixes"].items():
        f = folds[mix]
        every = fid.summary([e for e in result.errors if e.mix == mix], "sim")
        t.add_row(mix, ", ".join(f"{v:g}" for v in fid.costs(f).values()),
                  f"{_pct(m['completion_median'])} / {_pct(m['completion_p90'])}",
                  f"{_pct(every['completion_median'])} / {_pct(every['completion_p90'])}")
    output.out.print(t)
    every = fid.summary(result.errors, "sim")
    output.out.print(f"every mix scored with a fit that did not see it ({doc['jobs']} jobs): "
                     f"{_pct(doc['completion_median'])} median, {_pct(doc['completion_p90'])} p90 "
                     f"(with the costs {main}: {_pct(every['completion_median'])} / {_pct(every['completion_p90'])})")


def _print_ceiling(doc: dict[str, Any]) -> None:
    from yarnctl.bench import fidelity as fid
    from yarnctl.cli import output
    from yarnctl.sim.workload import Startup

    t = doc["targets"]
    output.out.print(f"in hindsight, the {doc['model']} model's {doc['candidates']} candidates each scored on all "
                     f"{doc['runs']} runs: {doc['meeting']} meet both targets (completion |error| median <= "
                     f"{100 * t['median']:.0f}%, p90 <= {100 * t['p90']:.0f}%); clear pairs alike "
                     f"{doc['pairs_alike'][0]}-{doc['pairs_alike'][1]} of {doc['pairs_total']} over the grid")
    if doc["unfinished"]:
        output.out.print(f"  left out: {doc['unfinished']} candidates under which the simulator does not finish "
                         f"every one of the {doc['jobs']} real jobs")
    for key, name in (("least_mean", "least mean |error| (a fit on every run)"),
                      ("least_p90_at_median", f"least p90 with the median <= {100 * t['median']:.0f}%"),
                      ("least_median_at_p90", f"least median with the p90 <= {100 * t['p90']:.0f}%"),
                      ("most_pairs", "most clear pairs alike")):
        c = doc[key]
        if c is None:
            output.out.print(f"  {name}: none")
            continue
        output.out.print(f"  {name}: {fid.describe(fid.costs(Startup(**c['startup'])))}: "
                         f"{100 * c['completion_median']:.1f}% / {100 * c['completion_p90']:.1f}%, "
                         f"{c['pairs'][0]} of {c['pairs'][1]} clear pairs alike")


def _startup(text: str) -> Startup:
    """--startup: three numbers (AM_S,LAUNCH_S,PER_S), or KEY=VALUE pairs checked as a workload's cluster.startup."""
    from yarnctl.errors import WorkloadError
    from yarnctl.sim.workload.parse import Parser

    items = [x.strip() for x in text.split(",")]
    raw: dict[str, Any] = {}
    if not any("=" in x for x in items):
        try:
            raw = dict(zip(("am_s", "launch_s", "launch_per_concurrent_s"), (float(x) for x in items), strict=True))
        except ValueError:
            raise ConfigError(f"--startup {text}: expected three numbers AM_S,LAUNCH_S,PER_S, e.g. 4,3,0.5, "
                              "or KEY=VALUE pairs, e.g. am_s=1,launch_cpu_s=2,launch_cores=2") from None
        items = []  # nothing more to read
    for item in items:
        key, eq, value = (x.strip() for x in item.partition("="))
        if not eq or not key:
            raise ConfigError(f"--startup {text}: expected KEY=VALUE, got {item!r}")
        if key in raw:
            raise ConfigError(f"--startup {text}: {key} given twice")
        if key == "take_up":  # the parser would take it, and the replay would override it
            raise ConfigError(f"--startup {text}: take_up is always on in a replay: the real MR AMs took up "
                              "their containers on their heartbeat")
        if key == "launch_shared" or value.lower() in ("true", "false"):
            raw[key] = {"true": True, "false": False}.get(value.lower(), value)  # the parser names anything else
            continue
        try:
            raw[key] = float(value)
        except ValueError:
            raise ConfigError(f"--startup {text}: {key}: expected a number, got {value!r}") from None
    try:
        return Parser("--startup", 0).startup(raw)
    except WorkloadError as e:
        raise ConfigError(f"--startup {text}: {e.field}: {e.problem}") from None


def _pct(x: float | None) -> str:
    """A fraction as a whole percentage, '-' for none."""
    return "-" if x is None else f"{100 * x:.0f}%"


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _split(text: str, flag: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items or len(set(items)) != len(items):
        raise ConfigError(f"{flag}: expected distinct comma-separated names, got {text!r}")
    return items


def _print(result: Any) -> None:
    from rich.table import Table

    from yarnctl.bench import fidelity as fid
    from yarnctl.cli import output

    t = Table(title="per-job |error| against the real cluster: median / p90")
    for col in ("mix", "scheduler", "real avg (s)", "sim compl.", "sim wait", "SLS compl.", "SLS wait"):
        t.add_column(col, justify="left" if col in ("mix", "scheduler") else "right", no_wrap=col in ("mix", "scheduler"))
    for mix, m in result.mixes.items():
        for label, s in m["summary"].items():
            sim, sls = s["sim"], s["sls"] or {}
            t.add_row(mix, label, f"{m['real'][label]:.1f}" if m["real"][label] else "-",
                      f"{_pct(sim['completion_median'])} / {_pct(sim['completion_p90'])}",
                      f"{_pct(sim['wait_median'])} / {_pct(sim['wait_p90'])}",
                      f"{_pct(sls.get('completion_median'))} / {_pct(sls.get('completion_p90'))}" if sls else "-",
                      f"{_pct(sls.get('wait_median'))} / {_pct(sls.get('wait_p90'))}" if sls else "-")
    output.out.print(t)
    r = Table(title="scheduler ranking by average completion (best first)")
    for col in ("mix", "real cluster", "simulator", "SLS"):
        r.add_column(col)
    for mix, m in result.mixes.items():
        def cell(model: str) -> str:
            if f"{model}_ranking" not in m:
                return "-"
            agree, total = m[f"{model}_pairs"]
            return (f"{' < '.join(m[f'{model}_ranking'])}\n{'same order' if m[f'{model}_same_order'] else 'differs'}"
                    f"; {agree}/{total} clear pairs alike")
        r.add_row(mix, " < ".join(m["real_ranking"]), cell("sim"), cell("sls"))
    output.out.print(r)
    cal = [e for e in result.errors if e.scheduler == fid.CALIBRATION]
    oos = [e for e in result.errors if e.scheduler != fid.CALIBRATION]
    for name, errs in (("all jobs", result.errors), (f"fitted on ({fid.CALIBRATION})", cal),
                       ("out of sample", oos)):
        if not errs:
            continue
        sim, sls = fid.summary(errs, "sim"), fid.summary(errs, "sls")
        output.out.print(f"{name} ({len(errs)}): simulator completion {_pct(sim['completion_median'])} median, "
                         f"{_pct(sim['completion_p90'])} p90; wait {_pct(sim['wait_median'])} median"
                         + (f" | SLS completion {_pct(sls['completion_median'])} median, {_pct(sls['completion_p90'])} "
                            f"p90" if sls["completion_median"] is not None else ""))
    for model, name in (("sim", "simulator"), ("sls", "SLS")):
        calls = [m[f"{model}_calls"] for m in result.mixes.values() if f"{model}_calls" in m]
        if calls:
            alike, reversed_, within = (sum(c[i] for c in calls) for i in range(3))
            output.out.print(f"the {name}'s calls, pairs it puts more than {100 * SAME_RANK_MARGIN:.0f}% apart: "
                             f"{alike + reversed_ + within}; the real cluster ordered {alike} alike, reversed "
                             f"{reversed_}, kept {within} within {100 * SAME_RANK_MARGIN:.0f}%")
    output.out.print(f"[dim]start-up costs: {fid.describe(fid.costs(result.startup))}; "
                     f"clear pairs: real averages more than {100 * SAME_RANK_MARGIN:.0f}% apart[/dim]")
    from yarnctl.bench.jvmcost import describe

    for line in (result.jvm_start, result.am_setup):
        if line is not None:
            output.out.print(f"[dim]measured in the job histories: {describe(line)}[/dim]")
    if result.fit_near is not None:
        from yarnctl.fidelity.suite import near_ranges

        near = result.fit_near
        output.out.print(f"[dim]as good within {100 * near['within']:g} point of the fit's error: "
                         f"{near['candidates']} candidates, {near_ranges(near)}[/dim]")
