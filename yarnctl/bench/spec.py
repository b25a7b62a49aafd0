"""Bench specs: which real Hadoop example programs to run, with what arguments, and when to submit each."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from yarnctl.errors import WorkloadError
from yarnctl.model import Resources
from yarnctl.sim.workload import Reader, load_yaml
from yarnctl.sim.workload.parse import queue_specs
from yarnctl.sim.workload.queues import QueueSpec, TreeError, tree

# program -> (client alias of LocalCluster.client_command, example name given to the driver or None)
PROGRAMS: dict[str, tuple[str, str | None]] = {
    "sleep": ("sleep", None),
    "pi": ("examples", "pi"),
    "wordcount": ("examples", "wordcount"),
    "grep": ("examples", "grep"),
    "sort": ("examples", "sort"),
    "randomtextwriter": ("examples", "randomtextwriter"),
    "teragen": ("examples", "teragen"),
    "terasort": ("examples", "terasort"),
}
TAG_PREFIX = "yarnctl.bench="  # mapreduce.job.tags value that ties a YARN application to its bench job


@dataclass(frozen=True, slots=True)
class BenchJob:
    """One real job: an example program, its arguments ({work} is the run's work dir) and its submit offset."""

    id: str
    program: str
    args: tuple[str, ...]
    submit_s: float
    user: str = ""
    queue: str = ""


@dataclass(frozen=True, slots=True)
class TextInput:
    """A text input written by yarnctl before the run (wordcount/grep/sort input), untimed."""

    path: str  # relative to the work dir
    files: int
    mb: float


@dataclass(frozen=True, slots=True)
class BenchSpec:
    """A named bench: cluster size, untimed inputs and the timed jobs in submission order."""

    name: str
    description: str
    nodes: int
    nm_memory_mb: int
    nm_vcores: int
    inputs: tuple[TextInput, ...]
    jobs: tuple[BenchJob, ...]
    # the queue tree written to capacity-scheduler.xml (`cluster.queues`, as in a workload); none: the site's own
    queues: tuple[QueueSpec, ...] = ()


_TOP = {"name", "description", "cluster", "schedule", "inputs", "jobs"}
_JOB = {"id", "program", "args", "submit_s", "user", "queue"}


def builtin_dir() -> Path:
    """Where the built-in bench specs live."""
    return Path(__file__).parent / "builtin"


def builtin_names() -> list[str]:
    """Names of the built-in bench specs."""
    return sorted(p.stem for p in builtin_dir().glob("*.yaml"))


def load_spec(name_or_path: str, seed: int = 0) -> BenchSpec:
    """A built-in bench spec by name or a YAML file; WorkloadError naming the field on bad input."""
    path = Path(name_or_path)
    if not path.exists():
        if name_or_path not in builtin_names():
            raise WorkloadError(name_or_path, "", "no such file or built-in bench; built-ins: " + ", ".join(builtin_names()))
        path = builtin_dir() / f"{name_or_path}.yaml"
    try:
        doc = load_yaml(path.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(str(path), "", f"cannot read: {e}") from None
    except yaml.YAMLError as e:
        raise WorkloadError(str(path), "", f"malformed YAML: {str(e).splitlines()[0]}") from None
    return parse_spec(doc, str(path), path.stem, seed)


def parse_spec(doc: Any, source: str, default_name: str, seed: int = 0) -> BenchSpec:
    """Check and build a BenchSpec from parsed YAML; submit times come from `schedule` unless a job has its own."""
    r = Reader(source)
    top = r.mapping(doc, "")
    r.keys(top, "", _TOP)
    cl = r.mapping(top.get("cluster", {}), "cluster")
    r.keys(cl, "cluster", {"nodes", "nm_memory_mb", "nm_vcores", "queues"})
    nodes = r.integer(cl.get("nodes", 2), "cluster.nodes")
    mem = r.integer(cl.get("nm_memory_mb", 8192), "cluster.nm_memory_mb", minimum=1024)
    vcores = r.integer(cl.get("nm_vcores", 8), "cluster.nm_vcores")
    queues = tuple(queue_specs(r, cl["queues"])) if "queues" in cl else ()
    try:
        leaves = {q.name: q for q in tree(queues, Resources(nodes * mem, nodes * vcores), Resources(128, 1)) if q.leaf}
    except TreeError as e:
        raise r.fail(e.where, e.problem) from None
    inputs = []
    for i, raw in enumerate(top.get("inputs") or []):
        p = f"inputs[{i}]"
        m = r.mapping(raw, p)
        r.keys(m, p, {"text"})
        t = r.mapping(m.get("text"), f"{p}.text")
        r.keys(t, f"{p}.text", {"path", "files", "mb"})
        inputs.append(TextInput(r.string(t.get("path"), f"{p}.text.path"), r.integer(t.get("files", 1), f"{p}.text.files"),
                                r.number(t.get("mb", 1), f"{p}.text.mb", strict=True)))
    raw_jobs = top.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        raise r.fail("jobs", "expected a non-empty list of jobs")
    offsets = _schedule(r, top.get("schedule", {"interval_s": 5}), len(raw_jobs), seed)
    jobs, seen = [], set()
    for i, raw in enumerate(raw_jobs):
        p = f"jobs[{i}]"
        m = r.mapping(raw, p)
        r.keys(m, p, _JOB)
        job_id = r.string(m.get("id", f"j{i + 1:02d}"), f"{p}.id")
        if job_id in seen:
            raise r.fail(f"{p}.id", f"duplicate job id {job_id!r}")
        seen.add(job_id)
        program = r.string(m.get("program"), f"{p}.program")
        if program not in PROGRAMS:
            raise r.fail(f"{p}.program", f"unknown program {program!r}; expected one of {', '.join(sorted(PROGRAMS))}")
        args = m.get("args", [])
        if not isinstance(args, list):
            raise r.fail(f"{p}.args", "expected a list of command-line arguments")
        submit = r.number(m["submit_s"], f"{p}.submit_s") if "submit_s" in m else offsets[i]
        queue = str(m.get("queue", ""))
        if queues and (queue not in leaves or not leaves[queue].running):
            raise r.fail(f"{p}.queue", f"job {job_id} names queue {queue!r}; cluster.queues' running leaves are "
                                       + ", ".join(sorted(n for n, q in leaves.items() if q.running)))
        jobs.append(BenchJob(job_id, program, tuple(str(a) for a in args), submit, str(m.get("user", "")), queue))
    jobs.sort(key=lambda j: (j.submit_s, j.id))
    return BenchSpec(str(top.get("name", default_name)), str(top.get("description", "")), nodes, mem, vcores,
                     tuple(inputs), tuple(jobs), queues)


def _schedule(r: Reader, raw: Any, n: int, seed: int) -> list[float]:
    """Submit offsets: every `interval_s` (the DRESS paper's 5 s) or uniform in [low, high] (HaSTE's 0-60 s)."""
    m = r.mapping(raw, "schedule")
    r.keys(m, "schedule", {"interval_s", "random"})
    if "random" in m:
        rnd = r.mapping(m["random"], "schedule.random")
        r.keys(rnd, "schedule.random", {"low", "high"})
        low = r.number(rnd.get("low", 0), "schedule.random.low")
        high = r.number(rnd.get("high", 60), "schedule.random.high", minimum=low)
        rng = random.Random(seed)
        return sorted(round(rng.uniform(low, high), 1) for _ in range(n))
    step = r.number(m.get("interval_s", 5), "schedule.interval_s")
    return [i * step for i in range(n)]
