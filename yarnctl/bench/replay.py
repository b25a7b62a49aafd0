"""A real bench run as the simulator and Hadoop SLS see it: the same jobs, submitted when the RM got them.

SleepJobs are replayed from their arguments (maps, reduces, sleep times, container sizes) with the
local cluster's MapReduce defaults (hadoop-conf/mapred-site.xml); the example programs that do real
work (wordcount, pi, teragen) take each task's time from the run's own job history, less the fitted
launch cost, as a trace would give it. What starting a container costs is not replayed from the run:
it is the `Startup` fitted by the fidelity benchmark (`bench/fidelity.py`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from yarnctl.bench.jhist import JobHistory, TaskAttempt, read_jhist
from yarnctl.bench.spec import BenchJob, BenchSpec
from yarnctl.errors import ClusterError
from yarnctl.sim.workload import Startup, Workload
from yarnctl.sim.workload.parse import Parser
from yarnctl.sim.workload.queues import spec_doc

MIN_TASK_S = 0.5  # a replayed task never runs shorter than this, whatever the fit took off it
REPLAY_VERSION = 3  # bumped when the same run replays differently: SLS results kept from an older replay are redone
_SLEEP_FLAGS = {"-m": "maps", "-r": "reduces", "-mt": "map_ms", "-rt": "reduce_ms"}


@dataclass(frozen=True, slots=True)
class Stage:
    """A replayed stage: its tasks' work in seconds (launch cost excluded) and container memory."""

    durations: tuple[float, ...]
    memory_mb: int


@dataclass(frozen=True, slots=True)
class ReplayJob:
    """One real job as replayed: when the RM got it, its AM size, slow start and stages."""

    id: str
    submit_s: float
    am_mb: int
    slowstart: float
    maps: Stage
    reduces: Stage | None
    queue: str = ""  # the queue it was submitted to ("": the cluster's default)
    # its maps ran data-local (the job history's DATA_LOCAL_MAPS): their splits name the NodeManagers' host, which
    # on the local cluster is every node's (`localhost`), so each map asks for every node (StageSpec.hosts)
    local: bool = False


@cache
def site_defaults() -> Mapping[str, str]:
    """The local cluster's mapred-site.xml properties (the sizes a job gets unless it sets its own)."""
    from yarnctl.cluster.classpath import repo_root

    path = repo_root() / "hadoop-conf" / "mapred-site.xml"
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise ClusterError(f"{path}: cannot read the cluster's MapReduce defaults ({e})") from None
    return {p.findtext("name", ""): p.findtext("value", "") for p in root.iter("property")}


def job_conf(args: Sequence[str]) -> dict[str, str]:
    """A job's configuration as its client sees it: mapred-site.xml, then its own -Dname=value options."""
    conf = {"mapreduce.job.reduce.slowstart.completedmaps": "0.05", "yarn.app.mapreduce.am.resource.mb": "1536",
            "mapreduce.map.memory.mb": "1024", "mapreduce.reduce.memory.mb": "1024", **site_defaults()}
    for a in args:
        if a.startswith("-D") and "=" in a:
            k, v = a[2:].split("=", 1)
            conf[k] = v
    return conf


def sleep_shape(args: Sequence[str]) -> dict[str, int]:
    """SleepJob's -m/-r/-mt/-rt (maps, reduces, sleep ms each), with SleepJob's defaults of 1/1/100/100."""
    out = {"maps": 1, "reduces": 1, "map_ms": 100, "reduce_ms": 100}
    for flag, value in zip(args, args[1:]):
        if flag in _SLEEP_FLAGS:
            out[_SLEEP_FLAGS[flag]] = int(value)
    return out


def job_id_of(app_id: str) -> str:
    """The MapReduce job id of a YARN application id (application_X_N -> job_X_N)."""
    return "job_" + app_id.removeprefix("application_")


def histories(history_dir: Path) -> dict[str, JobHistory]:
    """Every kept .jhist of a run by job id."""
    out = {}
    for f in sorted(history_dir.glob("*.jhist")):
        h = read_jhist(f)
        out[h.job_id] = h
    return out


def maps_done_ms(history: JobHistory) -> int:
    """When the job's last succeeded map finished (0 without one)."""
    return max((a.finish_ms for a in history.of_type("MAP") if a.status == "SUCCEEDED"), default=0)


def waited_for_maps(a: TaskAttempt, maps_done: int) -> bool:
    """A reduce launched before the last map finished (slow start): it waited for them, as the simulator's does."""
    return a.type == "REDUCE" and a.start_ms < maps_done


