"""`yarnctl bench fidelity` end to end: real runs (kept and reused), the fit, the simulator and SLS replays, files."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from yarnctl import jsonout
from yarnctl.bench import fidelity as fid
from yarnctl.bench import jvmcost
from yarnctl.bench.replay import REPLAY_VERSION, replay_jobs, sls_trace, to_workload, workload_doc
from yarnctl.bench.spec import load_spec
from yarnctl.errors import ClusterError
from yarnctl.sim.workload import Startup

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """Everything `bench fidelity` measured: the fit, every job's errors, and per mix its rankings."""

    startup: Startup
    fit_score: float
    errors: tuple[fid.JobError, ...]
    mixes: Mapping[str, Mapping[str, Any]]
    fit_near: Mapping[str, Any] | None = None  # `fid.near_best` of the fit; None when the costs were given
    jvm_start: jvmcost.StartCost | None = None  # the maps' start-up as measured, not fitted (None: too few maps)
    am_setup: jvmcost.StartCost | None = None  # the AMs' set-up as measured, not fitted (None: too few AMs)


def real_runs(mix: str, labels: Sequence[str], out: Path, cluster_dir: Path, *, rerun: bool = False,
              timeout_s: float = 1800.0, say: Say = lambda s: None) -> Path:
    """Run `mix` for real under each label not yet kept in OUT/<mix>/bench.json (each label, with `rerun`); the file's path."""
    from yarnctl.bench import mr

    spec = load_spec(mix)  # a built-in name or a file: its runs are kept under the spec's name
    path = out / spec.name / "bench.json"
    kept = fid.kept_runs(path) if path.exists() else []
    if rerun:  # only the labels asked for are run again; the others stay kept
        kept = [r for r in kept if r["label"] not in labels]
    have = {r["label"] for r in kept}
    for label in labels:
        if label in have:
            say(f"{mix}: reusing the real run under {label} kept in {path}")
            continue
        work = out / spec.name / "work" / label
        done = mr.run(spec, label, cluster_dir, work, timeout_s=timeout_s, say=say)
        kept.append(mr.run_doc(spec, done, work / "history"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"runs": kept}, indent=1) + "\n")  # after every run: an interrupted suite resumes
    return path


def sls_times(run: fid.RealRun, startup: Startup, out: Path, say: Say) -> dict[str, fid.JobTimes]:
    """Replay `run` in Hadoop SLS under the same scheduler (kept in OUT/<mix>/sls/<label>/times.json)."""
    from yarnctl.sls import report as rep
    from yarnctl.sls.run import run_once

    d = out / run.mix / "sls" / run.label
    cached = d / "times.json"
    # all of the start-up costs the SLS trace carries (SLS starts its AMs at once), how the replay made it,
    # and which real run it replays (a --rerun replaces it)
    key = [startup.launch_s, REPLAY_VERSION, _digest(run.records)]
    if cached.exists():
        doc = json.loads(cached.read_text())
        if doc.get("startup") == key:
            say(f"{run.mix}: reusing the SLS run under {run.label} kept in {cached}")
            return {k: fid.JobTimes(**v) for k, v in doc["jobs"].items()}
    jobs = replay_jobs(run.spec, run.records, run.history, startup.launch_s)
    d.mkdir(parents=True, exist_ok=True)
    trace = d / "trace.json"
    trace.write_text("\n".join(json.dumps(j) for j in sls_trace(jobs, run.spec.nodes, startup.launch_s)) + "\n")
    sizes = Counter(s.memory_mb for j in jobs for s in (j.maps, j.reduces) if s for _ in s.durations)
    container_mb = sizes.most_common(1)[0][0]  # SLS gives every task one size: the mix's commonest
    length_s = max(j.submit_s for j in jobs) + sum(d for j in jobs for d in j.maps.durations)
    info = run_once(trace, run.label, d / "work", nm_memory_mb=run.spec.nm_memory_mb, nm_vcores=run.spec.nm_vcores,
                    container_memory_mb=container_mb, timeout_s=3 * length_s + 120, say=say)
    result = rep.sls_result(info, rep.read_trace(trace), run.spec.nodes * run.spec.nm_memory_mb,
                            run.spec.nodes * run.spec.nm_vcores)
    times = {j.id: fid.JobTimes(j.wait_s, j.completion_s) for j in result.jobs}
    cached.write_text(json.dumps({"startup": key, "jobs": {k: {"wait_s": v.wait_s, "completion_s": v.completion_s}
                                                          for k, v in times.items()}}, indent=1) + "\n")
    return times


