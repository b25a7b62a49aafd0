"""Soak test: an hour of mixed jobs on a local cluster while Python and NodeManagers are killed; no leak may grow.

`python -m yarnctl.bench.soak [--minutes 60] [--policy hmrf] [--out DIR]` starts a cluster of its own
(2 NodeManagers, 4096 MB and 4 vcores each, the shim delegating to `yarnctl serve`), keeps a few
clients busy the whole time (MapReduce SleepJobs of several sizes, `pi`, distributed shell), SIGKILLs
the policy server every `--serve-every-min` minutes (the shim decides natively until the restarted
server answers, then resyncs) and restarts NodeManager 0, then 1, at 1/3 and 2/3 of the run. Every
`--sample-s` seconds it samples the ResourceManager's threads, file descriptors, sockets and live
heap, and the policy server's RSS, into OUT/samples.csv; at the end it fits each metric's trend over
the second half of the run, writes OUT/soak.png, OUT/report.md and OUT/summary.json, prints the table,
and exits 1 if a metric grows or a job failed for a reason other than a NodeManager restart.
Not part of `make test` (`make soak` runs the hour).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from yarnctl.cluster.local import ClusterInfo, LocalCluster

PROG = "python -m yarnctl.bench.soak"
# every job fits the 4096 MB nodes several times over: the AM 768 MB, each task 512 MB
MR_FLAGS = ("-Dmapreduce.map.memory.mb=512", "-Dmapreduce.reduce.memory.mb=512", "-Dmapreduce.map.java.opts=-Xmx256m",
            "-Dmapreduce.reduce.java.opts=-Xmx256m", "-Dyarn.app.mapreduce.am.resource.mb=768")
CLIENT_TIMEOUT_S = 900.0   # a client still running after 15 min is stuck: killed and counted failed
# a job that fails this long after a NodeManager restart finished may still be its victim (its AM's second
# attempt failing too); one that hangs for minutes and fails later (a client timeout) is not excused
NM_GRACE_S = 300.0
WARMUP_FRACTION = 1 / 6    # the first 10 min of an hour: JIT, thread pools and caches filling up
FIT_FROM = 0.5             # the trend is fitted over the second half of the run
GROWTH_LIMIT_PCT_H = 10.0  # heap/RSS: fitted growth per hour, relative to the median, must stay below this
BAND_PCT = 10.0            # threads/fds/sockets: the last 10 min within 10 % (or BAND_ABS) of the post-warm-up level
BAND_ABS = 3.0
_CONTAINER = re.compile(r"\b(container_(\d+)_(\d+)_01_\d+)\b")


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One kind of client in the mix: a label, its main class alias and its arguments."""

    label: str
    main: str
    args: tuple[str, ...]


def sleep_job(maps: int, reduces: int, map_ms: int, reduce_ms: int) -> JobSpec:
    """A MapReduce SleepJob of the given shape with the mix's small containers."""
    return JobSpec(f"sleep-{maps}x{map_ms // 1000}s", "sleep",
                   (*MR_FLAGS, "-m", str(maps), "-r", str(reduces), "-mt", str(map_ms), "-rt", str(reduce_ms)))


# the mix, cycled in order (deterministic): SleepJobs of three sizes, pi, distributed shell
MIX: tuple[JobSpec, ...] = (
    sleep_job(3, 1, 5000, 2000),
    JobSpec("pi-2x10", "examples", ("pi", *MR_FLAGS, "2", "10")),
    JobSpec("dshell-2", "dshell", ("-shell_command", "sleep 3", "-num_containers", "2", "-container_memory", "256")),
    sleep_job(2, 1, 3000, 1000),
    sleep_job(4, 2, 8000, 2000),
    JobSpec("pi-4x100", "examples", ("pi", *MR_FLAGS, "4", "100")),
)


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One finished client: what it ran, when (minutes since the start), its exit code and application id."""

    n: int
    label: str
    start_min: float
    end_min: float
    rc: int
    app_id: str


@dataclass(frozen=True, slots=True)
class Event:
    """A disruption: a policy server SIGKILLed and restarted, or a NodeManager restarted."""

    kind: str        # serve-kill | nm-restart
    start_min: float
    end_min: float
    detail: str


@dataclass(frozen=True, slots=True)
class Counters:
    """The run's job and disruption counters at one instant."""

    submitted: int = 0
    succeeded: int = 0
    failed: int = 0
    running: int = 0
    serve_restarts: int = 0
    nm_restarts: int = 0


@dataclass(frozen=True, slots=True)
class Probe:
    """What one sample read from the processes; None where a read failed (the row keeps an empty cell)."""

    rm_threads: int | None = None
    rm_fds: int | None = None
    rm_sockets: int | None = None
    rm_heap_mb: float | None = None
    serve_rss_mb: float | None = None
    serve_pid: int | None = None
    extra: Mapping[str, int | None] = field(default_factory=dict)  # RM apps completed, shim and serve counters


METRICS = ("rm_threads", "rm_fds", "rm_sockets", "rm_heap_mb", "serve_rss_mb")
LEVEL_METRICS = ("rm_heap_mb", "serve_rss_mb")   # judged by their fitted growth per hour
EXTRA = ("rm_apps_completed", "shim_delegated", "shim_fallback", "shim_full_syncs", "serve_calls", "serve_resync",
         "serve_errors")
HISTO_LINE = re.compile(r"^\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)")
KEY_CLASSES = ("org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl",
               "org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptImpl", "io.yarnctl.")
