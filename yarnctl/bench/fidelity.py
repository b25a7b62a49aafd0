"""The fidelity benchmark: how far the simulator (and Hadoop SLS) are from the real cluster on the same jobs.

Each mix of the suite runs for real under every scheduler (`bench mr`, kept in OUT/<mix>/bench.json
with its job history); each run is replayed (`bench/replay.py`) in the simulator under the matching
policy, and in SLS; per job, the predicted waiting and completion times are compared with the real
ones. What starting a container costs is fitted once, on the calibration scheduler's runs only
(`fit_startup`), so every other scheduler's error is out of sample; the mixes are all in the fit, and
`cross_validate` leaves each out in turn to say how the fit carries to a mix it has not seen.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from yarnctl.bench.jhist import JobHistory
from yarnctl.bench.jvmcost import StartCost
from yarnctl.bench.replay import histories, replay_jobs, to_workload, workload_doc
from yarnctl.bench.spec import BenchSpec, load_spec
from yarnctl.errors import ClusterError
from yarnctl.sim.records import SimRun
from yarnctl.sim.report import SAME_RANK_MARGIN, PolicyResult, close
from yarnctl.sim.workload import Startup

SUITE = ("fid-wide", "fid-mixed", "fid-reduce", "fid-big", "fid-examples")
SCHEDULERS = ("native-fifo", "native-capacity", "native-fair", "fifo", "dress")
CALIBRATION = "native-fifo"  # the runs the start-up costs are fitted on: the scheduler with the fewest choices
# docs/fidelity.md's latest fit (2026-11-30, the Xeon, with the AM's take-up), for replays run without one (bench mr)
FITTED = Startup(10.0, 3.0, 3.0)
# the grid the fit searches: AM start-up, a task's launch cost, and its growth per container starting beside it
GRID_AM_S = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0)
GRID_LAUNCH_S = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0)
GRID_PER_CONCURRENT_S = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0)
# the processor-shared start-up model's grid (`--model cpu`, yarnctl/sim/jvmstart.py): the NodeManagers share
# one machine, and a job's start costs CPU there for its client, its AM's JVM and start-up and its tasks' JVMs
GRID_CPU: dict[str, tuple[float, ...]] = {
    "am_s": (1.0, 3.0, 5.0), "launch_s": (0.0, 1.0, 2.0, 3.0), "launch_cpu_s": (1.5, 2.0, 2.5, 3.0, 4.0),
    "am_cpu_s": (0.0, 1.0, 2.0, 3.0), "client_cpu_s": (0.0, 1.0, 2.0, 3.0), "launch_cores": (1.0, 1.5, 2.0)}
MODELS = ("linear", "cpu")  # the start-up models a fit can search (`model_grid`)
# each cost's short name (a table's column) and how it reads in a line ("AM 8 s, launch 6 s, 0.5 s per start")
COST_LABELS = {"am_s": ("AM", "AM {} s"), "launch_s": ("launch", "launch {} s"),
               "launch_per_concurrent_s": ("per start", "{} s per start"), "launch_cpu_s": ("JVM", "JVM {} CPU-s"),
               "am_cpu_s": ("AM CPU", "AM start-up {} CPU-s"), "client_cpu_s": ("client", "client {} CPU-s"),
               "launch_cores": ("cores", "on {} cores")}
NEAR_FIT = 0.01  # candidates within a point of mean |error| of the best fit are as good on one machine's runs
TARGET_MEDIAN, TARGET_P90 = 0.10, 0.25  # issue 21's targets for the |error| of job completion (docs/fidelity.md)
# the simulator's counterpart of a real scheduler: policy, its parameters and the AM-share limit it enforces
# (None: the policy's own). The local cluster's capacity-scheduler.xml sets maximum-am-resource-percent 0.5;
# Hadoop 2.7's FifoScheduler has no AM limit at all; FairScheduler and CapacityScheduler reserve nodes.
COUNTERPART: dict[str, tuple[str, dict[str, Any], float | None]] = {
    "native-fifo": ("fifo", {}, 1.0),
    "native-capacity": ("capacity", {"max_am_resource_percent": 0.5, "reservations": True}, None),
    "native-fair": ("fair", {"reservations": True}, None),
}


@dataclass(frozen=True, slots=True)
class RealRun:
    """One scheduler's real run of one mix: its records and kept job history."""

    mix: str
    label: str
    spec: BenchSpec
    records: tuple[Mapping[str, Any], ...]
    history: Mapping[str, JobHistory]


