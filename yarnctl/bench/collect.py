"""Per-app records of a real run, read back from the RM and the JobHistoryServer, as `simulate`'s report."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

from yarnctl.bench.jhist import locality_of
from yarnctl.errors import RMError
from yarnctl.rm import AppInfo, HistoryServer, ResourceManager
from yarnctl.sim.report import JobResult, PolicyResult
from yarnctl.sim.workload.reader import Reader, show

JOB_COUNTER = "org.apache.hadoop.mapreduce.JobCounter"
_STATES = {"SUCCEEDED": "succeeded", "FAILED": "failed", "KILLED": "killed"}


@dataclass(frozen=True, slots=True)
class AppRecord:
    """One bench job as the cluster saw it; times in ms since the epoch, 0 when unknown."""

    job_id: str
    program: str
    app_id: str
    user: str
    queue: str
    submit_ms: int
    first_task_ms: int  # earliest task start (JobHistoryServer); the AM's start when the JHS has no record
    finish_ms: int
    final_status: str   # SUCCEEDED | FAILED | KILLED | UNDEFINED | MISSING (no application was found)
    tasks: int
    memory_seconds: int
    vcore_seconds: int
    start_source: str   # "history" | "am" | "" : where first_task_ms came from
    planned_ms: int = 0  # when the bench meant it to reach the RM (submit_ms is when it did); 0: no plan
    # its maps launched data-local, rack-local and off-switch (the job's JobCounter); () when unknown
    maps_local: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """This record as a JSON object."""
        return asdict(self)


def check_run(r: Reader, raw: Any, path: str) -> None:
    """WorkloadError naming the field at `path` unless `raw` is a run as bench.json keeps it, with every field a report reads."""
    m = r.required(raw, path, ("label", "spec", "capacity_mb", "capacity_vcores", "wall_s", "records"))
    for k in ("label", "spec", "history"):
        if k in m and (not isinstance(m[k], str) or not m[k]):
            raise r.fail(f"{path}.{k}", f"expected a non-empty string, got {show(m[k])}")
    r.integer(m["capacity_mb"], f"{path}.capacity_mb", minimum=0)
    r.integer(m["capacity_vcores"], f"{path}.capacity_vcores", minimum=0)
    r.number(m["wall_s"], f"{path}.wall_s")
    records = m["records"]
    if not isinstance(records, list) or not records:
        raise r.fail(f"{path}.records", f"expected a list of the run's jobs, got {show(records)}")
    for i, rec in enumerate(records):
        _check_record(r, rec, f"{path}.records[{i}]")
    shares = m.get("queue_shares") or []
    if not isinstance(shares, list):
        raise r.fail(f"{path}.queue_shares", f"expected a list of queues, got {show(shares)}")
    for i, row in enumerate(shares):
        q = r.required(row, f"{path}.queue_shares[{i}]", ("queue", "configured", "real", "simulated", "real_busy_s",
                                                         "simulated_busy_s"))
        r.string(q["queue"], f"{path}.queue_shares[{i}].queue")
        for k in ("configured", "real", "simulated", "real_busy_s", "simulated_busy_s"):
            if q[k] is None and k in ("real", "simulated"):
                continue  # no busy period: no share
            r.number(q[k], f"{path}.queue_shares[{i}].{k}")


def _check_record(r: Reader, raw: Any, path: str) -> None:
    """WorkloadError naming the field at `path` unless `raw` is an AppRecord's `to_json`."""
    m = r.mapping(raw, path)
    r.keys(m, path, {f.name for f in fields(AppRecord)})
    for f in fields(AppRecord):
        p, v = f"{path}.{f.name}", m.get(f.name)
        if f.name not in m:
            if f.default is MISSING:
                raise r.fail(p, "missing")
        elif f.type == "int":
            r.integer(v, p, minimum=0)
        elif f.type == "str":
            if not isinstance(v, str):
                raise r.fail(p, f"expected a string, got {show(v)}")
        elif not (isinstance(v, list) and len(v) in (0, 3)
                  and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v)):
            raise r.fail(p, f"expected [] or its data-local, rack-local and off-switch map counts, got {show(v)}")