THREAD_LINE = re.compile(r'^"(.*)" #\d+', re.M)   # a thread's header line in Thread.print
COLUMNS = ("minute", "jobs_submitted", "jobs_succeeded", "jobs_failed", "jobs_running", "serve_restarts",
           "nm_restarts", *METRICS, "serve_pid", *EXTRA)


def csv_row(minute: float, counters: Counters, probe: Probe) -> dict[str, str]:
    """One samples.csv row: COLUMNS as text, empty where a probe failed."""
    values: dict[str, Any] = {
        "minute": f"{minute:.2f}", "jobs_submitted": counters.submitted, "jobs_succeeded": counters.succeeded,
        "jobs_failed": counters.failed, "jobs_running": counters.running, "serve_restarts": counters.serve_restarts,
        "nm_restarts": counters.nm_restarts, "serve_pid": probe.serve_pid,
        **{m: getattr(probe, m) for m in METRICS}, **{k: probe.extra.get(k) for k in EXTRA},
    }
    return {k: "" if values[k] is None else (f"{values[k]:.1f}" if isinstance(values[k], float) and k != "minute"
                                            else str(values[k])) for k in COLUMNS}


def read_samples(path: Path) -> list[dict[str, float | None]]:
    """samples.csv back as numbers (None for empty cells)."""
    with path.open(newline="") as f:
        return [{k: (float(v) if v not in ("", None) else None) for k, v in row.items()} for row in csv.DictReader(f)]


# ---------------------------------------------------------------------------------------------- trend


def ls_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The least-squares slope of ys over xs (0.0 with fewer than two distinct xs)."""
    if len(xs) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def parse_histogram(text: str) -> dict[str, tuple[int, int]]:
    """`jcmd <pid> GC.class_histogram` output as {class: (instances, bytes)}."""
    out: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        m = HISTO_LINE.match(line)
        if m:
            out[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return out


def thread_groups(text: str) -> dict[str, int]:
    """`jcmd <pid> Thread.print` output as {thread name with digits as '#': how many}."""
    out: dict[str, int] = {}
    for name in THREAD_LINE.findall(text):
        key = re.sub(r"\d+", "#", name)
        out[key] = out.get(key, 0) + 1
    return out


def class_totals(histo: Mapping[str, tuple[int, int]], prefix: str) -> tuple[int, int]:
    """Instances and bytes of one class, or of a package's classes when `prefix` ends with a dot."""
    # a class name matches itself only: RMAppImpl$...Transition singletons are not applications
    rows = [v for c, v in histo.items() if c == prefix or (prefix.endswith(".") and c.startswith(prefix))]
    return sum(n for n, _ in rows), sum(b for _, b in rows)


def histogram_growth(before: Mapping[str, tuple[int, int]], after: Mapping[str, tuple[int, int]],
                     top: int = 12) -> list[tuple[str, int, int]]:
    """The `top` classes whose live bytes grew most between two histograms: (class, +instances, +bytes)."""
    rows = [(c, after.get(c, (0, 0))[0] - before.get(c, (0, 0))[0], after.get(c, (0, 0))[1] - before.get(c, (0, 0))[1])
            for c in set(before) | set(after)]
    return sorted((r for r in rows if r[2] > 0), key=lambda r: (-r[2], r[0]))[:top]


