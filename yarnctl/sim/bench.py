"""Simulator throughput benchmark: `python -m yarnctl.sim.bench` (or `make bench`).

Measures (not asserts) two goals: simulated tasks per second for `fifo` on a 100-node,
100,000-task synthetic workload, and how much faster than real time a one-day trace
(`feedback-day`) replays. Each case runs `--repeat` times and the median is reported, since the
build machines are shared and noisy.

`--backlog 50,500` measures how throughput holds as the backlog grows: that many synthetic jobs
submitted at once (10x more jobs in the system on average at the second level), each policy's
tasks per second at each level (the median of `--repeat` runs: the 50-job runs last under a
second, so one run is at the mercy of a hiccup), with a plot (`--plot PNG`). The slowdown splits
into two factors it also reports: the wall clock per decision (what a heartbeat costs the
policy and the simulator) and the decisions per task (what the workload asks for: a full
cluster refills one freed container per heartbeat, an empty one several).

`--policy-cost` measures instead what one heartbeat's decision costs each policy on a busy
cluster with 200 pending (app, priority) asks (goal for `haste`: under 1 ms median), on a
node with some room and on an empty node (where HaSTE runs its ITA knapsack, timed cold and with
its result cached), and Alg. 1 alone at HaSTE's work bound.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from yarnctl import jsonout
from yarnctl.engine import Engine, Validation
from yarnctl.model import App, ClusterSnapshot, Container, Node, NodeId, Ask, Resources
from yarnctl.state import snapshot_of
from yarnctl.policies import REGISTRY, ita, make_policy
from yarnctl.policies.ffd_dp import FfdDpConfig
from yarnctl.policies.haste import Haste, HasteConfig
from yarnctl.policies.ita import grid_work, initial_assignment
from yarnctl.policies.urgency import weighted_size
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.records import SimRun
from yarnctl.sim.workload import Workload, load_workload, parse_workload

SYNTHETIC = {
    "name": "bench-100x100k",
    "description": "100 nodes of 64 GB / 32 vcores; 1,000 MapReduce jobs of 90 maps and 10 reduces.",
    "cluster": {"nodes": 100, "node": {"memory_mb": 65536, "vcores": 32}},
    "defaults": {"am": {"memory_mb": 1024, "vcores": 1}},
    "generate": [{
        "prefix": "j",
        "count": 1000,
        "arrival": {"dist": "exponential", "mean": 2},  # keeps the cluster saturated with a backlog
        "users": ["alice", "bob", "carol", "dave"],
        "job": {
            "type": "mapreduce",
            "maps": {"tasks": 90, "resource": {"memory_mb": 2048, "vcores": 1},
                     "duration": {"dist": "exponential", "mean": 30}},
            "reduces": {"tasks": 10, "resource": {"memory_mb": 4096, "vcores": 1},
                        "duration": {"dist": "uniform", "low": 20, "high": 60}},
        },
    }],
}


class _TimedEngine(Engine):
    """An Engine that adds up the wall clock its decisions take (the policy's, and their validation)."""

    decide_s = 0.0

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Validation:
        """`Engine.decide`, timed."""
        start = time.perf_counter()
        result = super().decide(snap, node_id)
        self.decide_s += time.perf_counter() - start
        return result


def _timed(workload: Workload, policy: str) -> tuple[SimRun, float]:
    """One simulation of `workload` under `policy`, with its wall-clock seconds."""
    run, wall, _ = _timed_decisions(workload, policy, Engine(make_policy(policy)))
    return run, wall


def _timed_decisions(workload: Workload, policy: str, engine: Engine) -> tuple[SimRun, float, float]:
    """One simulation under `engine`, with its wall-clock seconds and (for a _TimedEngine) those in decisions."""
    sim = SimCluster(workload, engine)
    start = time.perf_counter()
    run = sim.run()
    return run, time.perf_counter() - start, getattr(engine, "decide_s", 0.0)


def _time_run(workload: Workload, policy: str) -> dict[str, Any]:
    run, wall = _timed(workload, policy)
    return {"wall_s": wall, "sim_s": run.end_s, "tasks": run.stats["tasks"],
            "decisions": run.stats["decisions"], "unfinished": sum(j.finish_s is None for j in run.jobs)}


def bench(repeat: int = 3, policies: tuple[str, ...] = ("fifo",)) -> dict[str, Any]:
    """Run both cases and return the measurements."""
    synthetic = parse_workload(yaml.safe_dump(SYNTHETIC), "bench-100x100k", seed=0)
    day = load_workload("feedback-day")
    out: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
                    "system": platform.platform()},
        "cases": [],
    }
    for name, w in (("synthetic 100 nodes x 100k tasks", synthetic), ("feedback-day (one-day trace)", day)):
        for policy in policies:
            runs = [_time_run(w, policy) for _ in range(repeat)]
            wall = statistics.median(r["wall_s"] for r in runs)
            r0 = runs[0]
            out["cases"].append({
                "case": name, "policy": policy, "nodes": len(w.cluster.nodes), "tasks": r0["tasks"],
                "wall_s_median": round(wall, 3), "wall_s_all": [round(r["wall_s"], 3) for r in runs],
                "tasks_per_s": round(r0["tasks"] / wall), "simulated_s": round(r0["sim_s"], 1),
                "speedup_vs_real_time": round(r0["sim_s"] / wall), "decisions": r0["decisions"],
                "unfinished": r0["unfinished"],
            })
            print(f"{name:34s} {policy:8s} {r0['tasks']:>7,} tasks  wall {wall:6.2f} s  "
                  f"{r0['tasks'] / wall:>9,.0f} tasks/s  {r0['sim_s'] / wall:>8,.0f}x real time",
                  file=sys.stderr)
    out["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def backlog_workload(jobs: int) -> Workload:
    """The synthetic case's jobs, `jobs` of them submitted within the first second: a backlog that drains."""
    spec: dict[str, Any] = copy.deepcopy(SYNTHETIC)
    spec["name"] = f"bench-backlog-{jobs}"
    spec["generate"][0].update(count=jobs, arrival={"dist": "exponential", "mean": 1.0 / jobs})
    return parse_workload(yaml.safe_dump(spec), spec["name"], seed=0)


def backlog(levels: tuple[int, ...], policies: tuple[str, ...], repeat: int = 1) -> dict[str, Any]:
    """Each policy's tasks per second at each backlog level (median of `repeat` runs), with the jobs in the system."""
    out: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
                    "system": platform.platform(), "cpus": os.cpu_count()},
        "levels": list(levels), "cases": [],
    }
    workloads = {n: backlog_workload(n) for n in levels}
    for policy in policies:
        for n, w in workloads.items():
            walls, deciding = [], []
            for _ in range(repeat):  # the same simulation each time: only the wall clock varies
                run, wall, decide_s = _timed_decisions(w, policy, _TimedEngine(make_policy(policy)))
                walls.append(wall)
                deciding.append(decide_s)
            wall, decide_s = statistics.median(walls), statistics.median(deciding)
            # time-average of the jobs submitted and not finished: the sum of their sojourns over the span
            in_system = sum((j.finish_s if j.finish_s is not None else run.end_s) - j.submit_s
                            for j in run.jobs) / run.end_s if run.end_s else 0.0
            tasks, decisions = run.stats["tasks"], run.stats["decisions"]
            # the whole run's wall clock per decision (AM and task events included), and the engine's part of it
            per_decision = wall / decisions * 1e6 if decisions else 0.0
            in_decide = decide_s / decisions * 1e6 if decisions else 0.0
            out["cases"].append({"policy": policy, "jobs": n, "tasks": tasks, "wall_s": round(wall, 3),
                                 "walls_s": [round(x, 3) for x in walls],
                                 "tasks_per_s": round(tasks / wall), "mean_jobs_in_system": round(in_system, 1),
                                 "decisions": decisions, "launches": run.stats["assigned"],
                                 "us_per_decision": round(per_decision, 1), "decide_us": round(in_decide, 1)})
            print(f"{policy:8s} {n:>5,} jobs at once  {in_system:7.1f} in the system on average  "
                  f"{tasks:>7,} tasks  wall {wall:6.2f} s  {tasks / wall:>9,.0f} tasks/s  "
                  f"{decisions:>7,} decisions, {per_decision:5.0f} µs each ({in_decide:.0f} deciding)"
                  + (f"  (runs {min(walls):.2f}-{max(walls):.2f} s)" if repeat > 1 else ""), file=sys.stderr)
    for policy in policies:
        rows = [c for c in out["cases"] if c["policy"] == policy]
        rates = [c["tasks_per_s"] for c in rows]
        out.setdefault("slowdown", {})[policy] = round(rates[0] / rates[-1], 2) if rates[-1] else None
        # slowdown = decision_cost_growth x decisions_per_task_growth: the policy's cost against the workload's
        for name, field in (("decision_cost_growth", "us_per_decision"), ("decide_cost_growth", "decide_us")):
            cost = [c[field] for c in rows]
            out.setdefault(name, {})[policy] = round(cost[-1] / cost[0], 2) if cost[0] else None
        per_task = [c["decisions"] / c["tasks"] if c["tasks"] else 0.0 for c in rows]
        growth = round(per_task[-1] / per_task[0], 2) if per_task[0] else None
        out.setdefault("decisions_per_task_growth", {})[policy] = growth
    return out