def start_costs(jobs_history: Mapping[str, JobHistory], launch_s: float, per_concurrent_s: float,
                nodes: int, cpu_s: float = 0.0, cores: float = 0.0, shared: bool = True) -> dict[str, float]:
    """Each task attempt's start-up cost as the simulator's model charges it, at the run's own concurrency.

    Its history names no NodeManager apart (both report `localhost`), so the containers still
    starting when an attempt launched are counted on the whole machine and shared out over its
    `nodes` NodeManagers: `launch_s + per_concurrent_s * starting / nodes`, plus, under the CPU model
    (`cpu_s` on `cores` shared by the machine), its JVM's CPU-seconds at its share of the cores
    `cpu_s * max(1, (starting + 1) / cores)`, or with a pool per NodeManager (not `shared`)
    `starting / nodes` in place of `starting` (an estimate: the starts beside it are taken to last
    as long as it does). An attempt is still
    starting until its cost has passed or it finished, whichever is first; an ApplicationMaster from
    its AM_STARTED until then or its JOB_INITED. A reduce launched at slow start counts from its launch,
    as the simulator starts its JVM then, while it waits for the maps (its replayed work is what it did
    after the last map: `replay_jobs`).
    """
    starts: list[tuple[int, str, int]] = []  # (start ms, key, end ms)
    for h in jobs_history.values():
        if h.am_start_ms:
            starts.append((h.am_start_ms, f"am:{h.job_id}", h.launch_ms if h.launch_ms > h.am_start_ms else 1 << 62))
        starts += [(a.start_ms, a.attempt_id, a.finish_ms if a.finish_ms > a.start_ms else 1 << 62)
                   for a in h.attempts if a.start_ms]
    ready: list[float] = []
    out = {}
    for start_ms, key, end_ms in sorted(starts):
        t = start_ms / 1000.0
        starting = sum(1 for r in ready if r > t)
        cost = launch_s + per_concurrent_s * starting / max(nodes, 1)
        if cpu_s > 0 and cores > 0:  # the CPU model's start: its CPU-seconds at its share of the machine's cores
            cost += cpu_s * max(1.0, ((starting if shared else starting / max(nodes, 1)) + 1) / cores)
        ready.append(min(t + cost, end_ms / 1000.0))
        out[key] = cost
    return out


def replay_jobs(spec: BenchSpec, records: Sequence[Mapping[str, Any]], jobs_history: Mapping[str, JobHistory],
                launch_s: float, per_concurrent_s: float = 0.0, cpu_s: float = 0.0,
                cores: float = 0.0, shared: bool = True) -> list[ReplayJob]:
    """The succeeded jobs of one run, submit times on the run's own clock (its first submit is 0).

    A measured task's work is its attempt's time less its start-up cost: `launch_s` alone, or with
    `per_concurrent_s` or the CPU model's `cpu_s` on `cores` the cost the model charges at the run's
    concurrency (`start_costs`), so that the replay does not charge a crowded start twice.
    """
    costs = (start_costs(jobs_history, launch_s, per_concurrent_s, spec.nodes, cpu_s, cores, shared)
             if per_concurrent_s or cpu_s else {})
    by_id = {j.id: j for j in spec.jobs}
    done = [r for r in records if r.get("final_status") == "SUCCEEDED" and r.get("submit_ms")]
    if not done:
        raise ClusterError(f"{spec.name}: the run has no succeeded job to replay")
    t0 = min(int(r["submit_ms"]) for r in done)
    out = []
    for r in sorted(done, key=lambda r: (int(r["submit_ms"]), str(r["job_id"]))):
        job = by_id.get(str(r["job_id"]))
        if job is None:
            raise ClusterError(f"{spec.name}: the run has job {r['job_id']!r}, which the spec does not")
        conf = job_conf(job.args)
        history = jobs_history.get(job_id_of(str(r.get("app_id", ""))))
        out.append(ReplayJob(job.id, (int(r["submit_ms"]) - t0) / 1000.0,
                             int(conf["yarn.app.mapreduce.am.resource.mb"]),
                             float(conf["mapreduce.job.reduce.slowstart.completedmaps"]),
                             *_stages(job, conf, history, launch_s, costs),
                             job.queue, history is not None and history.locality[0] > 0))
    return out


def _stages(job: BenchJob, conf: Mapping[str, str], history: JobHistory | None,
            launch_s: float, costs: Mapping[str, float]) -> tuple[Stage, Stage | None]:
    map_mb, reduce_mb = int(conf["mapreduce.map.memory.mb"]), int(conf["mapreduce.reduce.memory.mb"])
    if job.program == "sleep":
        s = sleep_shape(job.args)
        maps = Stage((max(MIN_TASK_S, s["map_ms"] / 1000.0),) * s["maps"], map_mb)
        reduces = Stage((max(MIN_TASK_S, s["reduce_ms"] / 1000.0),) * s["reduces"], reduce_mb) if s["reduces"] else None
        return maps, reduces
    if history is None:
        raise ClusterError(f"job {job.id} ({job.program}): no job history kept, so its task times are unknown")

    done = maps_done_ms(history)

    def measured(kind: str) -> tuple[float, ...]:
        out = []
        for a in history.of_type(kind):
            if a.status != "SUCCEEDED":
                continue
            if waited_for_maps(a, done):
                # its work is what it did after the last map and its own start, as the simulator's waits for both
                began = max(done / 1000.0, a.start_ms / 1000.0 + costs.get(a.attempt_id, launch_s))
            else:
                began = a.start_ms / 1000.0 + costs.get(a.attempt_id, launch_s)
            out.append(max(MIN_TASK_S, a.finish_ms / 1000.0 - began))
        return tuple(out)

    m, red = measured("MAP"), measured("REDUCE")
    if not m:
        raise ClusterError(f"job {job.id} ({job.program}): its history has no succeeded map")
    return Stage(m, map_mb), (Stage(red, reduce_mb) if red else None)


