"""Run several policies on one workload, the same way every time: the simulator's front door."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from yarnctl.engine import Engine
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import ProgressFn, SimCluster, SimRun
from yarnctl.sim.report import PolicyResult, summarize
from yarnctl.sim.workload import Workload


def simulate(
    workload: Workload,
    policies: Sequence[str],
    params: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    max_time_s: float = math.inf,
    progress: Callable[[str], ProgressFn | None] | None = None,
    max_am_share: float | None = None,
    explain: frozenset[str] = frozenset(),
    order_seed: int | None = None,
) -> list[tuple[PolicyResult, SimRun]]:
    """Simulate `workload` under each policy (fresh policy state per run; `max_am_share` overrides theirs).

    `explain` names jobs whose waiting is explained at every decided heartbeat (SimRun.waits); `order_seed`
    draws the order of simultaneous events (`Kernel`).
    """
    # build every policy first, so a bad parameter fails before any time is spent simulating
    built = [make_policy(name, (params or {}).get(name)) for name in policies]
    out = []
    for policy in built:
        cb = progress(policy.name) if progress else None
        run = SimCluster(workload, Engine(policy, max_am_share=max_am_share), max_time_s=max_time_s, progress=cb,
                         explain=explain, order_seed=order_seed).run()
        out.append((summarize(run), run))
    return out