def cost_snapshot(asks: int = 200, seed: int = 0) -> ClusterSnapshot:
    """A busy cluster of 50 <32 GB, 16 vcores> nodes where n000 has <6 GB, 5 vcores> free and n049 is empty.

    Each app has a map and a reduce request (`asks` in all) and runs its AM, some maps and reduces.
    """
    rng = random.Random(seed)
    sizes = [Resources(m * 1024, v) for m in (1, 2, 3, 4) for v in (1, 2, 3, 4)]
    capacity = Resources(32 * 1024, 16)
    room = {f"n{i:03d}": capacity for i in range(50)}  # what running containers may take on each node
    room["n000"] = capacity - Resources(6 * 1024, 5)
    room["n049"] = Resources()
    apps: dict[str, App] = {}
    rows: dict[str, tuple[Ask, ...]] = {}
    containers: dict[str, Container] = {}
    for i in range(asks // 2):
        app = f"app{i:04d}"
        apps[app] = App(app, submit_s=float(i))
        map_size, reduce_size = rng.choice(sizes), rng.choice(sizes)
        rows[app] = (Ask(app, 20, map_size, rng.randint(1, 100)), Ask(app, 10, reduce_size, rng.randint(1, 10)))
        for priority, size, n in ((0, Resources(2048, 1), 1), (20, map_size, rng.randint(0, 6)),
                                  (10, reduce_size, rng.randint(0, 2))):
            for _ in range(n):
                fits = [nid for nid in room if size.fits_in(room[nid])]
                if not fits:
                    break
                node = rng.choice(fits)
                cid = f"c{len(containers):05d}"
                containers[cid] = Container(cid, app, node, priority, size, 0.0, is_am=priority == 0)
                room[node] = room[node] - size
    nodes = [Node(nid, "r1", capacity) for nid in room]
    return snapshot_of(0.0, nodes, apps.values(), [r for rs in rows.values() for r in rs], containers.values())


def _median_ms(call: Callable[[], object], repeat: int, before: Callable[[], None] | None = None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def ita_at_bound(repeat: int = 51) -> dict[str, Any]:
    """Alg. 1 alone, cold, on a grid whose cells x sizes is just under HaSTE's default `ita_max_work`.

    A <64 GB, 32 vcores> node in steps of <1 GB, 1 vcore> (65 x 33 cells) and 9 task sizes.
    """
    unit, residual = Resources(1024, 1), Resources(64 * 1024, 32)
    tasks = [(Resources(m * 1024, v), 1000) for m in (1, 3, 5) for v in (1, 2, 4)]
    value = partial(weighted_size, w=FfdDpConfig())
    work = grid_work(len(tasks), residual, unit)
    median_ms = _median_ms(lambda: initial_assignment(tasks, residual, unit, value), repeat, ita.cache_clear)
    print(f"Alg. 1 alone at {work:,} grid cells x sizes (bound {HasteConfig().ita_max_work:,}): "
          f"median {median_ms:7.3f} ms", file=sys.stderr)
    return {"work": work, "bound": HasteConfig().ita_max_work, "median_ms": round(median_ms, 3)}


def policy_cost(policies: tuple[str, ...], asks: int = 200, repeat: int = 301) -> dict[str, Any]:
    """The median time each policy takes to decide one heartbeat of `cost_snapshot`.

    ITA's results are cached (ita.py), and this loop asks the same question again and again, so the
    empty node is timed cold (cache emptied before each call: the first empty node of a batch) and,
    for HaSTE, warm too (the identical empty nodes that follow it).
    """
    snap = cost_snapshot(asks)
    out: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "system": platform.platform(),
                    "cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count()},
        "asks": sum(len(r) for r in snap.asks.values()),
        "containers": len(snap.containers), "nodes": len(snap.nodes), "cases": [],
    }
    for policy in policies:
        p = make_policy(policy)
        cases = [("n000", "node with room", True), ("n049", "empty node", True)]
        if isinstance(p, Haste):
            cases.append(("n049", "empty, ITA cached", False))
        for node, case, cold in cases:
            decide = make_policy(policy).decide
            placed = decide(snap, node).containers()  # warms up any state the policy keeps
            median_ms = _median_ms(partial(decide, snap, node), repeat, ita.cache_clear if cold else None)
            out["cases"].append({"policy": policy, "case": case, "cold": cold, "containers_placed": placed,
                                 "median_ms": round(median_ms, 3)})
            print(f"{policy:8s} {case:17s} {placed:3d} containers  median {median_ms:7.3f} ms", file=sys.stderr)
    out["ita_at_bound"] = ita_at_bound()
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: print a JSON report (progress lines go to stderr)."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.sim.bench", description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="runs per case; the median is reported (default 3)")
    p.add_argument("--policy", default=None,
                   help="comma-separated policies to time, or `all` for every built-in one "
                        "(default fifo; with --policy-cost haste,haste-a,ffd-dp,fifo)")
    p.add_argument("--policy-cost", action="store_true",
                   help="time one heartbeat's decision per policy instead of whole simulations")
    p.add_argument("--backlog", metavar="N,M,...", default=None,
                   help="time each policy with N, then M... synthetic jobs submitted at once instead (e.g. 50,500)")
    p.add_argument("--plot", metavar="PNG", type=Path, default=None,
                   help="with --backlog: draw tasks per second against the jobs in the system into PNG")
    args = p.parse_args(argv)
    levels: tuple[int, ...] = ()
    if args.backlog is not None:
        try:
            levels = tuple(int(x) for x in args.backlog.split(","))
        except ValueError:
            p.error(f"--backlog: expected job counts like 50,500, got {args.backlog!r}")
        if len(levels) < 2 or min(levels) < 1:
            p.error(f"--backlog: expected at least two job counts >= 1, got {args.backlog!r}")
        if args.policy_cost:
            p.error("--backlog and --policy-cost measure different things: choose one")
    elif args.plot is not None:
        p.error("--plot draws the --backlog measurement: give --backlog too")
    default = "haste,haste-a,ffd-dp,fifo" if args.policy_cost else "fifo"
    names = [x for x in (args.policy or default).split(",") if x]
    policies = tuple(sorted(REGISTRY)) if names == ["all"] else tuple(names)
    unknown = [x for x in policies if x not in REGISTRY]
    if unknown:
        p.error(f"--policy: no policy {unknown[0]!r}; built-ins: all, {', '.join(sorted(REGISTRY))}")
    if args.repeat < 1:
        p.error(f"--repeat: must be at least 1, got {args.repeat}")
    if levels:
        report = backlog(levels, policies, args.repeat)
        if args.plot is not None:
            from yarnctl.sim.plots import backlog_throughput  # matplotlib, only when a plot is asked for

            report["plot"] = str(backlog_throughput(report, args.plot))
    else:
        report = policy_cost(policies) if args.policy_cost else bench(args.repeat, policies)
    jsonout.dump(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
