"""OPERA's Table III in the simulator: a run's finished tasks replayed online through the task classifier.

    python -m yarnctl.sim.opera_classifier --workload opera-mr6 [--relief preserve] [--seed 0]

Runs `opera` on the workload, takes every task container that ran to completion (the simulator's
own start and end times, not the policy's tick estimates) with the features the policy saw when
it granted it, and replays them in time order: each task is classified when it starts with what
was learned from tasks that ended before, and learned when it ends (Sec. III-B). It prints the
matrix as Table III, then the policy's own online matrix (prediction at grant time against the
duration it measured on its 5 s ticks, its relief kills excluded).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from yarnctl.engine import Engine
from yarnctl.errors import script_exit
from yarnctl.estimation.classifier import Confusion, FinishedTask, replay
from yarnctl.policies.opera import Opera, OperaConfig
from yarnctl.sim.cluster import SimCluster, SimRun
from yarnctl.sim.workload import load_workload


def finished_tasks(run: SimRun, policy: Opera) -> list[FinishedTask]:
    """Containers that ran to completion, with the simulator's times and the features `policy` gave them."""
    features = {t.id: t.features for t in policy.finished}
    return [FinishedTask(r.id, features[r.id], r.start_s, r.end_s)
            for r in sorted(run.containers, key=lambda r: (r.start_s, r.id))
            if r.outcome == "done" and r.id in features]


def table3(workload: str, seed: int = 0, config: OperaConfig = OperaConfig()) -> tuple[Confusion, Confusion, int]:
    """The replayed matrix, the policy's online matrix, and how many completed containers the policy never saw."""
    policy = Opera(config)
    run = SimCluster(load_workload(workload, seed), Engine(policy)).run()
    tasks = finished_tasks(run, policy)
    unseen = sum(r.outcome == "done" for r in run.containers) - len(tasks)
    return replay(tasks, config.threshold_s), policy.confusion, unseen


def main(argv: Sequence[str] | None = None) -> int:
    """Print Table III for a workload."""
    ap = argparse.ArgumentParser(prog="python -m yarnctl.sim.opera_classifier", description=__doc__.split("\n")[0])
    ap.add_argument("--workload", default="opera-mr6")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--relief", default=OperaConfig().relief)
    ap.add_argument("--reservation", default=OperaConfig().reservation)
    args = ap.parse_args(argv)
    replayed, online, unseen = table3(args.workload, args.seed,
                                      OperaConfig(relief=args.relief, reservation=args.reservation))
    print(f"{args.workload}, seed {args.seed}, opera relief={args.relief} reservation={args.reservation}")
    print("replayed online over the run's completed containers (simulator times):")
    print(replayed.table())
    print(f"({unseen} completed containers ended before the policy saw them and are not counted)")
    print("the policy's own online predictions (at grant; durations measured on its ticks):")
    print(online.table())
    return 0


if __name__ == "__main__":
    raise SystemExit(script_exit(main))
