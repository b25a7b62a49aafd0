"""One SLS run's outputs as `simulate`'s report: per-job times, makespan, allocation, plus scheduler costs."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yarnctl import jsonout
from yarnctl.bench.collect import AppRecord, result
from yarnctl.errors import ClusterError, WorkloadError
from yarnctl.sim.report import PolicyResult
from yarnctl.sls import outputs
from yarnctl.sls.run import SlsRunInfo, serve_status

# SLSRunner reads these with .toString() and no null check: a trace without them dies in the JVM
_JOB_KEYS = ("am.type", "job.start.ms", "job.end.ms", "job.queue.name", "job.id", "job.tasks")
_TASK_KEYS = ("container.host", "container.start.ms", "container.end.ms", "container.priority", "container.type")


@dataclass(frozen=True, slots=True)
class TraceJob:
    """A job of an SLS trace as far as the report needs it."""

    id: str
    start_ms: int
    end_ms: int
    user: str
    queue: str
    tasks: int


def read_trace(path: Path) -> list[TraceJob]:
    """The jobs of an SLS trace, refusing what SLSRunner would crash on (one line naming the field)."""
    from yarnctl.sim.workload import json_values

    source = str(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise WorkloadError(source, "", f"cannot read: {e.strerror}") from None
    docs = json_values(text, source)
    if len(docs) == 1 and isinstance(docs[0], list):
        docs = docs[0]
    if not docs:
        raise WorkloadError(source, "", "the trace has no jobs")
    jobs = []
    for i, d in enumerate(docs):
        if not isinstance(d, dict):
            raise WorkloadError(source, f"job[{i}]", "expected a JSON object")
        for k in _JOB_KEYS:
            if d.get(k) is None:
                raise WorkloadError(source, f"job[{i}].{k}", "missing (SLSRunner needs it)")
        if d["am.type"] != "mapreduce":
            raise WorkloadError(source, f"job[{i}].am.type", f"only 'mapreduce' is simulated, got {d['am.type']!r}")
        tasks = d["job.tasks"]
        if not isinstance(tasks, list) or not tasks:
            raise WorkloadError(source, f"job[{i}].job.tasks", "expected a non-empty list (SLS skips such a job)")
        for t, task in enumerate(tasks):
            where = f"job[{i}].job.tasks[{t}]"
            if not isinstance(task, dict):
                raise WorkloadError(source, where, "expected a JSON object")
            for k in _TASK_KEYS:
                if task.get(k) is None:
                    raise WorkloadError(source, f"{where}.{k}", "missing (SLSRunner needs it)")
            if not str(task["container.host"]).startswith("/") or str(task["container.host"]).count("/") != 2:
                raise WorkloadError(source, f"{where}.container.host",
                                    f"expected /rack/host, got {task['container.host']!r}")
        try:
            start, end = int(d["job.start.ms"]), int(d["job.end.ms"])
        except (TypeError, ValueError):
            raise WorkloadError(source, f"job[{i}].job.start.ms", "expected integer milliseconds") from None
        jobs.append(TraceJob(str(d["job.id"]), start, end, str(d.get("job.user") or "default"),
                             str(d["job.queue.name"]), len(tasks)))
    ids = [j.id for j in jobs]
    if len(set(ids)) != len(ids):
        raise WorkloadError(source, "job.id", "two jobs share an id")
    return jobs


def match_jobs(trace: Sequence[TraceJob], rows: Sequence[outputs.JobRuntime],
               tasks_by_app: dict[str, list[int]]) -> dict[str, outputs.JobRuntime]:
    """Trace job id -> its jobruntime row (SLS logs the new app id only): by trace times, then task count, then order."""
    out: dict[str, outputs.JobRuntime] = {}
    free = sorted(rows, key=lambda r: r.app_id)
    for job in sorted(trace, key=lambda j: (j.start_ms, j.end_ms)):
        same = [r for r in free if (r.trace_start_ms, r.trace_end_ms) == (job.start_ms, job.end_ms)]
        exact = [r for r in same if len(tasks_by_app.get(r.app_id, [])) == job.tasks]
        candidates = exact or same
        if candidates:
            out[job.id] = candidates[0]
            free.remove(candidates[0])
    return out


def sls_result(info: SlsRunInfo, trace: Sequence[TraceJob], capacity_mb: int, capacity_vcores: int) -> PolicyResult:
    """The PolicyResult of one SLS run: jobs from jobruntime.csv + the RM log, costs from SLS's metrics."""
    f = info.files
    rows = outputs.read_jobruntime(f.output / "jobruntime.csv")
    allocs, summaries = outputs.read_rm_log(f.log)
    track = outputs.read_realtimetrack(f.output / "realtimetrack.json")
    matched = match_jobs(trace, rows, allocs.tasks_ms)
    # runner clock -> epoch: an app's RM start time is its AM simulator's first step
    offsets = [summaries[r.app_id].start_ms - r.sim_start_ms for r in rows if r.app_id in summaries]
    if not offsets and rows:
        raise ClusterError(f"{f.log}: no ApplicationSummary lines; was the log level lowered?")
    # no job finished (a run stopped at its timeout): the runner started about when the first AM was allocated
    t0 = int(statistics.median(offsets)) if offsets else min(allocs.am_ms.values(), default=0)
    records = []
    for job in trace:
        row = matched.get(job.id)
        if row is None:
            records.append(AppRecord(job.id, "sls", "", job.user, job.queue, t0 + job.start_ms, 0, 0, "MISSING",
                                     job.tasks, 0, 0, ""))
            continue
        s = summaries.get(row.app_id)
        starts = allocs.tasks_ms.get(row.app_id, [])
        records.append(AppRecord(job.id, "sls", row.app_id, job.user, job.queue, t0 + row.sim_start_ms,
                                 min(starts) if starts else 0, t0 + row.sim_end_ms,
                                 s.final_status if s else "SUCCEEDED", job.tasks, s.memory_seconds if s else 0,
                                 s.vcore_seconds if s else 0, "rm-log" if starts else ""))
    # SLS's per-second track when it has one; an empty track (its writer died at startup) is not "0 running":
    # count from the RM log instead, which sees every allocation and completion
    peak = outputs.peak_running_containers(track)
    stats = cost_stats(info, allocs.total, allocs.peak_live if peak is None else peak)
    stats["timed_out"] = float(info.timed_out)
    stats["track_rows"] = float(len(track))
    return result(info.label, records, capacity_mb, capacity_vcores, stats)