def ls_slope_se(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The standard error of the least-squares slope (0.0 with fewer than three points or no spread in xs)."""
    mx = statistics.fmean(xs) if xs else 0.0
    sxx = sum((x - mx) ** 2 for x in xs)
    if len(xs) < 3 or sxx == 0:
        return 0.0
    b = ls_slope(xs, ys)
    a = statistics.fmean(ys) - b * mx
    resid = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    return math.sqrt(resid / (len(xs) - 2) / sxx)


@dataclass(frozen=True, slots=True)
class Trend:
    """A metric's summary and verdict: growth fitted over the second half, levels before and at the end."""

    metric: str
    first: float
    last: float
    min: float
    max: float
    growth_pct_h: float   # least-squares slope over the second half, per hour, relative to its median
    growth_se_pct_h: float  # its standard error, likewise: how much the samples' scatter alone moves it
    level: float          # median after warm-up, before the fitted half
    end_level: float      # median of the last WARMUP_FRACTION of the run
    rule: str             # "slope" (heap, RSS) or "band" (threads, fds, sockets)
    ok: bool
    why: str


def trend(metric: str, minutes: Sequence[float], values: Sequence[float | None], total_min: float, *,
          rule: str = "slope", limit_pct_h: float = GROWTH_LIMIT_PCT_H, band_pct: float = BAND_PCT,
          band_abs: float = BAND_ABS) -> Trend:
    """Judge one metric: `slope` rule passes when growth < limit %/h, `band` when the end level stays near the level after warm-up."""
    pts = [(m, v) for m, v in zip(minutes, values) if v is not None]
    if len(pts) < 4:
        nan = math.nan
        return Trend(metric, nan, nan, nan, nan, nan, nan, nan, nan, rule, False, f"only {len(pts)} samples")
    ys = [v for _, v in pts]
    half = [(m, v) for m, v in pts if m >= total_min * FIT_FROM] or pts[len(pts) // 2:]
    med = statistics.median(v for _, v in half)
    hours, hv = [m / 60 for m, _ in half], [v for _, v in half]
    growth = 100 * ls_slope(hours, hv) / med if med else 0.0
    growth_se = 100 * ls_slope_se(hours, hv) / med if med else 0.0
    warm = total_min * WARMUP_FRACTION
    before = [v for m, v in pts if warm <= m < total_min * FIT_FROM] or ys[: len(ys) // 2]
    end = [v for m, v in pts if m >= total_min * (1 - WARMUP_FRACTION)] or ys[-max(1, len(ys) // 6):]
    level, end_level = statistics.median(before), statistics.median(end)
    if rule == "slope":
        ok = growth < limit_pct_h
        why = f"grows {growth:+.1f} %/h over the second half (limit {limit_pct_h:g} %/h)"
    elif rule == "band":
        top = max(level * (1 + band_pct / 100), level + band_abs)
        ok = end_level <= top
        why = (f"last {warm:g} min at {end_level:g}, {'within' if ok else 'above'} the band "
               f"(≤ {top:.1f}) of {level:g} after warm-up")
    else:
        raise ValueError(f"unknown rule {rule!r}: slope or band")
    return Trend(metric, ys[0], ys[-1], min(ys), max(ys), round(growth, 2), round(growth_se, 2), level, end_level,
                 rule, ok, why)


def trends(rows: Sequence[Mapping[str, float | None]], total_min: float) -> list[Trend]:
    """Every sampled metric judged by its rule: slope for heap and RSS, band for the counts."""
    minutes = [r["minute"] or 0.0 for r in rows]
    return [trend(m, minutes, [r.get(m) for r in rows], total_min, rule="slope" if m in LEVEL_METRICS else "band")
            for m in METRICS]


UNITS = {"rm_threads": "RM threads", "rm_fds": "RM open fds", "rm_sockets": "RM sockets",
         "rm_heap_mb": "RM heap after GC (MB)", "serve_rss_mb": "serve RSS (MB)"}


def _num(v: float) -> str:
    return "n/a" if math.isnan(v) else f"{v:g}" if float(v).is_integer() else f"{v:.1f}"


def markdown_table(ts: Sequence[Trend]) -> str:
    """The trends as a markdown table: first/last/min/max, levels, fitted growth and verdict."""
    head = ("| metric | first | last | min | max | after warm-up | at the end | growth, 2nd half (± SE) | verdict |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
    return head + "".join(
        f"| {UNITS.get(t.metric, t.metric)} | {_num(t.first)} | {_num(t.last)} | {_num(t.min)} | {_num(t.max)} | "
        f"{_num(t.level)} | {_num(t.end_level)} | {t.growth_pct_h:+.1f} ± {t.growth_se_pct_h:.1f} %/h | "
        f"{'flat' if t.ok else 'GROWS'} ({t.rule}) |\n" for t in ts)


def failed_by_nm(job: JobRecord, events: Sequence[Event], grace_min: float = NM_GRACE_S / 60) -> bool:
    """True when a job was submitted before a NodeManager restart finished and ended during it or within the grace after."""
    return any(e.kind == "nm-restart" and job.start_min <= e.end_min and e.start_min <= job.end_min <= e.end_min + grace_min
               for e in events)


def containers_by_app(rm_log: Path) -> dict[str, int]:
    """Distinct containers of each application's first attempt named in the RM's log (the AM's included)."""
    seen: dict[str, set[str]] = {}
    try:
        text = rm_log.read_text(errors="replace")
    except OSError:
        return {}
    for container, cluster_ts, app in _CONTAINER.findall(text):
        seen.setdefault(f"application_{cluster_ts}_{app}", set()).add(container)
    return {app: len(ids) for app, ids in seen.items()}


def yarn_1902(job: JobRecord, containers: Mapping[str, int]) -> str | None:
    """Why a failed distributed-shell job is Hadoop 2.7's known over-allocation hang (YARN-1902), or None.

    The 2.7 AMRMClient re-sends its request table's total after an allocation and the distributed
    shell AM never removes a satisfied request, so any scheduler may hand it more workers than
    `-num_containers`; the AM then waits for `completed == total` and never finishes. Recognised by
    the count: more containers than the AM plus the workers asked for.
    """
    m = re.fullmatch(r"dshell-(\d+)", job.label)
    got = containers.get(job.app_id, 0)
    if job.rc == 0 or m is None or got <= 1 + int(m.group(1)):
        return None
    return f"YARN-1902: the AM got {got - 1} workers for {m.group(1)} and never finished"


def verdict(ts: Sequence[Trend], jobs: Sequence[JobRecord], events: Sequence[Event],
            containers: Mapping[str, int] | None = None) -> tuple[bool, list[str]]:
    """Pass/fail for the whole run and the reasons: any metric growing, any job failed outside an NM restart
    that is not Hadoop 2.7's known distributed-shell hang."""
    reasons = [f"{UNITS.get(t.metric, t.metric)}: {t.why}" for t in ts if not t.ok]
    other = [j for j in jobs if j.rc != 0 and not failed_by_nm(j, events) and not yarn_1902(j, containers or {})]
    reasons += [f"job {j.n} ({j.label}, {j.app_id or 'no app id'}) failed (exit {j.rc}) at minute {j.end_min:.1f}, "
                f"not during a NodeManager restart" for j in other]
    if not jobs:
        reasons.append("no job finished")
    return not reasons, reasons


def schedule(minutes: float, serve_every_min: float, nm_restarts: int, nodes: int = 2) -> list[tuple[float, str, int]]:
    """The disruptions as (minute, kind, node index): serve kills mid-period, NM restarts at k/(n+1) of the run."""
    out: list[tuple[float, str, int]] = []
    if serve_every_min > 0:
        # half a period off the grid, so that a kill never lands on an NM restart at 1/3 or 2/3 of an hour
        t = serve_every_min / 2
        while t < minutes - 0.25:
            out.append((round(t, 3), "serve-kill", -1))
            t += serve_every_min
    for k in range(1, nm_restarts + 1):
        out.append((round(minutes * k / (nm_restarts + 1), 3), "nm-restart", (k - 1) % nodes))
    return sorted(out)


# ---------------------------------------------------------------------------------------------- probes


def proc_fds(pid: int) -> tuple[int, int]:
    """(open file descriptors, how many of them are sockets) of a process, from /proc."""
    fd_dir = f"/proc/{pid}/fd"
    n = sockets = 0
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue  # closed between listdir and readlink
        n += 1
        sockets += target.startswith("socket:")
    return n, sockets


def rss_mb(pid: int) -> float:
    """VmRSS of a process in MB, from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise OSError(f"no VmRSS for pid {pid}")


def _try(f: Callable[[], Any], errors: list[str], what: str) -> Any:
    try:
        return f()
    except Exception as e:  # a probe that fails once leaves an empty cell; the run goes on
        errors.append(f"{what}: {type(e).__name__}: {e}")
        return None


def probe(lc: LocalCluster) -> tuple[Probe, list[str]]:
    """Read the RM's threads, fds, sockets and live heap, the serve's RSS and the counters; errors as text."""
    from yarnctl.rm import HttpSettings

    errors: list[str] = []
    info = lc.info()
    pid = info.rm.pid
    fds = _try(lambda: proc_fds(pid), errors, "rm fds") or (None, None)
    # a full GC first (SerialGC: jcmd GC.run is System.gc()), so that HeapMemoryUsage.used is the
    # live data, not whatever garbage the young generation holds at this instant
    _try(lambda: subprocess.run([f"{info.java_home}/bin/jcmd", str(pid), "GC.run"], capture_output=True,
                                timeout=60, check=True), errors, "jcmd GC.run")
    with closing(lc.rm(HttpSettings(connect_timeout_s=2.0, read_timeout_s=20.0, retries=1))) as rm:
        threads = _try(lambda: int(rm.jmx("java.lang:type=Threading")[0].attributes["ThreadCount"]), errors,
                       "rm threads")
        heap = _try(lambda: rm.jmx("java.lang:type=Memory")[0].attributes["HeapMemoryUsage"]["used"] / 2**20,
                    errors, "rm heap")
        completed = _try(lambda: rm.metrics().apps_completed, errors, "rm metrics")
        shim = _try(rm.shim_metrics, errors, "shim metrics")
    serve_pid = _serve_pid(info)
    rss = _try(lambda: rss_mb(serve_pid), errors, "serve rss") if serve_pid else None
    status_file = info.status_file
    status = _try(lambda: json.loads(status_file.read_text()), errors, "serve status") if status_file else None
    status = status or {}
    extra = {"rm_apps_completed": completed,
             "shim_delegated": shim.delegated if shim else None, "shim_fallback": shim.fallback if shim else None,
             "shim_full_syncs": shim.full_syncs if shim else None,
             "serve_calls": status.get("calls"), "serve_resync": status.get("resync"),
             "serve_errors": status.get("errors")}
    return Probe(threads, fds[0], fds[1], round(heap, 1) if heap is not None else None,
                 round(rss, 1) if rss is not None else None, serve_pid, extra), errors


# ---------------------------------------------------------------------------------------------- the run


@dataclass
class Client:
    """A running client process and where its output goes."""

    n: int
    spec: JobSpec
    proc: subprocess.Popen[bytes]
    log: Path
    start_min: float
    started: float


class Soak:
    """The run's state: the cluster, the clients, the disruptions done, the samples written."""

    def __init__(self, lc: LocalCluster, out: Path, minutes: float, clients: int, say: Callable[[str], None]) -> None:
        self.lc, self.out, self.minutes, self.clients_max, self.say = lc, out, minutes, clients, say
        self.t0 = time.monotonic()
        self.clients: list[Client] = []
        self.jobs: list[JobRecord] = []
        self.events: list[Event] = []
        self.submitted = 0
        self.histograms: list[dict[str, tuple[int, int]]] = []   # the RM's, after warm-up and at the end
        self.threads: list[dict[str, int]] = []                    # the RM's thread names, likewise
        info = lc.info()
        self.info = info
        self.log_dir = Path(info.dir) / "soak-clients"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.env = lc.client_env()

    def now_min(self) -> float:
        """Minutes since the cluster came up."""
        return (time.monotonic() - self.t0) / 60

    def counters(self) -> Counters:
        """The job and disruption counters now."""
        return Counters(self.submitted, sum(j.rc == 0 for j in self.jobs), sum(j.rc != 0 for j in self.jobs),
                        len(self.clients), sum(e.kind == "serve-kill" for e in self.events),
                        sum(e.kind == "nm-restart" for e in self.events))

    def submit(self) -> None:
        """Start the next client of the mix."""
        spec = MIX[self.submitted % len(MIX)]
        self.submitted += 1
        log = self.log_dir / f"job-{self.submitted:04d}-{spec.label}.log"
        with log.open("wb") as f:
            proc = subprocess.Popen(self.lc.client_command(list(spec.args), spec.main), env=self.env, cwd=self.info.dir,
                                    stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.clients.append(Client(self.submitted, spec, proc, log, self.now_min(), time.monotonic()))

    def reap(self) -> None:
        """Record the clients that finished; kill and fail those stuck past CLIENT_TIMEOUT_S."""
        from yarnctl.cluster.local import app_ids

        for c in list(self.clients):
            rc = c.proc.poll()
            if rc is None and time.monotonic() - c.started > CLIENT_TIMEOUT_S:
                c.proc.kill()
                rc = c.proc.wait()
                self.say(f"soak: job {c.n} ({c.spec.label}) still running after {CLIENT_TIMEOUT_S:.0f} s: killed")
            if rc is None:
                continue
            ids = app_ids(c.log.read_text(errors="replace"))
            job = JobRecord(c.n, c.spec.label, round(c.start_min, 2), round(self.now_min(), 2), rc,
                            ids[-1] if ids else "")
            self.jobs.append(job)
            self.clients.remove(c)
            if rc != 0:
                self.say(f"soak: job {c.n} ({c.spec.label}, {job.app_id}) FAILED, exit {rc}: see {c.log}")

    def top_up(self, until_min: float) -> None:
        """Keep `clients_max` clients running, submitting none in the last minute so the run ends near on time."""
        while len(self.clients) < self.clients_max and self.now_min() < until_min:
            self.submit()

    def disrupt(self, kind: str, node: int) -> None:
        """SIGKILL and restart the policy server, or restart a NodeManager; recorded as an Event."""
        start = self.now_min()
        if kind == "serve-kill":
            old = _serve_pid(self.lc.info())
            info = self.lc.restart_serve(kill=True)
            detail = f"serve pid {old} -> {_serve_pid(info)}"
        else:
            old = self.lc.info().nodes[node].pid
            info = self.lc.restart_nm(node)
            detail = f"nodemanager-{node} pid {old} -> {info.nodes[node].pid}"
        self.events.append(Event(kind, round(start, 2), round(self.now_min(), 2), detail))
        self.say(f"soak: minute {start:5.1f}: {kind} done in {(self.now_min() - start) * 60:.1f} s ({detail})")

    def drain(self, timeout_s: float) -> None:
        """Wait for the running clients to finish (up to `timeout_s`), then kill what is left as failed."""
        deadline = time.monotonic() + timeout_s
        while self.clients and time.monotonic() < deadline:
            self.reap()
            time.sleep(1.0)
        for c in self.clients:
            c.proc.kill()
            c.proc.wait()
            self.jobs.append(JobRecord(c.n, c.spec.label, round(c.start_min, 2), round(self.now_min(), 2), -9, ""))
            self.say(f"soak: job {c.n} ({c.spec.label}) still running at the end: killed, counted failed")
        self.clients.clear()


def jcmd(lc: LocalCluster, command: str, path: Path) -> str:
    """Run `jcmd <rm pid> command` (GC.class_histogram runs a full GC first), save its output to `path`, return it."""
    info = lc.info()
    text = subprocess.run([f"{info.java_home}/bin/jcmd", str(info.rm.pid), command], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    path.write_text(text)
    return text


def _serve_pid(info: ClusterInfo) -> int | None:
    return info.serve.pid if info.serve else None


def progress_line(minute: float, counters: Counters, p: Probe) -> str:
    """The stderr line of one sample: minute, jobs, RM threads/fds/heap, serve RSS."""
    def s(v: object) -> str:
        return "?" if v is None else str(v)
    return (f"soak: minute {minute:5.1f}  jobs {counters.succeeded} ok / {counters.failed} failed / "
            f"{counters.running} running  RM threads {s(p.rm_threads)} fds {s(p.rm_fds)} "
            f"sockets {s(p.rm_sockets)} heap {s(p.rm_heap_mb)} MB  serve RSS {s(p.serve_rss_mb)} MB "
            f"(pid {s(p.serve_pid)})  restarts serve {counters.serve_restarts} nm {counters.nm_restarts}")


def run(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """Start the cluster, run the soak, stop the cluster, report; the exit code."""
    from yarnctl.cluster.local import LocalCluster

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    lc = LocalCluster(args.dir, progress=lambda m: say(f"cluster: {m}"))
    say(f"soak: starting a cluster in {lc.dir} (policy {args.policy})")
    # Hadoop keeps up to 10,000 finished apps in the RM (yarn-default): a cap below the jobs an hour
    # runs lets the RM's heap reach its steady state, so growth that remains is not retention
    lc.up(policy=args.policy, nodes=2, nm_memory_mb=4096, nm_vcores=4,
          yarn_site={"yarn.resourcemanager.max-completed-applications": str(args.completed_apps)})
    soak: Soak | None = None
    try:
        soak = Soak(lc, out, args.minutes, args.clients, say)
        plan = schedule(args.minutes, args.serve_every_min, args.nm_restarts)
        say(f"soak: {args.minutes:g} min, {args.clients} clients, disruptions at minutes "
            f"{', '.join(f'{m:g} ({k})' for m, k, _ in plan)}")
        _loop(soak, plan, args, out / "samples.csv", say)
    finally:
        try:
            if soak is not None:
                soak.drain(timeout_s=0)
        finally:
            report = lc.down()
            say(f"soak: cluster down ({', '.join(report.stopped)}; {len(report.strays)} strays)")
    return finish(soak, args, say)


def _loop(soak: Soak, plan: list[tuple[float, str, int]], args: argparse.Namespace, samples: Path,
          say: Callable[[str], None]) -> None:
    next_sample = 0.0
    histo_dir = Path(soak.info.dir)
    with samples.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        while True:
            soak.reap()
            soak.top_up(args.minutes - 1)
            now = soak.now_min()
            if now * 60 >= next_sample:
                _sample(soak, writer, f, say)
                next_sample += args.sample_s
            elif not soak.histograms and now >= args.minutes * WARMUP_FRACTION:
                # what the RM holds after warm-up, to name the classes and threads that grew by the end
                _dump(soak, histo_dir, "warm", say)
            elif plan and now >= plan[0][0]:
                _, kind, node = plan.pop(0)
                soak.disrupt(kind, node)
            elif now >= args.minutes:
                break
            else:
                time.sleep(0.5)
        # the clients still running finish (their failures count); then one last sample
        soak.drain(timeout_s=CLIENT_TIMEOUT_S)
        _sample(soak, writer, f, say)
        _dump(soak, histo_dir, "end", say)


def _dump(soak: Soak, where: Path, tag: str, say: Callable[[str], None]) -> None:
    try:
        soak.histograms.append(parse_histogram(jcmd(soak.lc, "GC.class_histogram", where / f"rm-histo-{tag}.txt")))
        soak.threads.append(thread_groups(jcmd(soak.lc, "Thread.print", where / f"rm-threads-{tag}.txt")))
    except (OSError, subprocess.SubprocessError) as e:
        say(f"soak:   jcmd failed: {e}")
        soak.histograms.append({})  # once only: no retry every loop


def _sample(soak: Soak, writer: csv.DictWriter[str], f: IO[str], say: Callable[[str], None]) -> None:
    minute = soak.now_min()
    p, errors = probe(soak.lc)
    counters = soak.counters()
    writer.writerow(csv_row(minute, counters, p))
    f.flush()  # a crash keeps every sample so far
    say(progress_line(minute, counters, p))
    for e in errors:
        say(f"soak:   probe failed: {e}")


def finish(soak: Soak | None, args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """Write jobs.csv, then judge the run and write its report (see `write_report`); the exit code."""
    out: Path = args.out
    if soak is None:
        return 1
    with (out / "jobs.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[x.name for x in fields(JobRecord)])
        w.writeheader()
        w.writerows(asdict(j) for j in soak.jobs)
    return write_report(out, {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
                        soak.jobs, soak.events, soak.submitted, soak.histograms, soak.threads, say,
                        containers_by_app(Path(soak.info.dir) / "logs" / "resourcemanager.log"))


def write_report(out: Path, args_doc: Mapping[str, Any], jobs: Sequence[JobRecord], events: Sequence[Event],
                 submitted: int, histograms: Sequence[Mapping[str, tuple[int, int]]],
                 thread_dumps: Sequence[Mapping[str, int]], say: Callable[[str], None],
                 containers: Mapping[str, int] | None = None) -> int:
    """Fit the trends on OUT/samples.csv, plot, write report.md and summary.json, print the table; the exit code.

    `histograms` and `thread_dumps` are the RM's after warm-up and at the end (two each, or none);
    `containers` counts each application's containers in the RM's log (`containers_by_app`).
    """
    pair = len(histograms) == 2 and all(histograms)
    growth = histogram_growth(histograms[0], histograms[1], top=20) if pair else []
    rows = read_samples(out / "samples.csv")
    minutes = float(args_doc["minutes"])
    ts = trends(rows, minutes)
    ok, reasons = verdict(ts, jobs, events, containers)
    plot(rows, events, ts, out / "soak.png")
    failed_nm = [j for j in jobs if j.rc != 0 and failed_by_nm(j, events)]
    known = [{"n": j.n, "app_id": j.app_id, "why": why} for j in jobs
             if j.rc != 0 and (why := yarn_1902(j, containers or {}))]
    summary = {
        "args": dict(args_doc),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "jobs": {"submitted": submitted, "succeeded": sum(j.rc == 0 for j in jobs),
                 "failed": sum(j.rc != 0 for j in jobs), "failed_during_nm_restart": len(failed_nm),
                 "failed_known_hadoop": known,
                 "by_label": _by_label(jobs)},
        "events": [asdict(e) for e in events],
        "trends": [asdict(t) for t in ts],
        "last_sample": rows[-1] if rows else None,
        "rm_heap_kb_per_completed_app": heap_per_app(rows, minutes),
        "rm_thread_growth": thread_growth(thread_dumps[0], thread_dumps[1]) if len(thread_dumps) == 2 else {},
        "rm_histogram_growth": [{"class": c, "instances": n, "bytes": b} for c, n, b in growth],
        # the apps the RM keeps after they finish, and the shim's own objects, after warm-up and at the end
        "rm_key_classes": {k: [class_totals(h, k) for h in histograms] for k in KEY_CLASSES} if pair else {},
        "ok": ok, "reasons": reasons,
        "thresholds": {"growth_limit_pct_h": GROWTH_LIMIT_PCT_H, "band_pct": BAND_PCT, "band_abs": BAND_ABS,
                       "warmup_fraction": WARMUP_FRACTION, "fit_from": FIT_FROM},
    }
    (out / "summary.json").write_text(json.dumps(_no_nan(summary), indent=1) + "\n")
    text = report_md(summary, ts)
    (out / "report.md").write_text(text)
    print(text)
    say(f"soak: {'PASS' if ok else 'FAIL'}; wrote {out}/samples.csv, jobs.csv, soak.png, report.md, summary.json")
    return 0 if ok else 1


def rebuild(out: Path, cluster_dir: Path, say: Callable[[str], None]) -> int:
    """Judge a finished run again from OUT's samples.csv, jobs.csv and summary.json and the RM dumps in the cluster dir."""
    try:
        doc = json.loads((out / "summary.json").read_text())
        with (out / "jobs.csv").open(newline="") as f:
            jobs = [JobRecord(int(r["n"]), r["label"], float(r["start_min"]), float(r["end_min"]), int(r["rc"]),
                              r["app_id"]) for r in csv.DictReader(f)]
        events = [Event(**e) for e in doc["events"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        say(f"soak: cannot rebuild the report from {out}: {type(e).__name__}: {e}")
        return 2
    histograms, threads = [], []
    for tag in ("warm", "end"):
        try:
            histograms.append(parse_histogram((cluster_dir / f"rm-histo-{tag}.txt").read_text()))
            threads.append(thread_groups((cluster_dir / f"rm-threads-{tag}.txt").read_text()))
        except OSError:
            say(f"soak: no RM dumps ({tag}) in {cluster_dir}: the report has no class or thread growth")
            histograms, threads = [], []
            break
    return write_report(out, doc["args"], jobs, events, int(doc["jobs"]["submitted"]), histograms, threads, say,
                        containers_by_app(cluster_dir / "logs" / "resourcemanager.log"))


def _no_nan(v: Any) -> Any:
    """JSON has no NaN: a metric without enough samples is null."""
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, dict):
        return {k: _no_nan(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_no_nan(x) for x in v]
    return v


def thread_growth(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """Thread-name groups whose count changed between two dumps, largest change first."""
    diff = {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}
    return dict(sorted(((k, d) for k, d in diff.items() if d), key=lambda kv: (-abs(kv[1]), kv[0])))


def heap_per_app(rows: Sequence[Mapping[str, float | None]], total_min: float) -> float | None:
    """Least-squares KB of RM live heap per completed application over the second half (the RM keeps finished apps)."""
    pts = [(r["rm_apps_completed"], r["rm_heap_mb"]) for r in rows
           if (r["minute"] or 0) >= total_min * FIT_FROM and r.get("rm_apps_completed") is not None
           and r.get("rm_heap_mb") is not None]
    if len({a for a, _ in pts}) < 2:
        return None
    return round(1024 * ls_slope([a or 0.0 for a, _ in pts], [h or 0.0 for _, h in pts]), 1)


def _by_label(jobs: Sequence[JobRecord]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for j in jobs:
        d = out.setdefault(j.label, {"ok": 0, "failed": 0})
        d["ok" if j.rc == 0 else "failed"] += 1
    return dict(sorted(out.items()))


def report_md(summary: Mapping[str, Any], ts: Sequence[Trend]) -> str:
    """report.md: the table, the jobs, the disruptions and the verdict."""
    j, ev = summary["jobs"], summary["events"]
    kills = sum(e["kind"] == "serve-kill" for e in ev)
    nms = [e for e in ev if e["kind"] == "nm-restart"]
    lines = [
        f"# Soak: {summary['args']['minutes']:g} min, policy {summary['args']['policy']}", "",
        markdown_table(ts),
        f"Jobs: {j['submitted']} submitted, {j['succeeded']} succeeded, {j['failed']} failed "
        f"({j['failed_during_nm_restart']} while a NodeManager restarted; "
        f"{len(j.get('failed_known_hadoop', []))} Hadoop 2.7's distributed-shell over-allocation hang: "
        + (", ".join(f"job {k['n']} ({k['app_id']}), {k['why']}" for k in j.get("failed_known_hadoop", [])) or "none")
        + "). By kind: "
        + ", ".join(f"{k} {v['ok']}/{v['ok'] + v['failed']}" for k, v in j["by_label"].items()) + ".", "",
        f"Disruptions: {kills} policy-server SIGKILLs, {len(nms)} NodeManager restarts ("
        + ", ".join(f"minute {e['start_min']:g}: {e['detail']}" for e in nms) + ").", "",
        f"RM live heap per completed application (second half, least squares): "
        f"{summary['rm_heap_kb_per_completed_app']} KB; the RM keeps up to "
        f"yarn.resourcemanager.max-completed-applications ({summary['args'].get('completed_apps', 10000)}) "
        "finished apps in memory.", "",
        *_growth_lines(summary["rm_histogram_growth"]),
        *_key_lines(summary["rm_key_classes"], j["submitted"]),
        *_thread_lines(summary["rm_thread_growth"]),
        "Verdict: " + ("no growth trend; no job failed but during a NodeManager restart or by YARN-1902."
                       if summary["ok"]
                       else "FAIL: " + "; ".join(summary["reasons"])), "",
    ]
    return "\n".join(lines)


def _growth_lines(growth: Sequence[Mapping[str, Any]]) -> list[str]:
    if not growth:
        return []
    return ["RM classes whose live bytes grew most from the end of warm-up to the end (jcmd GC.class_histogram):", "",
            "| class | + instances | + KB |", "|---|---:|---:|",
            *(f"| `{g['class']}` | {g['instances']:+d} | {g['bytes'] / 1024:+.1f} |" for g in growth), ""]


def _key_lines(keys: Mapping[str, Sequence[Sequence[int]]], submitted: int) -> list[str]:
    if not keys:
        return []

    def name(k: str) -> str:
        return f"{k}*" if k.endswith(".") else k.rsplit(".", 1)[-1]
    parts = [f"`{name(k)}` {a[0]} ({a[1] / 1024:,.1f} KB) → {b[0]} ({b[1] / 1024:,.1f} KB)" for k, (a, b) in keys.items()]
    return [f"Live in the RM after warm-up → at the end ({submitted} jobs submitted in all): " + "; ".join(parts) + ".",
            ""]


def _thread_lines(growth: Mapping[str, int]) -> list[str]:
    if not growth:
        return ["RM threads by name: no group changed from the end of warm-up to the end (jcmd Thread.print).", ""]
    return ["RM threads by name (digits as #) whose count changed from the end of warm-up to the end "
            "(jcmd Thread.print): " + ", ".join(f"`{k}` {d:+d}" for k, d in list(growth.items())[:12]) + ".", ""]


def plot(rows: Sequence[Mapping[str, float | None]], events: Sequence[Event], ts: Sequence[Trend], path: Path) -> None:
    """soak.png: one panel per metric and the jobs vs minute, lines at serve kills and NodeManager restarts."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(11, 9), sharex=True)
    fit = {t.metric: t for t in ts}
    minutes = [r["minute"] or 0.0 for r in rows]
    for ax, metric in zip(axes.flat, METRICS):
        pts = [(m, r[metric]) for m, r in zip(minutes, rows) if r.get(metric) is not None]
        ax.plot([m for m, _ in pts], [v for _, v in pts], ".-", lw=1, ms=3)
        t = fit.get(metric)
        if t is not None:
            ax.set_title(f"{UNITS[metric]}: {t.growth_pct_h:+.1f} %/h, {'flat' if t.ok else 'GROWS'}", fontsize=9)
        ax.set_ylim(0, max((v or 0.0 for _, v in pts), default=1.0) * 1.15)  # from 0: growth shows as a share
    ax = axes.flat[5]
    for col, label in (("jobs_succeeded", "succeeded"), ("jobs_failed", "failed"), ("serve_restarts", "serve kills")):
        ax.plot(minutes, [r.get(col) or 0 for r in rows], label=label)
    ax.legend(fontsize=8)
    ax.set_title("jobs (cumulative)", fontsize=9)
    for ax in axes.flat:
        for e in events:
            ax.axvline(e.start_min, color="red" if e.kind == "nm-restart" else "0.7",
                       ls="--" if e.kind == "nm-restart" else ":", lw=1)
    for ax in axes[-1]:
        ax.set_xlabel("minute (grey: serve SIGKILL, red: NodeManager restart)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------- CLI


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # one clear line, not argparse's usage block
        self.exit(2, f"{PROG}: {message} (see --help)\n")


def _positive(kind: type[float] | type[int]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return v
    return parse


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; a bad flag exits 2 with one line."""
    p = _Parser(prog=PROG, description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--minutes", type=_positive(float), default=60.0, help="how long the jobs run (default %(default)s)")
    p.add_argument("--policy", default="hmrf", help="the Python policy behind the shim (default %(default)s)")
    p.add_argument("--out", type=Path, default=Path("soak-out"),
                   help="where samples.csv, jobs.csv, soak.png, report.md and summary.json go (default %(default)s)")
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "soak-cluster",
                   help="the cluster's own directory; never share a running cluster's (default %(default)s)")
    p.add_argument("--serve-every-min", type=float, default=5.0,
                   help="SIGKILL and restart the policy server every this many minutes, half a period off the "
                        "grid; 0: never (default %(default)s)")
    p.add_argument("--nm-restarts", type=int, default=2,
                   help="NodeManager restarts, evenly spaced (at 1/3 and 2/3 for 2), nodemanager-0 first "
                        "(default %(default)s)")
    p.add_argument("--sample-s", type=_positive(float), default=60.0,
                   help="seconds between samples of the RM and serve (default %(default)s)")
    p.add_argument("--clients", type=_positive(int), default=3,
                   help="clients kept running at once; a new job starts when one ends (default %(default)s)")
    p.add_argument("--completed-apps", type=_positive(int), default=100,
                   help="yarn.resourcemanager.max-completed-applications of the soak's RM: finished apps it keeps "
                        "in memory (default %(default)s; Hadoop's 10,000 makes the heap grow all hour)")
    p.add_argument("--report-only", action="store_true",
                   help="start no cluster: judge the run already in OUT again (samples.csv, jobs.csv, summary.json, "
                        "and the RM's class histograms and thread dumps in --dir) and rewrite its report.md, "
                        "soak.png and summary.json")
    args = p.parse_args(argv)
    if args.serve_every_min < 0:
        p.error(f"--serve-every-min must be 0 or more, got {args.serve_every_min:g}")
    if args.nm_restarts < 0:
        p.error(f"--nm-restarts must be 0 or more, got {args.nm_restarts}")
    if args.sample_s > args.minutes * 60 / 4:
        p.error(f"--sample-s {args.sample_s:g} leaves fewer than 4 samples in {args.minutes:g} min")
    from yarnctl.policies import REGISTRY

    if args.policy not in REGISTRY:
        p.error(f"unknown policy {args.policy!r}; valid: {', '.join(sorted(REGISTRY))}")
    home_cluster = Path.home() / ".yarnctl" / "cluster"
    if args.dir.expanduser().resolve() == home_cluster.resolve():
        p.error(f"--dir {args.dir} is the default cluster's: give the soak a directory of its own")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse, run the soak, return its exit code."""
    args = parse_args(argv)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if args.report_only:
        return rebuild(args.out, args.dir, say)
    try:
        return run(args, say)
    except KeyboardInterrupt:
        say("soak: interrupted; the cluster is down, samples so far are in " + str(args.out / "samples.csv"))
        return 130
    except Exception as e:
        from yarnctl.errors import ClusterError

        if isinstance(e, ClusterError):
            say(f"soak: {e}")
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