def workload_doc(name: str, spec: BenchSpec, jobs: Sequence[ReplayJob], startup: Startup,
                 phases: Sequence[float] = ()) -> dict[str, Any]:
    """The replayed jobs as a workload document (docs/workloads.md) on the bench's cluster (heartbeat `phases` if given)."""
    def stage(s: Stage) -> dict[str, Any]:
        durations: Any = s.durations[0] if len(set(s.durations)) == 1 else [round(d, 3) for d in s.durations]
        return {"tasks": len(s.durations), "resource": {"memory_mb": s.memory_mb, "vcores": 1}, "duration": durations}

    out_jobs = []
    for j in jobs:
        d: dict[str, Any] = {"id": j.id, "submit_s": round(j.submit_s, 3), "type": "mapreduce",
                             "am": {"memory_mb": j.am_mb, "vcores": 1}, "slowstart": j.slowstart,
                             "maps": stage(j.maps)}
        if j.local:
            d["maps"]["hosts"] = "all"
        if j.reduces is not None:
            d["reduces"] = stage(j.reduces)
        if j.queue:
            d["queue"] = j.queue
        out_jobs.append(d)
    min_mb = 128  # yarn.scheduler.minimum-allocation-mb of the local cluster (hadoop-conf/yarn-site.xml)
    cluster: dict[str, Any] = {"nodes": spec.nodes, "node": {"memory_mb": spec.nm_memory_mb, "vcores": spec.nm_vcores},
                               "heartbeat_s": 1.0, "min_allocation": {"memory_mb": min_mb, "vcores": 1},
                               "startup": startup_doc(replace(startup, take_up=True))}
    if phases:
        cluster["heartbeat_phases"] = list(phases)
    if spec.queues:
        cluster["queues"] = [spec_doc(q) for q in spec.queues]
    return {"name": name, "description": f"{spec.name} as the real cluster received it", "cluster": cluster,
            "defaults": {"user": "root", "queue": "default"}, "jobs": out_jobs}


def startup_doc(startup: Startup) -> dict[str, Any]:
    """A workload's `cluster.startup`, the CPU model's keys only when it is on."""
    doc: dict[str, Any] = {"am_s": startup.am_s, "launch_s": startup.launch_s,
                           "launch_per_concurrent_s": startup.launch_per_concurrent_s}
    if startup.launch_cpu_s or startup.am_cpu_s or startup.client_cpu_s:
        doc.update(launch_cpu_s=startup.launch_cpu_s, launch_cores=startup.launch_cores)
    if startup.am_cpu_s:
        doc.update(am_cpu_s=startup.am_cpu_s)
    if startup.client_cpu_s:
        doc.update(client_cpu_s=startup.client_cpu_s)
    if startup.launch_shared:
        doc.update(launch_shared=True)
    if startup.take_up:
        doc.update(take_up=True)
    return doc


def to_workload(doc: Mapping[str, Any], source: str) -> Workload:
    """Check and build the workload of `workload_doc` (the parser every workload file goes through)."""
    return Parser(source, 0).workload(doc, str(doc["name"]))


def sls_trace(jobs: Sequence[ReplayJob], nodes: int, launch_s: float) -> list[dict[str, Any]]:
    """The replayed jobs as an SLS trace: each task lasts its work plus the fitted launch cost.

    SLS 2.7 has no launch model and gives every task the same container size and every AM 1 GB;
    its MRAMSimulator asks for the reduces once all maps are done (no slow start).
    """
    out = []
    for j in jobs:
        submit_ms = int(round(j.submit_s * 1000))
        tasks: list[dict[str, Any]] = []
        stages = [("map", 20, j.maps)] + ([("reduce", 10, j.reduces)] if j.reduces else [])
        for kind, priority, st in stages:
            for i, d in enumerate(st.durations):
                ms = int(round((d + launch_s) * 1000))
                # SLS asks for the host of each task; spread them over the nodes as the real runs did
                tasks.append({"container.host": f"/default-rack/node{len(tasks) % nodes + 1}",
                              "container.start.ms": submit_ms, "container.end.ms": submit_ms + ms,
                              "container.priority": priority, "container.type": kind})
        end = max(int(t["container.end.ms"]) for t in tasks)
        out.append({"am.type": "mapreduce", "job.start.ms": submit_ms, "job.end.ms": end, "job.queue.name": "default",
                    "job.id": j.id, "job.user": "root", "job.tasks": tasks})
    return out
