"""Workload variants named after a `+`: `feedback-day+efr` is feedback-day as the EFR scenario runs it.

- efr ("Extreme Fit Reservation", [FEEDBACK] Sec. V-B): every task requests exactly its peak use
  (memory in MB, vcores rounded up, at least 1; its usage profile rescaled so that what it uses is
  unchanged), on the Sec. V-B cluster: nodes of 32 GB / 64 cores with 28 GB / 58 cores allowed, so
  memory is the constraint. The minimum allocation becomes 1 MB / 1 vcore so the fit stays exact.
- jitter: the workload as one seed of many: every task's duration times a log-normal factor of mean 1
  and coefficient of variation 10%, every job's submission later by up to 2 s (uniform), drawn from
  the seed. For workloads whose durations are fixed (the DRESS ones), so that seeds differ and a
  mean over seeds carries an interval; the submission shift also moves arrivals against the
  control loop's 5 s ticks, whose phase a live cluster does not fix (docs/reproduction.md, DRESS).
  Jobs submitted less than 2 s apart may swap places.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace

from yarnctl.model import Resources
from yarnctl.sim.workload.types import NodeSpec, StageSpec, Usage, Workload

EFR_NODE = Resources(28 * 1024, 58)  # Sec. V-B: "allow the utilization of memory to go up to 28 GBs, and of CPU to 58 cores"
EFR_PHYSICAL = Resources(32 * 1024, 64)  # Sec. V-B: "Each node has 32 GBs of memory and 64 cores"
EFR_MIN_ALLOCATION = Resources(1, 1)


def extreme_fit(w: Workload) -> Workload:
    """The EFR variant of `w`: requests = peak use, on Sec. V-B's memory-bound nodes (see the module docstring)."""
    nodes = tuple(NodeSpec(n.id, n.rack, EFR_NODE, EFR_PHYSICAL) for n in w.cluster.nodes)
    cluster = replace(w.cluster, nodes=nodes, min_allocation=EFR_MIN_ALLOCATION)
    jobs = tuple(replace(j, stages=tuple(_fit(s) for s in j.stages)) for j in w.jobs)
    return replace(w, name=f"{w.name}-efr", cluster=cluster, jobs=jobs)


def _fit(s: StageSpec) -> StageSpec:
    peak_cpu = max(cpu for _, cpu, _ in s.usage.steps)
    peak_mem = max(mem for _, _, mem in s.usage.steps)
    mb = max(1, math.ceil(peak_mem * s.resource.memory_mb - 1e-9))
    vc = max(1, math.ceil(peak_cpu * s.resource.vcores - 1e-9))
    # the same absolute use, as fractions of the new request
    kc, km = s.resource.vcores / vc, s.resource.memory_mb / mb
    steps = tuple((at, cpu * kc, mem * km) for at, cpu, mem in s.usage.steps)
    return replace(s, resource=Resources(mb, vc), usage=Usage(steps))


JITTER_CV = 0.10  # spread of a task's duration around the workload's value
JITTER_SUBMIT_S = 2.0  # below the DRESS workloads' 5 s gaps, so their jobs keep their order (closer ones may swap)


def jitter(w: Workload) -> Workload:
    """`w` with seeded log-normal task durations (mean as given, CV 10%) and submissions up to 2 s later."""
    sigma = math.sqrt(math.log1p(JITTER_CV**2))
    jobs = []
    for j in w.jobs:
        rng = random.Random(f"{w.seed}:jitter:{j.id}")  # per job, so adding a job does not redraw the others
        stages = tuple(replace(s, durations=tuple(round(d * rng.lognormvariate(-sigma**2 / 2, sigma), 6)
                                                  for d in s.durations)) for s in j.stages)
        jobs.append(replace(j, submit_s=round(j.submit_s + rng.uniform(0.0, JITTER_SUBMIT_S), 6), stages=stages))
    return replace(w, name=f"{w.name}-jitter", jobs=tuple(jobs))


VARIANTS: dict[str, Callable[[Workload], Workload]] = {"efr": extreme_fit, "jitter": jitter}
