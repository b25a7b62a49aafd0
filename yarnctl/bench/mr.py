"""The `mr` backend: a bench spec's Hadoop example jobs on a local cluster, one cluster per scheduler."""

from __future__ import annotations

import dataclasses
import random
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yarnctl.bench import taskstart
from yarnctl.bench.collect import AppRecord, missing, record
from yarnctl.bench.jhist import read_jhist
from yarnctl.bench.shares import RmSampler
from yarnctl.bench.spec import PROGRAMS, TAG_PREFIX, BenchJob, BenchSpec, TextInput
from yarnctl.cluster.local import HDFS_DIR, TERMINAL_STATES, LocalCluster, app_ids
from yarnctl.errors import ClusterError, RMError
from yarnctl.rm import AppInfo, HistoryServer, HttpSettings, ResourceManager
from yarnctl.sim.workload.queues import site_properties

# each client starts this long before its slot and sets its job up at once; only the submission waits
# for the slot (io.yarnctl.bench.AtTime, TimedYarnRunner). Set-up took up to 16 s on a loaded 2-core
# machine (docs/bench.md)
LEAD_S = 25.0
TIMED_FRAMEWORK = "yarnctl-at"  # mapreduce.framework.name of the shim jar's timed YARN client
NATIVE_PREFIX = "native-"  # `native-capacity` runs the stock CapacityScheduler, anything else the shim + that policy
_PROBE = HttpSettings(connect_timeout_s=2.0, read_timeout_s=10.0, retries=1)
_WORDS = ("yarn", "container", "queue", "node", "heartbeat", "map", "reduce", "shuffle", "fair", "share",
          "reserve", "small", "large", "job", "task", "memory", "vcore", "policy", "decision", "delta")

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class MrRun:
    """One scheduler's run of a bench: the records and what the cluster offered."""

    label: str
    records: tuple[AppRecord, ...]
    capacity_mb: int
    capacity_vcores: int
    wall_s: float
    # a spec with a queue tree: each leaf's (allocated, pending) MB once a second (yarnctl/bench/shares.py)
    queue_samples: tuple[tuple[int, dict[str, tuple[int, int]]], ...] = ()


def run_doc(spec: BenchSpec, done: MrRun, history: Path) -> dict[str, Any]:
    """One run as bench.json keeps it: label, spec, capacity, wall time, records and its history dir."""
    located = map_locality(history)
    doc = {"label": done.label, "spec": spec.name, "capacity_mb": done.capacity_mb,
           "capacity_vcores": done.capacity_vcores, "wall_s": done.wall_s,
           "records": [dataclasses.replace(r, maps_local=located.get(r.app_id, r.maps_local)).to_json() for r in done.records],
           "history": str(history)}
    if done.queue_samples:
        doc["queue_samples"] = [[t, {q: list(v) for q, v in row.items()}] for t, row in done.queue_samples]
    return doc


def scheduler_of(label: str) -> tuple[str | None, str | None]:
    """(native scheduler, shim policy) for a label like `native-capacity` or `dress`."""
    return (label[len(NATIVE_PREFIX):], None) if label.startswith(NATIVE_PREFIX) else (None, label)


def command_args(job: BenchJob, work: Path, *, timed: bool = True) -> list[str]:
    """The client's arguments: the example's name, the tag, framework and queue -D options, then the job's own."""
    _, example = PROGRAMS[job.program]
    opts = [f"-Dmapreduce.job.tags={TAG_PREFIX}{job.id}"]
    if timed:
        opts.append(f"-Dmapreduce.framework.name={TIMED_FRAMEWORK}")
    if job.queue:
        opts.append(f"-Dmapreduce.job.queuename={job.queue}")
    args = [a.replace("{work}", str(work)).replace("{id}", job.id) for a in job.args]
    return [*([example] if example else []), *opts, *args]


def write_text(inp: TextInput, work: Path, seed: int = 0) -> None:
    """Write `inp` as `files` text files of about `mb` MB together (deterministic words)."""
    d = work / inp.path
    d.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    per_file = int(inp.mb * (1 << 20) / inp.files)
    for i in range(inp.files):
        with (d / f"part-{i:05d}.txt").open("w") as f:
            written = 0
            while written < per_file:
                line = " ".join(rng.choice(_WORDS) for _ in range(12)) + "\n"
                f.write(line)
                written += len(line)


