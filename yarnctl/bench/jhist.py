"""A MapReduce job's history file (.jhist, Hadoop 2.7's Avro-JSON event log): the job and every task attempt.

`bench mr` keeps each run's files; they hold what the RM does not: when the AM started and
initialised the job, and each attempt's start, finish, node and (for a reduce) end of shuffle,
the ground truth a simulated run is measured against.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from yarnctl.errors import ClusterError

_PREFIX = "org.apache.hadoop.mapreduce.jobhistory."


@dataclass(frozen=True, slots=True)
class TaskAttempt:
    """One task attempt: times in ms since the epoch (0 when the file has no such event)."""

    attempt_id: str
    task_id: str
    type: str  # MAP | REDUCE
    start_ms: int
    finish_ms: int
    status: str  # SUCCEEDED | FAILED | KILLED, or "" for an attempt still running when the file ends
    host: str
    container_id: str
    shuffle_finish_ms: int = 0  # reduces only


@dataclass(frozen=True, slots=True)
class JobHistory:
    """The job's life as its AM recorded it."""

    job_id: str
    name: str
    user: str
    queue: str
    submit_ms: int
    am_start_ms: int  # the AM's JVM started (AM_STARTED)
    launch_ms: int  # the job was initialised and its tasks could be asked for (JOB_INITED)
    finish_ms: int
    status: str  # SUCCEEDED | FAILED | KILLED, or "" when the file has no end
    attempts: tuple[TaskAttempt, ...]
    # Hadoop's JobCounter group at JOB_FINISHED (DATA_LOCAL_MAPS, RACK_LOCAL_MAPS, OTHER_LOCAL_MAPS, ...)
    job_counters: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def locality(self) -> tuple[int, int, int]:
        """Maps launched data-local, rack-local and elsewhere (off-switch), as the job's AM counted them."""
        return locality_of(self.job_counters)

    def of_type(self, kind: str) -> list[TaskAttempt]:
        """The attempts of one task type (MAP or REDUCE), in start order."""
        return sorted((a for a in self.attempts if a.type == kind), key=lambda a: (a.start_ms, a.attempt_id))


def locality_of(job_counter: Mapping[str, int]) -> tuple[int, int, int]:
    """DATA_LOCAL_MAPS, RACK_LOCAL_MAPS and OTHER_LOCAL_MAPS (off-switch) of a JobCounter group, 0 when absent."""
    c = job_counter
    return c.get("DATA_LOCAL_MAPS", 0), c.get("RACK_LOCAL_MAPS", 0), c.get("OTHER_LOCAL_MAPS", 0)


def _events(path: Path) -> Iterator[tuple[int, str, Mapping[str, Any]]]:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as e:
        raise ClusterError(f"{path}: cannot read the job history file ({e.strerror})") from None
    if not lines or lines[0].strip() != "Avro-Json":
        raise ClusterError(f"{path}: not a job history file (no Avro-Json header)")
    for n, line in enumerate(lines[2:], start=3):  # line 2 is the Avro schema
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            (body,) = doc["event"].values()
            yield n, str(doc["type"]), body
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ClusterError(f"{path}:{n}: not a job history event") from None


def read_jhist(path: Path) -> JobHistory:
    """Parse one .jhist file (ClusterError naming the file and line when it is not one)."""
    job: dict[str, Any] = {"job_id": "", "name": "", "user": "", "queue": "", "submit_ms": 0, "am_start_ms": 0,
                           "launch_ms": 0, "finish_ms": 0, "status": "", "job_counters": MappingProxyType({})}
    started: dict[str, Mapping[str, Any]] = {}
    ended: dict[str, Mapping[str, Any]] = {}
    for n, kind, e in _events(path):
        try:
            if kind == "JOB_SUBMITTED":
                job.update(job_id=e["jobid"], name=e["jobName"], user=e["userName"], queue=e["jobQueueName"],
                           submit_ms=int(e["submitTime"]))
            elif kind == "AM_STARTED" and not job["am_start_ms"]:
                job["am_start_ms"] = int(e["startTime"])
            elif kind == "JOB_INITED":
                job["launch_ms"] = int(e["launchTime"])
            elif kind == "JOB_FINISHED":
                job.update(finish_ms=int(e["finishTime"]), status="SUCCEEDED", job_counters=_job_counters(e))
            elif kind in ("JOB_FAILED", "JOB_KILLED"):
                job.update(finish_ms=int(e["finishTime"]), status=str(e["jobStatus"]))
            elif kind.endswith("_ATTEMPT_STARTED"):
                started[e["attemptId"]] = e
            elif kind.endswith(("_ATTEMPT_FINISHED", "_ATTEMPT_FAILED", "_ATTEMPT_KILLED")):
                ended[e["attemptId"]] = {**e, "status": e.get("taskStatus") or e.get("status") or ""}
        except (KeyError, TypeError, ValueError):
            raise ClusterError(f"{path}:{n}: malformed {kind} event") from None
    attempts = []
    for aid, s in started.items():
        end = ended.get(aid, {})
        attempts.append(TaskAttempt(aid, str(s["taskid"]), str(s["taskType"]), int(s["startTime"]),
                                    int(end.get("finishTime", 0)), str(end.get("status", "")),
                                    str(end.get("hostname") or s.get("trackerName") or ""), str(s.get("containerId", "")),
                                    int(end.get("shuffleFinishTime", 0))))
    attempts.sort(key=lambda a: (a.start_ms, a.attempt_id))
    return JobHistory(**job, attempts=tuple(attempts))


def _job_counters(finished: Mapping[str, Any]) -> Mapping[str, int]:
    """The JobCounter group of a JOB_FINISHED event's totalCounters (Avro-JSON: groups of name/value counts)."""
    for group in (finished.get("totalCounters") or {}).get("groups") or ():
        if str(group.get("name", "")).endswith("JobCounter"):
            return MappingProxyType({str(c["name"]): int(c["value"]) for c in group.get("counts") or ()})
    return MappingProxyType({})