@dataclass(frozen=True, slots=True)
class JobTimes:
    """A job's waiting and completion time, seconds from its submit."""

    wait_s: float | None
    completion_s: float | None


@dataclass(frozen=True, slots=True)
class JobError:
    """One job of one run: the real times and what the simulator and SLS predicted."""

    mix: str
    scheduler: str
    job: str
    real: JobTimes
    sim: JobTimes
    sls: JobTimes | None

    def error(self, model: str, what: str) -> float | None:
        """|predicted - real| / real of `what` (wait_s or completion_s) under `model` (sim or sls)."""
        pred = getattr(self, model)
        if pred is None:
            return None
        p, r = getattr(pred, what), getattr(self.real, what)
        return None if p is None or not r else abs(p - r) / r


def counterpart(label: str) -> tuple[str, dict[str, Any], float | None]:
    """The simulated policy, its parameters and AM-share override for a real run's scheduler label."""
    return COUNTERPART.get(label, (label, {}, None))


def kept_runs(path: Path) -> list[dict[str, Any]]:
    """The runs of a bench.json written by `bench mr`; ClusterError naming the file when it is not one."""
    try:
        runs = json.loads(path.read_text())["runs"]
        if not isinstance(runs, list) or not all(isinstance(r, dict) and "label" in r for r in runs):
            raise TypeError("no list of runs")
        if not all(isinstance(r.get("records"), list) for r in runs):
            raise TypeError("a run without its records")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ClusterError(f"{path}: not a bench.json of `yarnctl bench mr` ({e}); remove it to run again") from None
    return runs


def load_runs(path: Path, mix: str) -> list[RealRun]:
    """The real runs of `mix` kept in `path` (a bench.json of `bench mr` with each run's history dir)."""
    spec = load_spec(mix)
    out = []
    for r in kept_runs(path):
        beside = path.parent / "work" / r["label"] / "history"
        hist_dir = Path(r.get("history") or beside)
        if not hist_dir.is_absolute():
            hist_dir = path.parent / hist_dir
        if not hist_dir.is_dir() and beside.is_dir():
            hist_dir = beside  # the OUT directory was moved, or unpacked from an archive of kept runs
        out.append(RealRun(spec.name, str(r["label"]), spec, tuple(r["records"]), histories(hist_dir)))
    return out


def real_times(run: RealRun) -> dict[str, JobTimes]:
    """Each succeeded job's real waiting (to its first task) and completion time."""
    out = {}
    for r in run.records:
        if r.get("final_status") != "SUCCEEDED":
            continue
        sub, first, fin = r.get("submit_ms"), r.get("first_task_ms"), r.get("finish_ms")
        out[str(r["job_id"])] = JobTimes((first - sub) / 1000.0 if first and sub else None,
                                         (fin - sub) / 1000.0 if fin and sub else None)
    return out


def replay(run: RealRun, startup: Startup, sample_queues_s: float = 0.0, phases: Sequence[float] = ()) -> SimRun:
    """Replay one real run in the simulator under its scheduler's counterpart (sampling its queues if asked).

    `phases`: each NodeManager's heartbeat phase, a fraction of the interval (none: evenly spread).
    """
    from yarnctl.engine import Engine
    from yarnctl.policies import make_policy
    from yarnctl.sim.cluster import SimCluster

    jobs = replay_jobs(run.spec, run.records, run.history, startup.launch_s, startup.launch_per_concurrent_s,
                       startup.launch_cpu_s, startup.launch_cores, startup.launch_shared)
    workload = to_workload(workload_doc(f"{run.mix}-{run.label}", run.spec, jobs, startup, phases),
                           f"{run.mix}/{run.label}")
    policy, params, am_share = counterpart(run.label)
    engine = Engine(make_policy(policy, params), max_am_share=am_share)
    return SimCluster(workload, engine, sample_queues_s=sample_queues_s).run()