def run(spec: BenchSpec, label: str, cluster_dir: Path, work: Path, *, serve_args: Sequence[str] = (),
        timeout_s: float = 1800.0, say: Say = lambda s: None, hdfs: bool = False) -> MrRun:
    """Start a cluster for `label`, submit the spec's jobs on schedule, wait for all, read them back, stop it."""
    native, policy = scheduler_of(label)
    lc = LocalCluster(cluster_dir)
    started = time.monotonic()
    say(f"{label}: starting a local cluster ({spec.nodes} x {spec.nm_memory_mb} MB / {spec.nm_vcores} vcores)")
    # a spec's queue tree goes into capacity-scheduler.xml, and the shim then extends CapacityScheduler
    info = lc.up(nodes=spec.nodes, policy=policy, native=native, nm_memory_mb=spec.nm_memory_mb,
                 nm_vcores=spec.nm_vcores, serve_args=serve_args, shim_on="capacity" if spec.queues else "fifo",
                 capacity_site=site_properties(spec.queues) if spec.queues else None, hdfs=hdfs)
    try:
        work.mkdir(parents=True, exist_ok=True)
        if info.namenode is not None and spec.inputs:
            lc.fs("-mkdir", "-p", str(work))
        for inp in spec.inputs:
            write_text(inp, work)
            if info.namenode is not None:  # the job reads the same path on HDFS, spread over the DataNodes
                lc.fs("-put", str(work / inp.path), str(work / inp.path))
        sampler = RmSampler(lc.rm(_PROBE)).start() if spec.queues else None
        try:
            records = _submit_and_wait(lc, spec, label, work, timeout_s, say)
        finally:
            samples = tuple(sampler.stop()) if sampler else ()
            if sampler:
                sampler.rm.close()
        if sampler:
            say(f"{label}: sampled the queues {len(samples)} times ({sampler.errors} polls failed"
                + (f"; the last: {sampler.last_error}" if sampler.errors else "") + ")")
        if info.namenode is not None:  # MapReduce wrote its history to HDFS: fetch it before `down` formats it away
            fetch_history(lc, cluster_dir / "history", label, say)
        kept = keep_history(cluster_dir, work / "history")
        say(f"{label}: kept {kept} job history files in {work / 'history'}")
        try:  # each task JVM's start-up steps, from its container's syslog: evidence, not worth the run
            jvms = taskstart.keep(cluster_dir, work)
            say(f"{label}: kept the start-up steps of {jvms} task JVMs in {work / taskstart.FILE}")
        except Exception as e:  # whatever went wrong, the run's records stand
            say(f"{label}: could not keep the task JVMs' start-up steps ({type(e).__name__}: {e}); tasks.csv lacks them")
        if policy is not None:
            say(f"{label}: kept the policy server's {', '.join(keep_policy_log(cluster_dir, work)) or 'nothing'} "
                f"in {work}")
    finally:
        lc.down()
    return MrRun(label, tuple(records), spec.nodes * info.nm_memory_mb, spec.nodes * info.nm_vcores,
                 time.monotonic() - started, samples)


def _submit_and_wait(lc: LocalCluster, spec: BenchSpec, label: str, work: Path, timeout_s: float,
                     say: Say) -> list[AppRecord]:
    env = lc.client_env()
    logs = work / "clients"
    logs.mkdir(parents=True, exist_ok=True)
    procs: dict[str, tuple[subprocess.Popen[bytes], Path, int]] = {}
    # the schedule starts one lead after now, so the first clients have their lead too
    t0 = time.monotonic() + LEAD_S
    epoch0_ms = int(time.time() * 1000 + LEAD_S * 1000)
    for job in sorted(spec.jobs, key=lambda j: (j.submit_s, j.id)):
        delay = t0 + job.submit_s - LEAD_S - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        log = logs / f"{job.id}.log"
        alias, _ = PROGRAMS[job.program]
        planned_ms = epoch0_ms + int(job.submit_s * 1000)
        with log.open("wb") as client_out:
            proc = subprocess.Popen(lc.client_command(command_args(job, work), alias, at_ms=planned_ms),
                                    env=env, cwd=work, stdout=client_out, stderr=subprocess.STDOUT)
        procs[job.id] = (proc, log, planned_ms)
        say(f"{label}: t={time.monotonic() - t0:5.1f} s started {job.id}'s client ({job.program}, slot "
            f"t={job.submit_s:.1f} s)")
    deadline = t0 + timeout_s
    for job_id, (proc, _, _) in procs.items():
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            say(f"{label}: {job_id}'s client did not finish in {timeout_s:.0f} s; killed")
    info = lc.info()
    history = HistoryServer(info.history.url, settings=_PROBE) if info.history else None
    out: list[AppRecord] = []
    with closing(lc.rm(_PROBE)) as rm:
        by_tag = {t[len(TAG_PREFIX):]: a for a in rm.apps() for t in a.application_tags if t.startswith(TAG_PREFIX)}
        for job in spec.jobs:
            proc, log, submit_ms = procs[job.id]
            app = by_tag.get(job.id)
            if app is None:  # the tag did not reach the RM: fall back to the id the client printed
                ids = app_ids(log.read_text(errors="replace"))
                app = _app(rm, ids[-1]) if ids else None
            if app is None:
                say(f"{label}: {job.id}: no application (client exit {proc.returncode}, see {log})")
                out.append(missing(job.id, job.program, submit_ms))
                continue
            if app.state not in TERMINAL_STATES:
                app = lc.wait_app(app.id, timeout_s=max(1.0, deadline - time.monotonic()))
            rec = dataclasses.replace(record(job.id, job.program, app, rm, history), planned_ms=submit_ms)
            if rec.final_status != "SUCCEEDED":
                say(f"{label}: {job.id} ({app.id}) ended {rec.final_status}; client log {log}")
            out.append(rec)
    lags = [(r.submit_ms - r.planned_ms) / 1000 for r in out if r.submit_ms and r.planned_ms]
    if lags:
        say(f"{label}: reached the RM {statistics.median(lags):+.1f} s from the schedule (median), "
            f"{min(lags):+.1f} to {max(lags):+.1f} s")
    return out


