"""The YAML workload format of docs/workloads.md: every field validated, generators and distributions expanded."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from yarnctl.model import MAP_PRIORITY, REDUCE_PRIORITY, Queue, Resources
from yarnctl.sim import mr_am, spark_am
from yarnctl.sim.workload.distributions import distribution
from yarnctl.sim.workload.reader import Reader, show as _show
from yarnctl.sim.workload.queues import QueueSpec, TreeError, tree
from yarnctl.sim.workload.spark import spark_stages
from yarnctl.sim.workload.types import (
    DEFAULT_AM, FULL_USAGE, ClusterSpec, JobSpec, NodeSpec, StageSpec, Startup, Usage, Workload, normalize,
)

_JOB_FIELDS = {"id", "submit_s", "user", "queue", "type", "name", "tags", "am", "iterations",
               "maps", "reduces", "executors", "stages", "slowstart", "mapreduce", "spark"}
_STAGE_FIELDS = {"name", "tasks", "resource", "duration", "usage", "priority", "after", "slowstart", "shuffle_s",
                 "hosts"}
_DEFAULT_FIELDS = {"user", "queue", "am", "slowstart", "type", "iterations", "mapreduce", "spark"}



class Parser:
    """Turns one parsed workload document into a concrete Workload, seeded."""

    def __init__(self, source: str, seed: int) -> None:
        self.r = Reader(source)
        self.seed = seed
        self.nodes: tuple[NodeSpec, ...] = ()
        self.min_alloc = Resources(1024, 1)

    def check_fits(self, resource: Resources, path: str, what: str = "") -> None:
        """Fail unless `resource` (normalised as the RM would) fits on some node; `what` says where it came from."""
        need = normalize(resource, self.min_alloc)
        if not any(need.fits_in(n.capacity) for n in self.nodes):
            largest = max((n.capacity for n in self.nodes), key=lambda c: (c.memory_mb, c.vcores))
            rounded = f", {need} once rounded up to min_allocation" if need != resource else ""
            raise self.r.fail(path, f"{resource} ({what}) fits on no node (largest {largest}{rounded})" if what
                              else f"{resource} fits on no node (largest {largest}{rounded})")

    def workload(self, doc: Any, default_name: str) -> Workload:
        r = self.r
        top = r.mapping(doc, "")
        r.keys(top, "", {"name", "description", "source", "cluster", "defaults", "jobs", "generate"})
        if "cluster" not in top:
            raise r.fail("cluster", "missing")
        cluster = self.cluster(top["cluster"])
        self.nodes = cluster.nodes
        self.min_alloc = cluster.min_allocation
        defaults = dict(r.mapping(top.get("defaults") or {}, "defaults"))
        r.keys(defaults, "defaults", _DEFAULT_FIELDS)
        jobs: list[JobSpec] = []
        paths: list[str] = []
        raw_jobs = top.get("jobs") or []
        if not isinstance(raw_jobs, list):
            raise r.fail("jobs", f"expected a list, got {_show(raw_jobs)}")
        for i, raw in enumerate(raw_jobs):
            jobs.append(self.job(raw, f"jobs[{i}]", defaults, None, None))
            paths.append(f"jobs[{i}].id")
        raw_gen = top.get("generate") or []
        if not isinstance(raw_gen, list):
            raise r.fail("generate", f"expected a list, got {_show(raw_gen)}")
        for i, raw in enumerate(raw_gen):
            generated = self.generate(raw, f"generate[{i}]", defaults)
            jobs.extend(generated)
            paths.extend(f"generate[{i}] (job {j.id})" for j in generated)
        if not jobs:
            raise r.fail("jobs", "the workload has no jobs (give `jobs` or `generate`)")
        if cluster.queues:
            self.check_queues(jobs, paths, cluster.queues)
        seen: dict[str, str] = {}
        for j, p in zip(jobs, paths):
            if j.id in seen:
                raise r.fail(p, f"duplicate job id {j.id!r} (first at {seen[j.id]})")
            seen[j.id] = p
        jobs.sort(key=lambda j: (j.submit_s, j.id))
        return Workload(
            name=str(top.get("name") or default_name),
            description=str(top.get("description") or ""),
            source=str(top.get("source") or ""),
            cluster=cluster,
            jobs=tuple(jobs),
            seed=self.seed,
            origin=r.source,
        )

    def check_queues(self, jobs: list[JobSpec], paths: list[str], queues: tuple[Queue, ...]) -> None:
        """Every job names a RUNNING leaf of the tree, or the workload is refused as CapacityScheduler refuses."""
        by_name = {q.name: q for q in queues}
        for j, p in zip(jobs, paths):
            q = by_name.get(j.queue)
            why = ("is not in cluster.queues" if q is None else "is not a leaf queue" if not q.leaf
                   else "is STOPPED" if not q.running else None)
            if why:
                raise self.r.fail(p, f"job {j.id} names queue {j.queue!r}, which {why}")

    def cluster(self, raw: Any) -> ClusterSpec:
        r = self.r
        c = r.mapping(raw, "cluster")
        r.keys(c, "cluster", {"nodes", "racks", "node", "physical", "heartbeat_s", "heartbeat_phases",
                              "min_allocation", "groups", "startup", "queues"})
        heartbeat = r.number(c.get("heartbeat_s", 1.0), "cluster.heartbeat_s", strict=True)
        min_alloc = (r.resources(c["min_allocation"], "cluster.min_allocation")
                     if "min_allocation" in c else Resources(1024, 1))
        groups: list[tuple[int, Resources, Resources, str | None, str]] = []
        if "groups" in c:
            if "nodes" in c or "node" in c:
                raise r.fail("cluster.groups", "give either `groups` or `nodes` + `node`, not both")
            if not isinstance(c["groups"], list) or not c["groups"]:
                raise r.fail("cluster.groups", "expected a non-empty list")
            for i, g in enumerate(c["groups"]):
                p = f"cluster.groups[{i}]"
                g = r.mapping(g, p)
                r.keys(g, p, {"count", "node", "physical", "rack"})
                for k in ("count", "node"):
                    if k not in g:
                        raise r.fail(f"{p}.{k}", "missing")
                cap = r.resources(g["node"], f"{p}.node")
                phys = r.resources(g["physical"], f"{p}.physical") if "physical" in g else cap
                rack = r.string(g["rack"], f"{p}.rack") if "rack" in g else None
                groups.append((r.integer(g["count"], f"{p}.count"), cap, phys, rack, p))
        else:
            for k in ("nodes", "node"):
                if k not in c:
                    raise r.fail(f"cluster.{k}", "missing")
            cap = r.resources(c["node"], "cluster.node")
            phys = r.resources(c["physical"], "cluster.physical") if "physical" in c else cap
            groups.append((r.integer(c["nodes"], "cluster.nodes"), cap, phys, None, "cluster"))
        racks = r.integer(c.get("racks", 1), "cluster.racks")
        nodes: list[NodeSpec] = []
        for count, cap, phys, rack, _ in groups:
            for _ in range(count):
                i = len(nodes)
                nodes.append(NodeSpec(f"n{i + 1:04d}", rack or f"r{i % racks + 1:02d}", cap, phys))
        capacity = sum((n.capacity for n in nodes), Resources(0, 0))
        return ClusterSpec(tuple(nodes), heartbeat, min_alloc, self.startup(c.get("startup")),
                           self.queues(c.get("queues"), capacity, min_alloc), self.phases(c, len(nodes)))

    def phases(self, c: Mapping[str, Any], nodes: int) -> tuple[float, ...]:
        """`cluster.heartbeat_phases`: one fraction of the interval per node, 0 <= x < 1 (none: the even grid)."""
        if "heartbeat_phases" not in c:
            return ()
        raw, r = c["heartbeat_phases"], self.r
        if not isinstance(raw, list) or len(raw) != nodes:
            raise r.fail("cluster.heartbeat_phases", f"expected a list of {nodes} fractions (one per node), got {_show(raw)}")
        out = []
        for i, x in enumerate(raw):
            v = r.number(x, f"cluster.heartbeat_phases[{i}]")
            if v >= 1:
                raise r.fail(f"cluster.heartbeat_phases[{i}]", f"expected a fraction of the interval below 1, got {x}")
            out.append(v)
        return tuple(out)

    def queues(self, raw: Any, capacity: Resources, min_alloc: Resources) -> tuple[Queue, ...]:
        """`cluster.queues` as the tree CapacityScheduler would build from it, or a failure naming the entry."""
        if raw is None:
            return ()
        specs = queue_specs(self.r, raw)
        try:
            return tree(specs, capacity, min_alloc)
        except TreeError as e:
            raise self.r.fail(e.where, e.problem) from None

    def startup(self, raw: Any) -> Startup:
        if raw is None:
            return Startup()
        r = self.r
        s = r.mapping(raw, "cluster.startup")
        fields = ("am_s", "launch_s", "launch_per_concurrent_s", "launch_cpu_s", "launch_cores", "am_cpu_s",
                  "client_cpu_s")
        r.keys(s, "cluster.startup", {*fields, "launch_shared", "take_up"})
        shared, take_up = s.get("launch_shared", False), s.get("take_up", False)
        for key, flag in (("launch_shared", shared), ("take_up", take_up)):
            if not isinstance(flag, bool):
                raise r.fail(f"cluster.startup.{key}", f"expected true or false, got {flag!r}")
        values = {f: r.number(s.get(f, 0.0), f"cluster.startup.{f}") for f in fields}
        for f in ("launch_cpu_s", "am_cpu_s", "client_cpu_s"):
            if values[f] > 0 and values["launch_cores"] <= 0:
                raise r.fail("cluster.startup.launch_cores", f"{f} needs the cores its starts share (> 0)")
        if values["client_cpu_s"] > 0 and not shared:
            raise r.fail("cluster.startup.client_cpu_s",
                         "a job's client runs on the machine, not a node: it needs launch_shared: true")
        return Startup(**values, launch_shared=shared, take_up=take_up)

    def job(self, raw: Any, path: str, defaults: Mapping[str, Any], job_id: str | None,
            submit_s: float | None, extra: Mapping[str, Any] | None = None) -> JobSpec:
        r = self.r
        j = dict(r.mapping(raw, path))
        r.keys(j, path, _JOB_FIELDS)
        merged = {**defaults, **(extra or {}), **j}
        jid = job_id or r.string(merged.get("id"), f"{path}.id")
        rng = random.Random(f"{self.seed}:{jid}")
        submit = submit_s if submit_s is not None else r.number(merged.get("submit_s", 0.0), f"{path}.submit_s")
        submit = round(submit, 6)  # the simulator keeps time in microseconds
        jtype = str(merged.get("type", "mapreduce")).lower()
        if jtype not in ("mapreduce", "spark", "generic"):
            raise r.fail(f"{path}.type", f"expected mapreduce, spark or generic, got {_show(jtype)}")
        am_raw = merged.get("am", True)
        if am_raw is False or am_raw is None:
            am = None
        elif am_raw is True:
            am = DEFAULT_AM  # checked too: an AM no node takes stalled the run, exit 0, with a warning only
            self.check_fits(am, f"{path}.am", "the default AM; set am: {memory_mb: ..., vcores: ...}")
        else:
            am = r.resources(am_raw, f"{path}.am")
            self.check_fits(am, f"{path}.am")
        iterations = r.integer(merged.get("iterations", 1), f"{path}.iterations")
        props = {**r.mapping(defaults.get("mapreduce") or {}, "defaults.mapreduce"),
                 **r.mapping(j.get("mapreduce") or {}, f"{path}.mapreduce")}
        slowstart = r.number(merged.get("slowstart", props.pop(mr_am.SLOWSTART, 0.05)), f"{path}.slowstart")
        try:
            mapreduce = mr_am.config_of(props)
        except ValueError as e:
            raise r.fail(f"{path}.mapreduce", str(e)) from None
        if slowstart > 1:
            raise r.fail(f"{path}.slowstart", f"expected a fraction in [0, 1], got {slowstart}")
        raw_stages: list[tuple[str, Any, str]] = []  # (kind, raw, path)
        spark: spark_am.SparkConfig | None = None
        in_executors: tuple[StageSpec, ...] = ()
        if jtype == "mapreduce":
            for k in ("executors", "stages", "spark"):
                if k in j:
                    raise r.fail(f"{path}.{k}", "not a field of mapreduce jobs (use maps/reduces)")
            if "maps" not in j:
                raise r.fail(f"{path}.maps", "missing")
            raw_stages.append(("map", j["maps"], f"{path}.maps"))
            if j.get("reduces"):
                raw_stages.append(("reduce", j["reduces"], f"{path}.reduces"))
        elif jtype == "spark":
            for k in ("maps", "reduces"):
                if k in j:
                    raise r.fail(f"{path}.{k}", "not a field of spark jobs (use executors, and stages)")
            if "executors" not in j:
                raise r.fail(f"{path}.executors", "missing")
            if "stages" in j:
                in_executors, spark = spark_stages(self, j, path, defaults, iterations, rng, am is not None)
            elif "spark" in j:
                raise r.fail(f"{path}.spark", "Spark properties need `stages` (without them `executors` is N "
                             "containers held D seconds, with no Spark driver)")
            else:
                raw_stages.append(("executor", j["executors"], f"{path}.executors"))
        else:
            for k in ("maps", "reduces", "executors", "spark"):
                if k in j:
                    raise r.fail(f"{path}.{k}", "not a field of generic jobs (use stages)")
            st = j.get("stages")
            if not isinstance(st, list) or not st:
                raise r.fail(f"{path}.stages", f"expected a non-empty list, got {_show(st)}")
            raw_stages += [("task", s, f"{path}.stages[{i}]") for i, s in enumerate(st)]
        one = [self.stage(kind, raw_s, p, i, slowstart, rng, raw_stages)
               for i, (kind, raw_s, p) in enumerate(raw_stages)]
        by_priority: dict[int, Resources] = {}
        hosts_at: dict[int, tuple[str, ...]] = {}
        for s, (_, _, p) in zip(one, raw_stages):
            if by_priority.setdefault(s.priority, s.resource) != s.resource:
                raise r.fail(f"{p}.priority", f"priority {s.priority} is used by stages with different "
                             "resources; YARN keeps one request per priority")
            if hosts_at.setdefault(s.priority, s.hosts) != s.hosts:
                raise r.fail(f"{p}.hosts", f"priority {s.priority} is used by stages naming different hosts; "
                             "YARN keeps one request per priority")
        if am is not None and 0 in by_priority:
            raise r.fail(path, "priority 0 is the AM's; give the stages another priority")
        stages: list[StageSpec] = list(in_executors)
        for it in range(iterations if spark is None else 0):
            base = len(stages)
            for si, s in enumerate(one):
                if s.after is not None:
                    after: int | None = base + s.after
                else:
                    after = base - 1 if it > 0 and si == 0 else None
                name = s.name if iterations == 1 else f"{s.name}#{it + 1}"
                durations = s.durations if it == 0 else tuple(self.redraw(raw_stages[si], s, rng))
                stages.append(StageSpec(name, s.kind, s.priority, s.resource, durations, s.usage,
                                        after, s.slowstart if (s.after is not None or it == 0) else 1.0,
                                        s.shuffle_s if s.after is not None else 0.0, hosts=s.hosts))
        tags = merged.get("tags") or []
        if not isinstance(tags, list):
            raise r.fail(f"{path}.tags", f"expected a list of strings, got {_show(tags)}")
        return JobSpec(
            id=jid, submit_s=submit,
            user=r.string(merged.get("user", "user"), f"{path}.user"),
            queue=r.string(merged.get("queue", "default"), f"{path}.queue"),
            type={"mapreduce": "MAPREDUCE", "spark": "SPARK", "generic": "YARN"}[jtype],
            name=str(merged.get("name") or jid), tags=tuple(str(t) for t in tags), am=am,
            stages=tuple(stages), iterations=1 if spark is not None else iterations, mapreduce=mapreduce,
            spark=spark,
        )

    def redraw(self, raw_stage: tuple[str, Any, str], s: StageSpec, rng: random.Random) -> list[float]:
        _, raw_s, p = raw_stage
        return self.durations(raw_s["duration"], f"{p}.duration", s.tasks, rng)

    def stage(self, kind: str, raw: Any, path: str, index: int, job_slowstart: float,
              rng: random.Random, siblings: list[tuple[str, Any, str]]) -> StageSpec:
        r = self.r
        s = r.mapping(raw, path)
        r.keys(s, path, _STAGE_FIELDS)
        for k in ("tasks", "resource", "duration"):
            if k not in s:
                raise r.fail(f"{path}.{k}", "missing")
        tasks_raw = s["tasks"]
        if isinstance(tasks_raw, Mapping):
            tasks = max(1, round(distribution(r, tasks_raw, f"{path}.tasks")(rng)))
        else:
            tasks = r.integer(tasks_raw, f"{path}.tasks")
        resource = r.resources(s["resource"], f"{path}.resource")
        self.check_fits(resource, f"{path}.resource")
        durations = self.durations(s["duration"], f"{path}.duration", tasks, rng)
        usage = self.usage(s["usage"], f"{path}.usage") if "usage" in s else FULL_USAGE
        default_priority = REDUCE_PRIORITY if kind == "reduce" else MAP_PRIORITY
        priority = r.integer(s.get("priority", default_priority), f"{path}.priority", minimum=0)
        names = [str((x[1] or {}).get("name") or x[0]) if isinstance(x[1], Mapping) else x[0] for x in siblings]
        name = names[index]
        if "name" in s and name in names[:index]:  # `after` would bind the first of the two
            raise r.fail(f"{path}.name", f"duplicate stage name {name!r} (stage {names.index(name)} has it too)")
        if "after" in s:
            if s["after"] is None:
                after = None
            else:
                target = str(s["after"])
                if target not in names[:index]:
                    raise r.fail(f"{path}.after", f"no earlier stage named {target!r}; earlier: "
                                 f"{', '.join(names[:index]) or '(none)'}")
                if names[:index].count(target) > 1:  # unnamed stages go by their kind: name the one meant
                    raise r.fail(f"{path}.after", f"{names[:index].count(target)} earlier stages are named "
                                 f"{target!r}; give them names")
                after = names.index(target)
        else:
            after = index - 1 if index > 0 else None
        default_slow = job_slowstart if kind == "reduce" else 1.0
        slowstart = r.number(s.get("slowstart", default_slow), f"{path}.slowstart")
        if slowstart > 1:
            raise r.fail(f"{path}.slowstart", f"expected a fraction in [0, 1], got {slowstart}")
        shuffle = r.number(s.get("shuffle_s", 0.0), f"{path}.shuffle_s")
        if shuffle and after is None:
            raise r.fail(f"{path}.shuffle_s", "only a stage that follows another fetches its output")
        hosts = self.hosts(s["hosts"], f"{path}.hosts") if "hosts" in s else ()
        return StageSpec(name, kind, priority, resource, tuple(durations), usage, after, slowstart, shuffle,
                         hosts=hosts)

    def hosts(self, raw: Any, path: str) -> tuple[str, ...]:
        """A stage's `hosts`: node ids of the cluster, or `all` (the local cluster's NodeManagers share one host)."""
        r = self.r
        ids = [n.id for n in self.nodes]
        if raw == "all":
            return tuple(ids)
        if not isinstance(raw, list) or not raw or not all(isinstance(h, str) for h in raw):
            raise r.fail(path, f"expected `all` or a list of node ids, got {_show(raw)}")
        unknown = [h for h in raw if h not in ids]
        if unknown:
            raise r.fail(path, f"no node {unknown[0]!r} in the cluster (its nodes: {ids[0]} ... {ids[-1]})")
        return tuple(dict.fromkeys(raw))

    def durations(self, raw: Any, path: str, tasks: int, rng: random.Random) -> list[float]:
        r = self.r
        if isinstance(raw, list):
            if len(raw) != tasks:
                raise r.fail(path, f"has {len(raw)} values for {tasks} tasks")
            return [r.number(v, f"{path}[{i}]", strict=True) for i, v in enumerate(raw)]
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            return [r.number(raw, path, strict=True)] * tasks
        draw = distribution(r, raw, path)
        out = [draw(rng) for _ in range(tasks)]
        if any(d <= 0 for d in out):
            raise r.fail(path, "durations must be positive")
        return out

    def usage(self, raw: Any, path: str) -> Usage:
        r = self.r
        u = r.mapping(raw, path)
        if "profile" in u:
            r.keys(u, path, {"profile"})
            prof = u["profile"]
            if not isinstance(prof, list) or not prof:
                raise r.fail(f"{path}.profile", "expected a non-empty list of {at, cpu, memory}")
            steps = []
            for i, step in enumerate(prof):
                p = f"{path}.profile[{i}]"
                st = r.mapping(step, p)
                r.keys(st, p, {"at", "cpu", "memory"})
                at = r.number(st.get("at", 0.0), f"{p}.at")
                if at > 1:
                    raise r.fail(f"{p}.at", f"expected a fraction of the duration in [0, 1], got {at}")
                steps.append((at, r.number(st.get("cpu", 1.0), f"{p}.cpu"),
                              r.number(st.get("memory", 1.0), f"{p}.memory")))
            if [s[0] for s in steps] != sorted(s[0] for s in steps):
                raise r.fail(f"{path}.profile", "steps must be in increasing `at` order")
            if steps[0][0] != 0.0:
                steps.insert(0, (0.0, steps[0][1], steps[0][2]))
            return Usage(tuple(steps))
        r.keys(u, path, {"cpu", "memory"})
        return Usage(((0.0, r.number(u.get("cpu", 1.0), f"{path}.cpu"),
                       r.number(u.get("memory", 1.0), f"{path}.memory")),))

    def generate(self, raw: Any, path: str, defaults: Mapping[str, Any]) -> list[JobSpec]:
        r = self.r
        g = r.mapping(raw, path)
        r.keys(g, path, {"prefix", "count", "start_s", "arrival", "users", "user", "queue", "job", "mix"})
        prefix = r.string(g.get("prefix", f"g{path[9:-1]}-"), f"{path}.prefix")
        count = r.integer(g.get("count"), f"{path}.count")
        t = r.number(g.get("start_s", 0.0), f"{path}.start_s")
        rng = random.Random(f"{self.seed}:generate:{prefix}")
        gap = self.arrival(g.get("arrival", {"every_s": 0}), f"{path}.arrival")
        users = g.get("users")
        if users is not None:
            if not isinstance(users, list) or not users:
                raise r.fail(f"{path}.users", "expected a non-empty list of user names")
            users = [r.string(u, f"{path}.users[{i}]") for i, u in enumerate(users)]  # not str(None): "None"
        if ("job" in g) == ("mix" in g):
            raise r.fail(path, "give exactly one of `job` or `mix`")
        templates: list[tuple[float, Any, str]] = []
        if "job" in g:
            templates.append((1.0, g["job"], f"{path}.job"))
        else:
            mix = g["mix"]
            if not isinstance(mix, list) or not mix:
                raise r.fail(f"{path}.mix", "expected a non-empty list of {weight, job}")
            for i, m in enumerate(mix):
                p = f"{path}.mix[{i}]"
                m = r.mapping(m, p)
                r.keys(m, p, {"weight", "job"})
                if "job" not in m:
                    raise r.fail(f"{p}.job", "missing")
                templates.append((r.number(m.get("weight", 1.0), f"{p}.weight"), m["job"], f"{p}.job"))
            if sum(w for w, _, _ in templates) <= 0:
                raise r.fail(f"{path}.mix", "weights must not all be zero")
        width = max(5, len(str(count)))
        out = []
        for k in range(count):
            if k > 0:
                t = gap(rng, t)
            w, tmpl, p = templates[0] if len(templates) == 1 else rng.choices(
                templates, weights=[w for w, _, _ in templates])[0]
            extra: dict[str, Any] = {}
            if users is not None:
                extra["user"] = users[k % len(users)]
            elif "user" in g:
                extra["user"] = g["user"]
            if "queue" in g:
                extra["queue"] = g["queue"]
            tmpl_map = r.mapping(tmpl, p)
            if "id" in tmpl_map or "submit_s" in tmpl_map:
                raise r.fail(p, "a generator template may not set id or submit_s")
            out.append(self.job(tmpl_map, p, defaults, f"{prefix}{k + 1:0{width}d}", t, extra))
        return out

    def arrival(self, raw: Any, path: str) -> Callable[[random.Random, float], float]:
        r = self.r
        a = r.mapping(raw, path)
        if "every_s" in a:
            r.keys(a, path, {"every_s"})
            every = r.number(a["every_s"], f"{path}.every_s")
            return lambda rng, t: t + every
        if "rate_per_hour" in a:
            r.keys(a, path, {"rate_per_hour"})
            rates = a["rate_per_hour"]
            if not isinstance(rates, list) or len(rates) != 24:
                raise r.fail(f"{path}.rate_per_hour", "expected 24 hourly rates")
            per_s = [r.number(x, f"{path}.rate_per_hour[{i}]") / 3600.0 for i, x in enumerate(rates)]
            peak = max(per_s)
            if peak <= 0:
                raise r.fail(f"{path}.rate_per_hour", "rates must not all be zero")

            def next_arrival(rng: random.Random, t: float) -> float:
                while True:  # thinning (Lewis-Shedler) for a piecewise-constant Poisson rate
                    t += rng.expovariate(peak)
                    if rng.random() * peak <= per_s[int(t // 3600) % 24]:
                        return t
            return next_arrival
        draw = distribution(r, a, path)
        return lambda rng, t: t + draw(rng)


def queue_specs(r: Reader, raw: Any) -> list[QueueSpec]:
    """The entries of a `cluster.queues` list, each field checked (the tree itself is `queues.tree`'s to check)."""
    if not isinstance(raw, list) or not raw:
        raise r.fail("cluster.queues", f"expected a non-empty list of queues, got {_show(raw)}")
    specs = []
    for i, q in enumerate(raw):
        p = f"cluster.queues[{i}]"
        q = r.mapping(q, p)
        r.keys(q, p, {"path", "capacity", "max_capacity", "state", "user_limit_percent", "user_limit_factor"})
        for k in ("path", "capacity"):
            if k not in q:
                raise r.fail(f"{p}.{k}", "missing")
        state = r.string(q.get("state", "RUNNING"), f"{p}.state").upper()
        if state not in ("RUNNING", "STOPPED"):
            raise r.fail(f"{p}.state", f"expected RUNNING or STOPPED, got {_show(state)}")
        specs.append(QueueSpec(r.string(q["path"], f"{p}.path"), r.number(q["capacity"], f"{p}.capacity"),
                               r.number(q.get("max_capacity", 100.0), f"{p}.max_capacity"), state == "RUNNING",
                               r.integer(q.get("user_limit_percent", 100), f"{p}.user_limit_percent"),
                               r.number(q.get("user_limit_factor", 1.0), f"{p}.user_limit_factor")))
    return specs