def cost_stats(info: SlsRunInfo, containers: int, peak_running: int) -> dict[str, float]:
    """Scheduler costs of a run: calls and exact mean duration per operation, allocation throughput, shim counters."""
    m = info.files.output / "metrics"
    window = info.conf.timer_window
    nu = outputs.op_cost(m, "handle.NODE_UPDATE", window)
    handle = outputs.op_cost(m, "handle", window)
    alloc = outputs.op_cost(m, "allocate", window)
    # SLS 2.7 times the scheduler through its wrapper's metrics, which CapacityScheduler's runs leave
    # without NODE_UPDATE timings: the jobs' times stand, the scheduler's cost is unknown (0, timings_missing)
    missing = nu.calls == 0 or nu.mean_ms is None
    mean_ms = 0.0 if missing or nu.mean_ms is None else nu.mean_ms
    busy_s = nu.calls * mean_ms / 1000.0
    stats: dict[str, float] = {
        "wall_s": info.wall_s, "containers": containers, "peak_running_containers": peak_running,
        "node_updates": nu.calls, "node_update_ms": mean_ms, "node_update_busy_s": busy_s,
        "timings_missing": float(missing),
        "heartbeats_per_sched_s": 1000.0 / mean_ms if mean_ms else 0.0,
        "containers_per_sched_s": containers / busy_s if busy_s else 0.0,
        "handle_calls": handle.calls, "handle_ms": handle.mean_ms or 0.0,
        "allocate_calls": alloc.calls, "allocate_ms": alloc.mean_ms or 0.0,
        "timing_exact": float(nu.exact and handle.exact and alloc.exact),
    }
    st = serve_status(info.files.serve_status)
    if st:
        stats.update({"policy_calls": st.get("calls", 0), "policy_ok": st.get("ok", 0),
                      "policy_errors": st.get("errors", 0), "policy_rejected": st.get("rejected", 0),
                      "containers_by_policy": st.get("assigned", 0), "policy_p99_us_le": st.get("p99_us_le") or 0})
    return stats


def overhead(results: Sequence[PolicyResult], baseline: str = "native-fifo") -> dict[str, dict[str, float]]:
    """Per shim run: its NODE_UPDATE mean time and allocation throughput relative to `baseline`'s."""
    base = next((r for r in results if r.policy == baseline), None)
    if base is None or not base.stats.get("node_update_ms"):
        return {}
    out = {}
    for r in results:
        if r.policy.startswith("native-") or not r.stats.get("node_update_ms"):
            continue
        out[r.policy] = {
            "handle_time_ratio": r.stats["node_update_ms"] / base.stats["node_update_ms"],
            "throughput_ratio": (r.stats["containers_per_sched_s"] / base.stats["containers_per_sched_s"]
                                 if base.stats.get("containers_per_sched_s") else 0.0),
        }
    return out


def run_doc(info: SlsRunInfo, r: PolicyResult) -> dict[str, Any]:
    """The sls.json entry of one run: what ran, where its files are, and its result."""
    return {"label": info.label, "scheduler_class": info.scheduler_class, "policy": info.policy,
            "work_dir": str(info.files.work), "log": str(info.files.log), "wall_s": round(info.wall_s, 1),
            "result": r.to_json()}


def write_json(path: Path, trace: str, docs: Sequence[dict[str, Any]], ratio: dict[str, dict[str, float]]) -> Path:
    """sls.json: every run's result and the overhead ratios."""
    doc = {"trace": trace, "runs": list(docs), "overhead": ratio}
    path.write_text(jsonout.dumps(doc, indent=1, default=str) + "\n")
    return path