def simulate_run(run: RealRun, startup: Startup, phases: Sequence[float] = ()) -> PolicyResult:
    """Replay one real run in the simulator under its scheduler's counterpart, summarized."""
    from yarnctl.sim.report import summarize

    return summarize(replay(run, startup, phases=phases))


def sim_times(result: PolicyResult) -> dict[str, JobTimes]:
    """Each job's simulated waiting and completion time."""
    return {j.id: JobTimes(j.wait_s, j.completion_s) for j in result.jobs}


def completion_errors(run: RealRun, predicted: Mapping[str, JobTimes]) -> list[float]:
    """|predicted - real| / real completion of each job of `run` that both have."""
    real = real_times(run)
    return [abs(p - r) / r for job, t in real.items()
            if (r := t.completion_s) and (p := predicted.get(job, JobTimes(None, None)).completion_s) is not None]


def model_grid(model: str = "linear") -> list[Startup]:
    """The candidate start-up costs a fit searches under `model` (one of MODELS), in their tie-break order."""
    if model == "linear":
        return [Startup(*p) for p in itertools.product(GRID_AM_S, GRID_LAUNCH_S, GRID_PER_CONCURRENT_S)]
    if model == "cpu":
        grid = []
        for p in itertools.product(*GRID_CPU.values()):
            values: dict[str, Any] = dict(zip(GRID_CPU, p))  # costs only (no flag such as take_up among them)
            grid.append(Startup(**values, launch_shared=True))
        return grid
    raise ValueError(f"{model}: no such start-up model; known: {', '.join(MODELS)}")


def costs(st: Startup) -> dict[str, float]:
    """The start-up costs `st` sets, by field name: the linear model's three, and the CPU model's when it is on."""
    keys = [f for f in COST_LABELS if f in ("am_s", "launch_s", "launch_per_concurrent_s") or st.launch_cores > 0]
    return {k: float(getattr(st, k)) for k in keys}


def cost_fields(st: Startup) -> dict[str, Any]:
    """`st` as JSON, without `take_up`: not a cost, and every replay has it on (replay.workload_doc)."""
    return {k: v for k, v in asdict(st).items() if k != "take_up"}


def describe(values: Mapping[str, Any]) -> str:
    """Start-up costs (`costs`, or `near_best`'s [low, high] ranges) as one line: 'AM 8 s, launch 6 s, 0.5 s per start'."""
    def one(key: str) -> str:
        v = values[key]
        text = f"{v[0]:g}" if isinstance(v, list) and v[0] == v[1] else (
            f"{v[0]:g}-{v[1]:g}" if isinstance(v, list) else f"{v:g}")
        return COST_LABELS[key][1].format(text)

    return ", ".join(one(k) for k in COST_LABELS if k in values)


def fit_scores(runs: Sequence[RealRun], say: Callable[[str], None] = lambda s: None,
               grid: Sequence[Startup] | None = None) -> list[tuple[float, Startup]]:
    """Each candidate's mean |error| of job completion on `runs`, in grid order."""
    if grid is None:
        grid = model_grid()
    say(f"fitting start-up costs on {len(runs)} run(s): {len(grid)} candidates")
    out = []
    for st in grid:
        errs = [e for run in runs for e in completion_errors(run, sim_times(simulate_run(run, st)))]
        out.append((statistics.fmean(errs) if errs else math.inf, st))
    return out


def best_fit(scores: Sequence[tuple[float, Startup]]) -> tuple[Startup, float]:
    """The candidate of least error; the first of equals, so grid order is the tie-break."""
    best: tuple[float, Startup] | None = None
    for score, st in scores:
        if best is None or score < best[0] - 1e-12:
            best = (score, st)
    if best is None:
        raise ClusterError("no run to fit the start-up costs on")
    return best[1], best[0]


def fit_startup(runs: Sequence[RealRun], say: Callable[[str], None] = lambda s: None,
                grid: Sequence[Startup] | None = None) -> tuple[Startup, float]:
    """The start-up costs under which the simulator best predicts `runs` (mean |error| of job completion)."""
    return best_fit(fit_scores(runs, say, grid))


