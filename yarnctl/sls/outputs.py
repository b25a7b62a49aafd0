"""Read what one SLS run left behind: jobruntime.csv, realtimetrack.json, metrics/*.csv and the RM log.

SLS's own timing statistic is coarse: each second `ResourceSchedulerWrapper` samples the mean of a
timer's sliding window into a 60-sample histogram, and the CSV reporter writes that histogram's
mean. yarnctl sets the timer window larger than the run (so every sample is the mean over *all*
calls so far) and the CSV interval to 100 ms (so each new sample shows up alone); `sample_means`
then recovers each sample from consecutive rows, and the last one is the exact mean handle time
of the whole run.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from yarnctl.errors import ClusterError

_WINDOW = 60  # ResourceSchedulerWrapper.SAMPLING_SIZE
_TS = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})"
_ALLOCATED = re.compile(_TS + r" INFO \S+ container_(?:e\d+_)?(\d+)_(\d+)_\d+_(\d+) Container Transitioned from NEW to ALLOCATED")
# RMContainerImpl's transitions: NEW -> ALLOCATED puts a container on the scheduler's books (root
# QueueMetrics.allocatedContainers, SLS's running.containers), these end states take it off
_TRANSITION = re.compile(r" (container_\S+) Container Transitioned from (\w+) to (\w+)\s*$")
_ENDED = frozenset({"COMPLETED", "RELEASED", "KILLED", "EXPIRED"})
_SUMMARY = re.compile(_TS + r" INFO \S+ appId=(application_\d+_\d+),.*?user=([^,]*),queue=([^,]*),state=(\w+),"
                      r".*?startTime=(\d+),finishTime=(\d+),finalStatus=(\w+),memorySeconds=(\d+),vcoreSeconds=(\d+)")


@dataclass(frozen=True, slots=True)
class JobRuntime:
    """One row of jobruntime.csv: trace times and simulated times, ms since the SLS runner started."""

    app_id: str
    trace_start_ms: int
    trace_end_ms: int
    sim_start_ms: int
    sim_end_ms: int


@dataclass(frozen=True, slots=True)
class AppSummary:
    """The RM's ApplicationSummary log line of a finished app (epoch ms)."""

    app_id: str
    user: str
    queue: str
    state: str
    final_status: str
    start_ms: int
    finish_ms: int
    memory_seconds: int
    vcore_seconds: int


@dataclass(frozen=True, slots=True)
class Allocations:
    """Containers the RM allocated, read from its log: per app, AM and task allocation times (epoch ms)."""

    am_ms: dict[str, int]            # app id -> its AM container's allocation
    tasks_ms: dict[str, list[int]]   # app id -> each task container's allocation, in log order
    peak_live: int = 0               # most containers allocated and not yet ended at once, in log order

    @property
    def total(self) -> int:
        return len(self.am_ms) + sum(len(v) for v in self.tasks_ms.values())


@dataclass(frozen=True, slots=True)
class OpCost:
    """Calls and exact mean duration of one scheduler operation over a run (SLS metrics)."""

    calls: int
    mean_ms: float | None     # None when no sample was recorded
    exact: bool               # False when the run had more calls than the timer window holds


def read_jobruntime(path: Path) -> list[JobRuntime]:
    """The rows of SLS's jobruntime.csv (one per finished app)."""
    try:
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
        return [JobRuntime(r["JobID"], int(r["real_start_time"]), int(r["real_end_time"]),
                           int(r["simulate_start_time"]), int(r["simulate_end_time"])) for r in rows]
    except OSError as e:
        raise ClusterError(f"{path}: SLS wrote no job runtimes ({e.strerror})") from None
    except (KeyError, ValueError, TypeError):
        raise ClusterError(f"{path}: not an SLS jobruntime.csv") from None


