"""Sharing degree β_i(t) and aggregate accumulated resources per user over a run ([H-MRF] Figs. 7-8).

A SharingProbe rides along any policy as an engine estimator and keeps its own QueueTracker
(pure long-term, Eq. 2-3), so every policy is measured by the same yardstick, memoryless ones
included. `python -m yarnctl.sim.sharing --workload hmrf-macro --policy drf,hmrf --plot F.png`
prints each policy's final and minimum β per user and draws β_i(t).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarnctl.engine import Engine
from yarnctl.fairness.accounting import QUEUE, QueueTracker
from yarnctl.fairness.shares import aggregate
from yarnctl.model import ClusterSnapshot
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster, SimRun
from yarnctl.sim.report import summarize
from yarnctl.sim.workload import Workload, load_workload


@dataclass
class SharingProbe:
    """An Estimator that samples β_i(t) and Σ_j ü_ij/r_j per queue (or user) every `every_s` seconds."""

    entity: str = QUEUE
    every_s: float = 30.0
    tracker: QueueTracker = field(init=False)
    samples: list[tuple[float, dict[str, tuple[float, float]]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tracker = QueueTracker(entity=self.entity)

    def observe(self, snap: ClusterSnapshot) -> None:
        """Integrate up to this snapshot; record a sample when one is due."""
        # cheap at a heartbeat that changed nothing: the tracker reads only a changed state (store version)
        self.tracker.advance(snap)
        if not self.samples or snap.now_s >= self.samples[-1][0] + self.every_s:
            self.samples.append((snap.now_s, self.values(snap.now_s)))

    def values(self, now: float) -> dict[str, tuple[float, float]]:
        """Per entity: (β_i, aggregate accumulated share-seconds) at `now`."""
        cap = self.tracker.capacity
        return {n: (beta, aggregate(used, cap)) for n, (beta, used) in self.tracker.measured(now).items()}

    def lowest(self, settle_s: float = 0.0) -> dict[str, float]:
        """Per entity, its least β over the samples from `settle_s` on (Fig. 8 leaves the start-up out)."""
        out: dict[str, float] = {}
        for t, values in self.samples:
            if t >= settle_s:
                for name, (beta, _) in values.items():
                    out[name] = min(beta, out.get(name, math.inf))
        return out

    def loss_fraction(self, settle_s: float = 0.0) -> float:
        """The share of the sampled time from `settle_s` on during which some entity's β was below 1 (a sharing loss)."""
        spans = [(t1 - t0, min(b for b, _ in v.values()) < 1.0) for (t0, v), (t1, _) in zip(self.samples, self.samples[1:])
                 if t0 >= settle_s and v]
        total = sum(dt for dt, _ in spans)
        return sum(dt for dt, loss in spans if loss) / total if total > 0 else 0.0


def run_with_probe(workload: Workload, policy: str, params: Mapping[str, Any] | None = None, *, entity: str = QUEUE,
                   max_time_s: float = math.inf) -> tuple[SimRun, SharingProbe]:
    """Simulate `policy` (with `params`) on `workload` with a SharingProbe; the probe's last sample is the run's end."""
    probe = SharingProbe(entity)
    # the probe learns from the heartbeats it is shown: it must see every one, whatever the policy
    sim = SimCluster(workload, Engine(make_policy(policy, params), [probe]), skip_idle=False, max_time_s=max_time_s)
    run = sim.run()
    probe.tracker.advance(sim.snapshot())
    probe.samples.append((run.end_s, probe.values(run.end_s)))
    return run, probe


def main(argv: list[str] | None = None) -> int:
    """Print final and minimum (after `--settle` s) β per user for each policy; optionally plot β_i(t)."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.sim.sharing", description=main.__doc__)
    p.add_argument("--workload", default="hmrf-macro")
    p.add_argument("--policy", default="drf,lt-drf,lt-af,hmrf", help="comma-separated policies")
    p.add_argument("--settle", type=float, default=300.0, help="ignore β before this time for the minimum")
    p.add_argument("--plot", type=Path, help="write β_i(t) panels to this PNG")
    args = p.parse_args(argv)
    w = load_workload(args.workload)
    series = []
    for policy in args.policy.split(","):
        run, probe = run_with_probe(w, policy)
        _, final = probe.samples[-1]
        low = probe.lowest(args.settle)
        cells = "  ".join(f"{u} β {b:.2f} (min {low.get(u, b):.2f})" for u, (b, _) in sorted(final.items()))
        print(f"{policy:7s} makespan {summarize(run).makespan_s:9,.0f} s  {cells}")
        series.append((policy, probe.samples))
    if args.plot:
        from yarnctl.sim import plots

        plots.sharing_degree(series, args.plot, f"{args.workload}: sharing degree per user (cf. [H-MRF] Fig. 8)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