def near_best(scores: Sequence[tuple[float, Startup]], within: float = NEAR_FIT) -> dict[str, Any]:
    """How well the runs pin the costs down: the candidates within `within` of the least error, and each cost's range."""
    least = min(score for score, _ in scores)
    near = [st for score, st in scores if score <= least + within]
    return {"within": within, "candidates": len(near),
            **{k: [min(getattr(st, k) for st in near), max(getattr(st, k) for st in near)] for k in costs(near[0])}}


def cross_validate(runs: Sequence[RealRun], say: Callable[[str], None] = lambda s: None,
                   grid: Sequence[Startup] | None = None) -> dict[str, Any]:
    """Leave one mix out: each mix's runs replayed with start-up costs fitted on the other mixes' calibration runs.

    The fit of `bench fidelity` sees every mix (its calibration scheduler's runs), so its other
    schedulers are out of sample but its mixes are not; this says how the fitted model carries to
    a mix it has not seen, as it must for any workload the simulator is asked about.
    """
    mixes = list(dict.fromkeys(r.mix for r in runs))
    if len(mixes) < 2:
        raise ClusterError("leaving one mix out needs the runs of at least two mixes")
    out: dict[str, Any] = {}
    held: list[float] = []
    for mix in mixes:
        calib = [r for r in runs if r.mix != mix and r.label == CALIBRATION]
        if not calib:
            raise ClusterError(f"no {CALIBRATION} run outside {mix} to fit the start-up costs on")
        say(f"{mix} left out: fitting on the {CALIBRATION} runs of {', '.join(r.mix for r in calib)}")
        st, score = fit_startup(calib, say, grid)
        errs = [e for r in runs if r.mix == mix for e in completion_errors(r, sim_times(simulate_run(r, st)))]
        held += errs
        out[mix] = {"startup": cost_fields(st), "fit_mean_error": score, "jobs": len(errs),
                    "completion_median": percentile(errs, 0.5), "completion_p90": percentile(errs, 0.9)}
    return {"mixes": out, "jobs": len(held), "completion_median": percentile(held, 0.5),
            "completion_p90": percentile(held, 0.9)}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One candidate's scores on every run: completion |error| median, p90 and mean, clear pairs alike, jobs scored."""

    startup: Startup
    median: float
    p90: float
    mean: float
    pairs: tuple[int, int]
    jobs: int  # the real jobs the simulator also finished: a candidate that leaves some unfinished is not comparable

    def doc(self) -> dict[str, Any]:
        """As JSON: its costs and scores."""
        return {"startup": cost_fields(self.startup), "completion_median": self.median, "completion_p90": self.p90,
                "completion_mean": self.mean, "pairs": list(self.pairs)}


def score_everywhere(runs: Sequence[RealRun], st: Startup) -> Candidate:
    """`st` scored on every run: the per-job errors pooled, and each mix's clear pairs (inf errors for no job)."""
    errs: list[float] = []
    real: dict[str, dict[str, float | None]] = {}
    pred: dict[str, dict[str, float | None]] = {}
    for run in runs:
        times = sim_times(simulate_run(run, st))
        errs += completion_errors(run, times)
        real.setdefault(run.mix, {})[run.label] = mean_completion(real_times(run))
        pred.setdefault(run.mix, {})[run.label] = mean_completion(times)
    alike = total = 0
    for mix, r in real.items():
        a, t = rank_agreement(r, pred[mix])
        alike, total = alike + a, total + t
    if not errs:
        return Candidate(st, math.inf, math.inf, math.inf, (alike, total), 0)
    median, p90 = percentile(errs, 0.5), percentile(errs, 0.9)
    assert median is not None and p90 is not None  # errs is not empty
    return Candidate(st, median, p90, statistics.fmean(errs), (alike, total), len(errs))