def evaluate(runs: Sequence[fid.RealRun], *, startup: Startup | None = None, sls_labels: Sequence[str] = (),
             out: Path | None = None, say: Say = lambda s: None, model: str = "linear") -> SuiteResult:
    """Fit (unless `startup` is given) under the start-up `model`, replay every run, and compare: the suite's result."""
    if startup is None:
        calib = [r for r in runs if r.label == fid.CALIBRATION]
        if not calib:
            raise ClusterError(f"no {fid.CALIBRATION} run to fit the start-up costs on; run it or give --startup")
        scores = fid.fit_scores(calib, say, fid.model_grid(model))
        startup, score = fid.best_fit(scores)
        near = fid.near_best(scores)
        say(f"fitted ({model} model): {fid.describe(fid.costs(startup))} "
            f"(mean |error| of completion on the {fid.CALIBRATION} runs: {100 * score:.1f}%)")
        say(f"as good within {100 * near['within']:g} point: {near['candidates']} candidates, {near_ranges(near)}")
    else:
        near = None
        calib_errs = [e for r in runs if r.label == fid.CALIBRATION
                      for e in fid.completion_errors(r, fid.sim_times(fid.simulate_run(r, startup)))]
        score = statistics.fmean(calib_errs) if calib_errs else math.nan
    errors: list[fid.JobError] = []
    mixes: dict[str, dict[str, Any]] = {}
    for run in runs:
        sim = fid.sim_times(fid.simulate_run(run, startup))
        sls = None
        if out is not None and run.label in sls_labels:
            try:
                sls = sls_times(run, startup, out, say)
            except ClusterError as e:  # one failed SLS run is reported as missing, not the end of the suite
                say(f"{run.mix}: SLS under {run.label} failed, left out: {e}")
        errs = fid.job_errors(run, sim, sls)
        errors += errs
        m = mixes.setdefault(run.mix, {"real": {}, "sim": {}, "sls": {}, "summary": {}})
        m["real"][run.label] = fid.mean_completion(fid.real_times(run))
        m["sim"][run.label] = fid.mean_completion(sim)
        if sls is not None:
            m["sls"][run.label] = fid.mean_completion(sls)
        m["summary"][run.label] = {"sim": fid.summary(errs, "sim"),
                                   "sls": fid.summary(errs, "sls") if sls is not None else None}
        if out is not None:
            jobs = replay_jobs(run.spec, run.records, run.history, startup.launch_s, startup.launch_per_concurrent_s,
                               startup.launch_cpu_s, startup.launch_cores, startup.launch_shared)
            doc = workload_doc(f"{run.mix}-{run.label}", run.spec, jobs, startup)
            to_workload(doc, run.mix)  # what is written is what was simulated: it parses
            (out / run.mix / f"workload-{run.label}.yaml").write_text(
                f"# {run.mix} under {run.label} as the real cluster received it (yarnctl bench fidelity)\n"
                + yaml.safe_dump(doc, sort_keys=False, width=120))
    for m in mixes.values():
        for model in ("sim", "sls"):
            if m[model]:
                real = {k: v for k, v in m["real"].items() if k in m[model]}
                agree, total = fid.rank_agreement(real, m[model])
                m[f"{model}_ranking"] = fid.ranking(m[model])
                m[f"{model}_same_order"] = fid.ranking(real) == fid.ranking(m[model])
                m[f"{model}_pairs"] = [agree, total]
                m[f"{model}_calls"] = list(fid.called_pairs(real, m[model]))
        m["real_ranking"] = fid.ranking(m["real"])
    return SuiteResult(startup, score, tuple(errors), mixes, near, jvmcost.measure(runs), jvmcost.measure_am(runs))


def near_ranges(near: Mapping[str, Any]) -> str:
    """`fid.near_best`'s ranges as a phrase: 'AM 3-20 s, launch 2-5 s, 3 s per start'."""
    return fid.describe(near)  # its `within` and `candidates` are no costs: describe leaves them out


def write(out: Path, result: SuiteResult, plots: bool = True) -> list[Path]:
    """fidelity.json, fidelity.csv (one row per job and scheduler) and fidelity.png into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    j = out / "fidelity.json"
    j.write_text(jsonout.dumps(fid.to_json(result.startup, result.fit_score, result.errors, result.mixes,
                                           result.fit_near, result.jvm_start, result.am_setup), indent=1) + "\n")
    c = out / "fidelity.csv"
    with c.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mix", "scheduler", "job", "real_wait_s", "real_completion_s", "sim_wait_s", "sim_completion_s",
                    "sls_wait_s", "sls_completion_s", "sim_completion_error", "sls_completion_error"])
        for e in result.errors:
            def r(x: float | None) -> str:
                return "" if x is None else f"{x:.3f}"
            w.writerow([e.mix, e.scheduler, e.job, r(e.real.wait_s), r(e.real.completion_s), r(e.sim.wait_s),
                        r(e.sim.completion_s), r(e.sls.wait_s if e.sls else None),
                        r(e.sls.completion_s if e.sls else None), r(e.error("sim", "completion_s")),
                        r(e.error("sls", "completion_s"))])
    written = [j, c]
    if plots:
        written.append(_plot(out / "fidelity.png", result.errors))
    return written


def _plot(path: Path, errors: Sequence[fid.JobError]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 5), constrained_layout=True)
    for ax, what, title in ((axes[0], "completion_s", "job completion time (s)"), (axes[1], "wait_s", "job waiting time (s)")):
        top = 1.0
        for model, marker, name in (("sim", "o", "yarnctl simulator"), ("sls", "x", "Hadoop SLS")):
            pts = [(getattr(e.real, what), getattr(getattr(e, model), what)) for e in errors
                   if getattr(e, model) is not None and getattr(e.real, what) is not None
                   and getattr(getattr(e, model), what) is not None]
            if pts:
                xs, ys = zip(*pts)
                ax.scatter(xs, ys, marker=marker, s=18, alpha=0.7, label=f"{name} ({len(pts)} jobs)")
                top = max(top, *xs, *ys)
        ax.plot([0, top], [0, top], color="grey", linewidth=0.8)
        ax.fill_between([0, top], [0, 0.9 * top], [0, 1.1 * top], color="grey", alpha=0.15, label="within 10%")
        ax.set_xlabel(f"real cluster: {title}")
        ax.set_ylabel(f"predicted: {title}")
        ax.legend(loc="upper left")
    fig.suptitle("yarnctl bench fidelity: predicted vs measured per job (every mix and scheduler)")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _digest(records: Sequence[Mapping[str, Any]]) -> str:
    """A short hash of a real run's job records: which run an SLS replay was made from."""
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()[:16]