def _epoch_ms(stamp: str) -> int:
    # the SLS JVM runs with -Duser.timezone=UTC, so log4j's ISO8601 times are UTC
    dt = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def read_rm_log(path: Path) -> tuple[Allocations, dict[str, AppSummary]]:
    """Container allocations and app summaries from the SLS JVM's log."""
    am: dict[str, int] = {}
    tasks: dict[str, list[int]] = {}
    summaries: dict[str, AppSummary] = {}
    live: set[str] = set()
    peak = 0
    try:
        f = path.open(errors="replace")
    except OSError as e:
        raise ClusterError(f"{path}: cannot read the SLS log ({e.strerror})") from None
    with f:
        for line in f:
            if "Container Transitioned from" in line:
                t = _TRANSITION.search(line)
                if t is None:
                    continue
                if (t.group(2), t.group(3)) == ("NEW", "ALLOCATED"):
                    live.add(t.group(1))
                    peak = max(peak, len(live))
                    m = _ALLOCATED.match(line)
                    if m:
                        app = f"application_{m.group(2)}_{m.group(3)}"
                        if int(m.group(4)) == 1:  # container 1 of an attempt is its AM's
                            am[app] = _epoch_ms(m.group(1))
                        else:
                            tasks.setdefault(app, []).append(_epoch_ms(m.group(1)))
                elif t.group(3) in _ENDED:
                    live.discard(t.group(1))
            elif "ApplicationSummary" in line:
                s = _SUMMARY.search(line)
                if s:
                    summaries[s.group(2)] = AppSummary(s.group(2), s.group(3), s.group(4), s.group(5), s.group(8),
                                                       int(s.group(6)), int(s.group(7)), int(s.group(9)),
                                                       int(s.group(10)))
    return Allocations(am, tasks, peak), summaries


def sample_means(rows: Sequence[tuple[int, float]]) -> list[float]:
    """Every value a 60-sample sliding histogram received, from (count, mean) rows written after each change.

    Row r says the mean of the last min(count, 60) samples; a count that grew by one adds sample
    s_c = c*m - (c-1)*m' below 60 and s_c = 60*(m - m') + s_(c-60) above. A row where the count
    jumped by more than one (the reporter missed a sample) gives the jump's samples their mean.
    """
    samples: list[float] = []
    prev_total = 0.0
    for count, mean in rows:
        if count <= len(samples):
            continue
        n_new = count - len(samples)
        total = mean * min(count, _WINDOW)
        dropped = sum(samples[max(0, len(samples) - _WINDOW):max(0, count - _WINDOW)]) if count > _WINDOW else 0.0
        new_sum = total - prev_total + dropped
        samples.extend([new_sum / n_new] * n_new)
        prev_total = total
    return samples


def _histogram_rows(path: Path) -> list[tuple[int, float]]:
    """(count, mean) of a codahale CsvReporter histogram file, the last row of each count."""
    by_count: dict[int, float] = {}
    try:
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                by_count[int(r["count"])] = float(r["mean"])
    except OSError:
        return []
    except (KeyError, ValueError):
        raise ClusterError(f"{path}: not a codahale histogram CSV") from None
    return sorted(by_count.items())


def _last_counter(path: Path) -> int:
    try:
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
        return int(rows[-1]["count"]) if rows else 0
    except OSError:
        return 0
    except (KeyError, ValueError):
        raise ClusterError(f"{path}: not a codahale counter CSV") from None


def op_cost(metrics_dir: Path, op: str, window: int) -> OpCost:
    """Calls and mean duration of `op` (`allocate`, `handle`, `handle.NODE_UPDATE`, ...) over the whole run."""
    calls = _last_counter(metrics_dir / f"counter.scheduler.operation.{op}.csv")
    samples = sample_means(_histogram_rows(metrics_dir / f"sampler.scheduler.operation.{op}.timecost.csv"))
    # the timer window covers the run, so the latest sample is the mean over every call so far (ns)
    last = next((s for s in reversed(samples) if s > 0), None)
    return OpCost(calls, None if last is None else last / 1e6, calls <= window)


def read_realtimetrack(path: Path) -> list[dict[str, float]]:
    """SLS's per-second records (time, running apps/containers, allocated GB, timecosts in ms).

    May be empty on a good run: SLS 2.7.7's writer (ResourceSchedulerWrapper.MetricsLogRunnable) starts
    at the first scheduler event, but SLSWebApp.generateRealTimeTrackingMetrics() dereferences the queue
    set SLSRunner only sets after startAM(); a tick in between throws a NullPointerException that
    scheduleAtFixedRate swallows along with every later tick, and the shutdown hook leaves `[]`.
    """
    try:
        text = path.read_text()
    except OSError as e:
        raise ClusterError(f"{path}: SLS wrote no realtimetrack.json ({e.strerror})") from None
    text = text.strip()
    if not text.endswith("]"):  # the closing bracket comes from a shutdown hook that may not have run
        text += "]"
    try:
        rows = json.loads(text)
    except ValueError:
        raise ClusterError(f"{path}: malformed realtimetrack.json") from None
    return [r for r in rows if isinstance(r, dict)]


def peak_running_containers(track: Sequence[dict[str, float]]) -> int | None:
    """The most containers SLS saw running at once; None when SLS wrote no record (see read_realtimetrack)."""
    if not track:
        return None
    return int(max(r.get("running.containers", 0) for r in track))