def ceiling(runs: Sequence[RealRun], grid: Sequence[Startup], say: Callable[[str], None] = lambda s: None
            ) -> dict[str, Any]:
    """Every candidate of `grid` scored on every run in hindsight: what the model's costs can reach on these runs.

    A fit picks its costs on some runs and is judged on all; this picks on all of them, so no
    candidate of the grid does better here, and a target none meets is out of the model's reach on
    these runs. A target some meet says the model can express it, not that a fit on fewer runs would
    find those costs. Candidates under which the simulator leaves a real job unfinished are counted
    apart and not ranked. Ties go to the earlier candidate in grid order; `most_pairs` prefers the
    least mean error among those ordering as many pairs alike.
    """
    if not runs:
        raise ClusterError("no run to score the candidates on")
    say(f"scoring {len(grid)} candidates on every one of {len(runs)} run(s), in hindsight")
    jobs = sum(1 for run in runs for t in real_times(run).values() if t.completion_s)
    if not jobs:
        raise ClusterError(f"no job finished in the {len(runs)} real run(s): nothing to score the candidates on")
    scored, unfinished = [], 0
    for i, st in enumerate(grid, 1):
        c = score_everywhere(runs, st)
        if c.jobs == jobs:
            scored.append(c)
        else:
            unfinished += 1
        if i % 500 == 0:
            say(f"  {i} of {len(grid)} candidates scored")
    if not scored:
        raise ClusterError(f"every one of the {len(grid)} candidates leaves some of the {jobs} real jobs unfinished "
                           "in the simulator: nothing to rank")
    totals = {c.pairs[1] for c in scored}
    if len(totals) != 1:  # every run has all its jobs: the clear pairs are the real cluster's alone
        raise ClusterError(f"the candidates count different clear pairs ({sorted(totals)}): their counts do not compare")
    meeting = [c for c in scored if c.median <= TARGET_MEDIAN and c.p90 <= TARGET_P90]
    alike = [c.pairs[0] for c in scored]

    def least(cs: Sequence[Candidate], key: Callable[[Candidate], Any]) -> dict[str, Any] | None:
        return min(cs, key=key).doc() if cs else None  # min keeps the first of equals: grid order

    return {"candidates": len(grid), "unfinished": unfinished, "runs": len(runs), "jobs": jobs,
            "targets": {"median": TARGET_MEDIAN, "p90": TARGET_P90}, "meeting": len(meeting),
            "least_mean": least(scored, lambda c: c.mean),
            "least_p90_at_median": least([c for c in scored if c.median <= TARGET_MEDIAN], lambda c: c.p90),
            "least_median_at_p90": least([c for c in scored if c.p90 <= TARGET_P90], lambda c: c.median),
            "most_pairs": least(scored, lambda c: (-c.pairs[0], c.mean)),
            "pairs_alike": [min(alike), max(alike)], "pairs_total": totals.pop()}


def percentile(xs: Sequence[float], q: float) -> float | None:
    """The q-quantile (0..1) by linear interpolation, None for no values."""
    if not xs:
        return None
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def job_errors(run: RealRun, sim: Mapping[str, JobTimes], sls: Mapping[str, JobTimes] | None) -> list[JobError]:
    """Per job of `run`: real, simulated and (if run) SLS times."""
    return [JobError(run.mix, run.label, job, t, sim.get(job, JobTimes(None, None)),
                     None if sls is None else sls.get(job, JobTimes(None, None)))
            for job, t in sorted(real_times(run).items())]


def summary(errors: Iterable[JobError], model: str) -> dict[str, float | None]:
    """Median and p90 of |error| of completion and waiting over `errors`."""
    out: dict[str, float | None] = {}
    errs = list(errors)
    for what, key in (("completion_s", "completion"), ("wait_s", "wait")):
        xs = [e for x in errs if (e := x.error(model, what)) is not None]
        out[f"{key}_median"] = percentile(xs, 0.5)
        out[f"{key}_p90"] = percentile(xs, 0.9)
    return out


def mean_completion(times: Mapping[str, JobTimes]) -> float | None:
    """The average completion time of the jobs that finished."""
    xs = [t.completion_s for t in times.values() if t.completion_s is not None]
    return statistics.fmean(xs) if xs else None


def ranking(avg: Mapping[str, float | None]) -> list[str]:
    """Schedulers from the lowest average completion time to the highest (name breaks ties)."""
    return sorted((k for k, v in avg.items() if v is not None), key=lambda k: (avg[k], k))