def missing(job_id: str, program: str, submit_ms: int) -> AppRecord:
    """The record of a job whose client never produced an application (it is reported failed)."""
    return AppRecord(job_id, program, "", "", "", submit_ms, 0, 0, "MISSING", 0, 0, 0, "")


def record(job_id: str, program: str, app: AppInfo, rm: ResourceManager, history: HistoryServer | None) -> AppRecord:
    """Read one finished application's times: tasks from the JobHistoryServer, else its AM attempt's start."""
    first, tasks, source = 0, 0, ""
    located: tuple[int, ...] = ()
    if history is not None and app.application_type == "MAPREDUCE":
        try:
            reports = history.job_tasks(app.id)
            starts = [t.start_time_ms for t in reports if t.start_time_ms > 0]
            first, tasks, source = (min(starts), len(reports), "history") if starts else (0, len(reports), "")
            located = maps_local(history.job_counters(app.id))
        except RMError:
            pass  # no history (failed early, or not an MR job): fall back to the AM below
    if not first:
        try:
            attempts = rm.app_attempts(app.id)
            if attempts:
                first, source = min(a.start_time_ms for a in attempts), "am"
        except RMError:
            pass
    return AppRecord(job_id, program, app.id, app.user, app.queue, app.started_time_ms, first, app.finished_time_ms,
                     app.final_status, tasks, app.memory_seconds, app.vcore_seconds, source, maps_local=located)


def maps_local(counters: dict[str, dict[str, int]]) -> tuple[int, ...]:
    """Maps launched data-local, rack-local and off-switch from a job's counters; () when it counted none."""
    c = counters.get(JOB_COUNTER, {})
    return locality_of(c) if any(k.endswith("_LOCAL_MAPS") for k in c) else ()


def _mean(xs: Sequence[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def _median(xs: Sequence[float]) -> float | None:
    return statistics.median(xs) if xs else None


def result(label: str, records: Sequence[AppRecord], capacity_mb: int, capacity_vcores: int,
           stats: dict[str, float] | None = None) -> PolicyResult:
    """The same summary `simulate` prints; a job that did not succeed counts as failed, never in the averages."""
    t0 = min((r.submit_ms for r in records if r.submit_ms), default=0)

    def sec(ms: int) -> float:
        return (ms - t0) / 1000.0
    jobs = []
    for r in records:
        state = _STATES.get(r.final_status, "failed")
        start = sec(r.first_task_ms) if r.first_task_ms else None
        finish = sec(r.finish_ms) if r.finish_ms else None
        submit = sec(r.submit_ms) if r.submit_ms else 0.0
        jobs.append(JobResult(r.job_id, r.program, r.user, r.queue, "mapreduce", r.tasks, submit, start, finish,
                              None if start is None else start - submit,
                              None if finish is None or state != "succeeded" else finish - submit, 0, state))
    ok = [j for j in jobs if j.state == "succeeded"]
    waits = [j.wait_s for j in jobs if j.wait_s is not None]
    comps = [j.completion_s for j in ok if j.completion_s is not None]
    finished = [j.finish_s for j in jobs if j.finish_s is not None]
    makespan = max(finished) - min(j.submit_s for j in jobs) if finished and len(ok) == len(jobs) else None
    span = makespan or (max(finished) if finished else 0.0)
    mem_s, vc_s = sum(r.memory_seconds for r in records), sum(r.vcore_seconds for r in records)
    alloc = {"cpu": vc_s / (capacity_vcores * span) if span and capacity_vcores else 0.0,
             "memory": mem_s / (capacity_mb * span) if span and capacity_mb else 0.0}
    return PolicyResult(label, makespan, _mean(waits), _median(waits), _mean(comps), _median(comps), alloc,
                        {"cpu": float("nan"), "memory": float("nan")}, tuple(jobs),
                        sum(j.finish_s is None for j in jobs), sum(j.state != "succeeded" for j in jobs),
                        dict(stats or {}))
