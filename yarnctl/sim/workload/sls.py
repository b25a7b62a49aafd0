"""Hadoop Scheduler Load Simulator job traces (SLSRunner's JSON) as workloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from yarnctl.errors import WorkloadError
from yarnctl.model import MAP_PRIORITY, REDUCE_PRIORITY, Resources
from yarnctl.sim.workload.reader import Reader, show as _show
from yarnctl.sim.workload.types import ClusterSpec, JobSpec, NodeSpec, StageSpec, Workload


SLS_CONTAINER = Resources(1024, 1)  # SLS's own defaults for a container and a NodeManager (docs/workloads.md)
SLS_NODE = Resources(10240, 10)


def parse_sls(text: str, source: str, *, container: Resources = SLS_CONTAINER,
              node: Resources = SLS_NODE, topology: str | None = None,
              heartbeat_s: float = 1.0) -> Workload:
    """A workload from an SLS job trace (SLSRunner.java:274-340 field names)."""
    r = Reader(source)
    docs = json_values(text, source)
    if len(docs) == 1 and isinstance(docs[0], list):
        docs = docs[0]
    if not docs:
        raise r.fail("", "the trace has no jobs")
    if not container.fits_in(node):
        raise r.fail("", f"containers of {container} fit on no node of {node}")
    hosts: dict[str, str] = {}
    jobs = []
    first: dict[str, int] = {}  # each job id's first job: the simulator keys jobs by id (SLSRunner's amMap too)
    for i, d in enumerate(docs):
        p = f"job[{i}]"
        d = r.required(d, p, ("job.start.ms", "job.tasks"))
        jid = r.string(d.get("job.id", f"job_{i + 1}"), f"{p}.job.id")
        if first.setdefault(jid, i) != i:
            given = "" if "job.id" in d else ", the id given to a job without one"
            raise r.fail(f"{p}.job.id", f"duplicate job id {jid!r}{given} (first at job[{first[jid]}])")
        start = r.number(d["job.start.ms"], f"{p}.job.start.ms") / 1000.0
        tasks = d["job.tasks"]
        if not isinstance(tasks, list) or not tasks:
            raise r.fail(f"{p}.job.tasks", "expected a non-empty list")
        kinds: dict[str, list[float]] = {"map": [], "reduce": []}
        for t, task in enumerate(tasks):
            tp = f"{p}.job.tasks[{t}]"
            task = r.required(task, tp, ("container.start.ms", "container.end.ms"))
            s = r.number(task["container.start.ms"], f"{tp}.container.start.ms")
            e = r.number(task["container.end.ms"], f"{tp}.container.end.ms")
            if e <= s:
                raise r.fail(f"{tp}.container.end.ms", f"must be after container.start.ms ({s:g})")
            kind = str(task.get("container.type", "map")).lower()
            if kind not in kinds:
                raise r.fail(f"{tp}.container.type", f"expected map or reduce, got {_show(kind)}")
            kinds[kind].append((e - s) / 1000.0)
            host = str(task.get("container.host", ""))
            if host:
                parts = host.strip("/").split("/")
                hosts.setdefault(parts[-1], parts[0] if len(parts) > 1 else "default-rack")
        stages = [StageSpec("map", "map", MAP_PRIORITY, container, tuple(kinds["map"]))] if kinds["map"] else []
        if kinds["reduce"]:
            # MRAMSimulator requests reduces only once every map has finished
            stages.append(StageSpec("reduce", "reduce", REDUCE_PRIORITY, container, tuple(kinds["reduce"]),
                                    after=0 if stages else None, slowstart=1.0))
        jobs.append(JobSpec(jid, start, str(d.get("job.user", "default")), str(d.get("job.queue.name", "default")),
                            "MAPREDUCE", jid, (), None, tuple(stages)))
    if topology is not None:
        hosts = _sls_topology(topology)
    if not hosts:
        raise r.fail("container.host", "no hosts in the trace; pass a topology file (--sls-nodes)")
    nodes = tuple(NodeSpec(h, rack, node, node) for h, rack in sorted(hosts.items()))
    jobs.sort(key=lambda j: (j.submit_s, j.id))
    return Workload(Path(source).stem, f"Hadoop SLS trace {source}", source,
                    ClusterSpec(nodes, heartbeat_s), tuple(jobs), origin=source)


def _sls_topology(path: str) -> dict[str, str]:
    r = Reader(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise r.fail("", f"cannot read: {e.strerror}") from None
    hosts = {}
    for i, rack in enumerate(json_values(text, path)):
        rk = r.mapping(rack, f"rack[{i}]")
        for j, n in enumerate(rk.get("nodes") or []):
            n = r.mapping(n, f"rack[{i}].nodes[{j}]")
            hosts[r.string(n.get("node"), f"rack[{i}].nodes[{j}].node")] = str(rk.get("rack", "default-rack"))
    return hosts


def json_values(text: str, source: str) -> list[Any]:
    """Every JSON value in `text`: SLS traces are a stream of objects, not one array."""
    dec = json.JSONDecoder()
    out: list[Any] = []
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        try:
            value, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise WorkloadError(source, f"line {e.lineno} column {e.colno}", f"malformed JSON: {e.msg}") from None
        out.append(value)


# ---------------------------------------------------------------- loading