def rank_agreement(real: Mapping[str, float | None], pred: Mapping[str, float | None],
                   margin: float = SAME_RANK_MARGIN) -> tuple[int, int]:
    """(pairs ordered alike, pairs compared): pairs whose real averages differ by more than `margin`."""
    agree = total = 0
    for a, b in itertools.combinations(sorted(real), 2):
        ra, rb, pa, pb = real[a], real[b], pred.get(a), pred.get(b)
        if None in (ra, rb, pa, pb):
            continue
        assert ra is not None and rb is not None and pa is not None and pb is not None
        if close(ra, rb, margin):
            continue
        total += 1
        agree += (ra < rb) == (pa < pb)
    return agree, total


def called_pairs(real: Mapping[str, float | None], pred: Mapping[str, float | None],
                 margin: float = SAME_RANK_MARGIN) -> tuple[int, int, int]:
    """Of the pairs `pred` puts more than `margin` apart (its calls): (real alike and clear, reversed and clear, real within)."""
    alike = reversed_ = within = 0
    for a, b in itertools.combinations(sorted(real), 2):
        ra, rb, pa, pb = real[a], real[b], pred.get(a), pred.get(b)
        if ra is None or rb is None or pa is None or pb is None or close(pa, pb, margin):
            continue
        if close(ra, rb, margin):
            within += 1
        elif (ra < rb) == (pa < pb):
            alike += 1
        else:
            reversed_ += 1
    return alike, reversed_, within


def repeated_pairs(rounds: Sequence[Mapping[str, float | None]],
                   margin: float = SAME_RANK_MARGIN) -> Iterator[tuple[str, str, bool]]:
    """(a, b, whether a comes first) for each pair of labels, in name order, that every round orders alike by > `margin`."""
    labels = sorted(set.intersection(*(set(r) for r in rounds))) if rounds else []
    for a, b in itertools.combinations(labels, 2):
        # a pair one round leaves unordered (too close, or missing) is not one the cluster repeats
        orders = {None if (ra := real[a]) is None or (rb := real[b]) is None or close(ra, rb, margin)
                  else ra < rb for real in rounds}
        if len(orders) == 1 and None not in orders:
            yield a, b, orders.pop() is True


def repeatable_agreement(rounds: Sequence[Mapping[str, float | None]], pred: Mapping[str, float | None],
                         margin: float = SAME_RANK_MARGIN) -> tuple[int, int]:
    """(pairs ordered alike, pairs compared) over the pairs every real round orders alike by more than `margin`."""
    agree = total = 0
    for a, b, a_first in repeated_pairs(rounds, margin):
        pa, pb = pred.get(a), pred.get(b)
        if pa is None or pb is None:
            continue
        total += 1
        agree += (pa < pb) == a_first
    return agree, total


def repeatable_within(rounds: Sequence[Mapping[str, float | None]], low: Mapping[str, float], high: Mapping[str, float],
                      margin: float = SAME_RANK_MARGIN) -> tuple[int, int]:
    """(pairs the prediction can order alike, pairs compared) over the pairs every round repeats, given each label's range.

    A pair the rounds order a < b can be ordered alike when a's lowest prediction is below b's highest:
    each real run had its own NodeManager phase, so each label may sit anywhere in its range.
    """
    agree = total = 0
    for a, b, a_first in repeated_pairs(rounds, margin):
        if not {a, b} <= low.keys() & high.keys():
            continue
        total += 1
        first, second = (a, b) if a_first else (b, a)
        agree += low[first] < high[second]
    return agree, total


