"""Simulator throughput benchmark: `python -m yarnctl.sim.bench` (or `make bench`).

Measures (not asserts) two goals: simulated tasks per second for `fifo` on a 100-node,
100,000-task synthetic workload, and how much faster than real time a one-day trace
(`feedback-day`) replays. Each case runs `--repeat` times and the median is reported, since the
build machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import sys
import time
from typing import Any

import yaml

from yarnctl.engine import Engine
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster
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


def _time_run(workload: Workload, policy: str) -> dict[str, Any]:
    sim = SimCluster(workload, Engine(make_policy(policy)))
    start = time.perf_counter()
    run = sim.run()
    wall = time.perf_counter() - start
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


def main(argv: list[str] | None = None) -> int:
    """Command line: print a JSON report (progress lines go to stderr)."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.sim.bench", description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="runs per case; the median is reported (default 3)")
    p.add_argument("--policy", default="fifo", help="comma-separated policies to time (default fifo)")
    args = p.parse_args(argv)
    report = bench(args.repeat, tuple(x for x in args.policy.split(",") if x))
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