def map_locality(history: Path) -> dict[str, tuple[int, int, int]]:
    """app id -> its maps launched data-local, rack-local and off-switch, from the kept job history files."""
    out = {}
    for f in sorted(history.glob("*.jhist")):
        try:
            h = read_jhist(f)
        except ClusterError:
            continue  # a truncated file: the job's other numbers come from the JobHistoryServer anyway
        if h.job_counters:
            out[h.job_id.replace("job_", "application_", 1)] = h.locality
    return out


def fetch_history(lc: LocalCluster, into: Path, label: str, say: Say, attempts: int = 3) -> None:
    """Copy the job history from the cluster's HDFS under `into`, again if a file moved while it was copied."""
    into.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, attempts + 1):
        # a fresh folder each time: into an existing one, `-copyToLocal` would nest the tree one level down
        to = into / f"hdfs-{attempt}"
        try:
            lc.fs("-copyToLocal", f"{HDFS_DIR}/history", str(to))
            return
        except ClusterError as e:  # the JobHistoryServer moved a file from intermediate/ to done/ mid-copy
            if attempt == attempts:  # the records came from the JobHistoryServer: keep the run with what was copied
                say(f"{label}: could not fetch the job history from HDFS ({e}); tasks.csv and locality may lack it")
            else:
                shutil.rmtree(to, ignore_errors=True)  # what the failed copy left: the next one copies it all
                time.sleep(_HISTORY_MOVE_S)


_HISTORY_MOVE_S = 2.0  # mapreduce.jobhistory.move.interval-ms in hadoop-conf/mapred-site.xml
_HISTORY_SCANS = 5  # each file moves once (intermediate/ to done/): a scan that missed it finds it the next time


def keep_history(cluster_dir: Path, dest: Path) -> int:
    """Copy the run's job history (.jhist: every task attempt's start, finish and node) before `down` clears it.

    `dest` keeps this run's history only: the files an earlier run under the same label left there go.
    The JobHistoryServer moves a job's file from intermediate/ to done/ whenever it likes, so a scan
    may list it where it no longer is, or in neither folder (done/ read before the move, intermediate/
    after): the folders are scanned again until a scan after the first finds nothing new (a file a
    scan missed had moved during it, so the next one lists it).
    """
    for old in dest.glob("*.jhist"):
        old.unlink()  # a re-run's replay would read the earlier run's attempts beside its own
    kept: set[str] = set()
    for scan in range(_HISTORY_SCANS):
        changed = scan == 0
        for f in sorted((cluster_dir / "history").rglob("*.jhist")):
            if f.name in kept:
                continue
            changed = True
            dest.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(f, dest / f.name)
            except FileNotFoundError:
                continue  # moved after the scan: the next one lists it in its new folder
            kept.add(f.name)
        if not changed:
            break
    return len(kept)


def keep_policy_log(cluster_dir: Path, dest: Path) -> list[str]:
    """Copy the policy server's log (its tuning, e.g. DRESS's δ) and decision log before `down` clears them."""
    kept = []
    for f in (cluster_dir / "logs" / "serve.log", cluster_dir / "decisions.jsonl"):
        if f.is_file():
            shutil.copy2(f, dest / f.name)
            kept.append(f.name)
    return kept


def _app(rm: ResourceManager, app_id: str) -> AppInfo | None:
    try:
        return rm.app(app_id)
    except RMError:
        return None


def check_labels(labels: Sequence[str], spec: BenchSpec | None = None) -> None:
    """Refuse unknown schedulers, and stock ones a spec's queue tree means nothing to, before any cluster starts."""
    from yarnctl.cluster.conf import NATIVE_SCHEDULERS
    from yarnctl.policies import REGISTRY

    for label in labels:
        native, policy = scheduler_of(label)
        if native is not None and native not in NATIVE_SCHEDULERS:
            raise ClusterError(f"unknown stock scheduler {label!r}; valid: "
                               + ", ".join(NATIVE_PREFIX + n for n in NATIVE_SCHEDULERS))
        if policy is not None and policy not in REGISTRY:
            raise ClusterError(f"unknown policy {policy!r}; valid: {', '.join(sorted(REGISTRY))} or "
                               + ", ".join(NATIVE_PREFIX + n for n in NATIVE_SCHEDULERS))
        if spec is not None and spec.queues and native not in (None, "capacity"):
            raise ClusterError(f"{label}: bench {spec.name} declares cluster.queues, a CapacityScheduler tree; run it "
                               f"under {NATIVE_PREFIX}capacity or a policy (the shim on CapacityScheduler)")