def phase_range(runs: Sequence[Sequence[RealRun]], startup: Startup,
                phases: Sequence[Sequence[float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Each label's simulated average completion (the mean of its replays, one per round), lowest and highest over `phases`."""
    low: dict[str, float] = {}
    high: dict[str, float] = {}
    for p in phases:
        per: dict[str, list[float]] = {}
        for rr in runs:
            for r in rr:
                per.setdefault(r.label, []).append(mean_completion(sim_times(simulate_run(r, startup, p))) or math.nan)
        for label, xs in per.items():
            if len(xs) == len(runs) and not any(math.isnan(x) for x in xs):
                m = statistics.fmean(xs)
                low[label], high[label] = min(low.get(label, m), m), max(high.get(label, m), m)
    return low, high


def phase_draws(nodes: int, steps: int) -> list[tuple[float, ...]]:
    """`steps` heartbeat phases of `nodes` NodeManagers: two nodes, the second at each step of the interval after
    the first; more, the first at 0 and the others drawn at random (seeded: the same draws every time)."""
    if nodes <= 1:
        return [(0.0,)] if nodes == 1 else []
    if nodes == 2:
        return [(0.0, k / steps) for k in range(steps)]
    rng = random.Random(steps)
    return [(0.0, *(rng.random() for _ in range(nodes - 1))) for _ in range(steps)]


def across_rounds(rounds: Sequence[Sequence[RealRun]], startup: Startup, phase_steps: int = 0) -> dict[str, Any]:
    """Real rounds of the same runs against the first: the per-job spread, rankings repeated, and the simulator's pairs.

    Per mix: (pairs a round orders as the first, clear pairs of the first) for each later round,
    the simulator's replay of the last round against it, and the simulator (the mean of its replays
    of every round) on the pairs every round orders alike (`repeatable_agreement`); with `phase_steps`,
    also the pairs it can order alike at some of that many heartbeat phases of each run (`repeatable_within`).
    """
    first = {(r.mix, r.label): r for r in rounds[0]}
    spread: list[float] = []
    for later in rounds[1:]:
        for r in later:
            base = first.get((r.mix, r.label))
            if base is None:
                continue
            one, two = real_times(base), real_times(r)
            spread += [abs(b - a) / a for j, t in one.items() if j in two
                       and (a := t.completion_s) and (b := two[j].completion_s) is not None]
    mixes: dict[str, Any] = {}
    for mix in sorted({r.mix for r in rounds[0]}):
        real = [{r.label: mean_completion(real_times(r)) for r in rr if r.mix == mix} for rr in rounds]
        sims = [{r.label: mean_completion(sim_times(simulate_run(r, startup))) for r in rr if r.mix == mix}
                for rr in rounds]
        common = set.intersection(*(set(x) for x in sims))
        sim: dict[str, float | None] = {}
        for label in sorted(common):
            xs = [x[label] for x in sims]
            sim[label] = None if None in xs else statistics.fmean(x for x in xs if x is not None)
        mixes[mix] = {"rounds_alike": [list(rank_agreement(real[0], r)) for r in real[1:]],
                      "sim_on_last": list(rank_agreement(real[-1], sims[-1])),
                      "sim_repeatable": list(repeatable_agreement(real, sim)),
                      "real_rankings": [ranking(r) for r in real]}
        if phase_steps:
            mine = [[r for r in rr if r.mix == mix] for rr in rounds]
            low, high = phase_range(mine, startup, phase_draws(mine[0][0].spec.nodes, phase_steps))
            mixes[mix]["sim_repeatable_phases"] = list(repeatable_within(real, low, high))
    return {"rounds": len(rounds), "spread_median": percentile(spread, 0.5), "spread_p90": percentile(spread, 0.9),
            "jobs": len(spread), "mixes": mixes}


def to_json(fit: Startup, fit_score: float, errors: Sequence[JobError], mixes: Mapping[str, Any],
            fit_near: Mapping[str, Any] | None = None, jvm_start: StartCost | None = None,
            am_setup: StartCost | None = None) -> dict[str, Any]:
    """The fidelity.json document: the fit (and how well the runs pin it), the measured start-up lines (a map's
    start-up, an AM's set-up), every job's times, and per mix the rankings."""
    return {"startup": cost_fields(fit), "fit_mean_error": fit_score, "fit_near": fit_near,
            "jvm_start": None if jvm_start is None else asdict(jvm_start),
            "am_setup": None if am_setup is None else asdict(am_setup), "calibration": CALIBRATION,
            "jobs": [{"mix": e.mix, "scheduler": e.scheduler, "job": e.job, "real": asdict(e.real),
                      "sim": asdict(e.sim), "sls": None if e.sls is None else asdict(e.sls)} for e in errors],
            "mixes": mixes}
