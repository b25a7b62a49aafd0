"""Queue shares under contention: each leaf queue's part of the cluster while every leaf has demand left.

A real run is sampled once a second from the ResourceManager: what each leaf holds from
`/ws/v1/cluster/scheduler` (`resourcesUsed`), what it still asks from its QueueMetrics bean on `/jmx`
(`PendingMB`: the ANY asks of its applications, AMs included). The simulator samples its store the same
way (`SimCluster(sample_queues_s=...)`). The busy period is the samples in which every leaf that has
jobs asks for more than it holds; a queue's share is its time-weighted mean allocated memory over that
period, as a fraction of the cluster. CapacityScheduler promises each leaf its absolute capacity there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yarnctl.errors import RMError
from yarnctl.rm import QueueInfo, ResourceManager
from yarnctl.sim.records import QueueSample

if TYPE_CHECKING:
    from yarnctl.bench.spec import BenchSpec
    from yarnctl.sim.workload import Startup

Sample = QueueSample  # (seconds, leaf queue -> (allocated MB, pending MB)), the simulator's and a real run's
QUEUE_METRICS = "Hadoop:service=ResourceManager,name=QueueMetrics,*"


@dataclass(frozen=True, slots=True)
class Shares:
    """Each queue's mean share of the cluster's memory over the busy period, and how long that period was."""

    busy_s: float
    samples: int
    shares: Mapping[str, float]  # queue -> allocated MB / cluster MB, time-weighted over the busy period


def busy_shares(samples: Sequence[Sample], capacity_mb: int, queues: Sequence[str]) -> Shares:
    """The shares of `queues` over the samples in which each of them has pending memory (the busy period)."""
    weights = dict.fromkeys(queues, 0.0)
    busy_s, n = 0.0, 0
    ordered = sorted(samples, key=lambda s: s[0])
    gaps = [b[0] - a[0] for a, b in zip(ordered, ordered[1:])]
    step = sorted(gaps)[len(gaps) // 2] if gaps else 0.0
    for i, (_, row) in enumerate(ordered):
        if not all(row.get(q, (0, 0))[1] > 0 for q in queues):
            continue
        # each sample stands for the time to the next one, at most two usual steps (a missed poll)
        dt = min(gaps[i], 2 * step) if i < len(gaps) else step
        busy_s += dt
        n += 1
        for q in queues:
            weights[q] += row[q][0] * dt
    shares = {q: w / busy_s / capacity_mb for q, w in weights.items()} if busy_s > 0 and capacity_mb > 0 else {}
    return Shares(busy_s, n, shares)


def leaves(root: QueueInfo) -> list[QueueInfo]:
    """The leaf queues under `root`, depth first."""
    return [root] if not root.children else [leaf for c in root.children for leaf in leaves(c)]


def sample_rm(rm: ResourceManager) -> dict[str, tuple[int, int]]:
    """Each leaf queue's allocated MB (the scheduler page) and pending MB (its QueueMetrics bean) now."""
    info = rm.scheduler()
    if info.root is None:
        raise RMError(f"the RM's scheduler ({info.type}) has no queue tree to sample")
    used = {q.name: q.used.memory_mb if q.used else 0 for q in leaves(info.root)}
    pending: dict[str, int] = {}
    for bean in rm.jmx(QUEUE_METRICS):
        keys = dict(part.partition("=")[::2] for part in bean.name.split(":", 1)[-1].split(","))
        if "user" in keys:
            continue  # a user's row inside a queue
        depth = [k for k in keys if k.startswith("q") and k[1:].isdigit()]
        name = keys[max(depth, key=lambda k: int(k[1:]))] if depth else ""
        if name in used:
            pending[name] = int(bean.attributes.get("PendingMB", 0))
    return {q: (mb, pending.get(q, 0)) for q, mb in used.items()}


class RmSampler:
    """Samples the RM's leaf queues every `interval_s` on a thread, from `start()` until `stop()`."""

    def __init__(self, rm: ResourceManager, interval_s: float = 1.0) -> None:
        self.rm = rm
        self.interval_s = interval_s
        self.samples: list[tuple[int, dict[str, tuple[int, int]]]] = []  # (epoch ms, row)
        self.errors = 0
        self.last_error = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="queue-sampler", daemon=True)

    def start(self) -> RmSampler:
        """Start sampling."""
        self._thread.start()
        return self

    def stop(self) -> list[tuple[int, dict[str, tuple[int, int]]]]:
        """Stop sampling and return the samples taken."""
        self._stop.set()
        self._thread.join()
        return self.samples

    def _loop(self) -> None:
        while not self._stop.is_set():
            at = time.time()
            try:
                self.samples.append((int(at * 1000), sample_rm(self.rm)))
            except Exception as e:  # RMError is the expected kind; a thread that died would end the sampling unseen
                # a missed poll: busy_shares weights the sample before it by at most two steps
                self.errors += 1
                self.last_error = f"{type(e).__name__}: {e}"
            self._stop.wait(max(0.0, self.interval_s - (time.time() - at)))


def from_json(raw: Any) -> list[Sample]:
    """Samples as bench.json keeps them ([epoch ms, {queue: [allocated, pending]}]) in seconds from the first."""
    rows = [(float(t) / 1000.0, {str(q): (int(v[0]), int(v[1])) for q, v in row.items()}) for t, row in raw]
    t0 = min((t for t, _ in rows), default=0.0)
    return [(t - t0, row) for t, row in rows]


@dataclass(frozen=True, slots=True)
class ShareRow:
    """One queue of one run: its configured share, and its busy-period share measured and simulated."""

    label: str
    queue: str
    configured: float  # absolute capacity, a fraction of the cluster
    real: float | None
    simulated: float | None
    real_busy_s: float
    simulated_busy_s: float

    def to_json(self) -> dict[str, Any]:
        """The row as bench.json keeps it."""
        return {"queue": self.queue, "configured": self.configured, "real": self.real, "simulated": self.simulated,
                "real_busy_s": round(self.real_busy_s, 1), "simulated_busy_s": round(self.simulated_busy_s, 1)}


def compare(run: Mapping[str, Any], spec: BenchSpec, startup: Startup) -> list[ShareRow]:
    """The busy-period shares of one `bench mr` run (its bench.json entry) against its replay in the simulator."""
    from pathlib import Path

    from yarnctl.bench.fidelity import RealRun, replay
    from yarnctl.bench.replay import histories
    from yarnctl.model import Resources
    from yarnctl.sim.workload.queues import tree

    label = str(run["label"])
    cap_mb = int(run["capacity_mb"])
    configured = {q.name: q.abs_capacity for q in tree(spec.queues, Resources(cap_mb, int(run["capacity_vcores"])),
                                                       Resources(128, 1)) if q.leaf}
    used = sorted({j.queue for j in spec.jobs if j.queue})
    real = busy_shares(from_json(run.get("queue_samples") or []), cap_mb, used)
    real_run = RealRun(spec.name, label, spec, tuple(run["records"]),
                       histories(Path(str(run.get("history") or "/nonexistent"))))
    simulated = busy_shares(replay(real_run, startup, sample_queues_s=1.0).queue_samples, cap_mb, used)
    return [ShareRow(label, q, configured[q], real.shares.get(q), simulated.shares.get(q), real.busy_s,
                     simulated.busy_s) for q in used]
