"""A workload's queue tree (`cluster.queues`), checked as CapacityScheduler checks capacity-scheduler.xml.

Each entry names a queue by its path under `root` with its capacity and maximum capacity in percent
of its parent (CapacityScheduler's `capacity`, `maximum-capacity`), and optionally `state`
(RUNNING/STOPPED), `user_limit_percent` and `user_limit_factor`. Parents are the entries other
entries sit under; the siblings under each parent must add up to 100% (0.05% slack, as
ParentQueue.setChildQueues allows). The simulator then gives policies the same `ClusterSnapshot.queues`
the shim on CapacityScheduler sends, so a simulated run and a live one share one tree.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from yarnctl.model import Queue, Resources

SUM_SLACK = 0.05  # percent: CapacitySchedulerConfiguration.getNonLabeledQueueCapacity's tolerance


@dataclass(frozen=True, slots=True)
class QueueSpec:
    """One declared queue: shares in percent of its parent."""

    path: str
    capacity: float
    max_capacity: float = 100.0
    running: bool = True
    user_limit_percent: int = 100
    user_limit_factor: float = 1.0


class TreeError(ValueError):
    """A queue tree CapacityScheduler would refuse; `where` names the entry."""

    def __init__(self, where: str, problem: str) -> None:
        self.where, self.problem = where, problem
        super().__init__(f"{where}: {problem}")


def tree(specs: Sequence[QueueSpec], capacity: Resources, min_allocation: Resources) -> tuple[Queue, ...]:
    """The tree of `specs` (root first, then by path) on a cluster of `capacity`, or TreeError."""
    by_path = {"root": QueueSpec("root", 100.0)}
    for i, s in enumerate(specs):
        where = f"cluster.queues[{i}]"
        parent, _, name = s.path.rpartition(".")
        if not s.path.startswith("root.") or not name:
            raise TreeError(where, f"expected a path under root such as root.a, got {s.path!r}")
        if s.path in by_path:
            raise TreeError(where, f"{s.path} is declared twice")
        if not 0 <= s.capacity <= 100 or not 0 < s.max_capacity <= 100 or s.max_capacity < s.capacity:
            raise TreeError(where, f"capacity {s.capacity:g} and max_capacity {s.max_capacity:g} must satisfy "
                                   "0 <= capacity <= max_capacity <= 100 (percent of the parent)")
        by_path[s.path] = s
    names: dict[str, str] = {}
    children: dict[str, list[QueueSpec]] = {}
    for i, s in enumerate(specs):
        parent, _, name = s.path.rpartition(".")
        if parent not in by_path:
            raise TreeError(f"cluster.queues[{i}]", f"its parent {parent} is not declared")
        if name in names:  # Hadoop 2.7 keys every queue by its short name
            raise TreeError(f"cluster.queues[{i}]", f"queue name {name!r} is also {names[name]}")
        names[name] = s.path
        children.setdefault(parent, []).append(s)
    for parent, kids in children.items():
        total = sum(k.capacity for k in kids)
        if abs(total - 100.0) > SUM_SLACK:
            raise TreeError("cluster.queues", f"the capacities under {parent} add up to {total:g}%, not 100%")
    out: list[Queue] = []
    for path in sorted(by_path, key=lambda p: (p != "root", p)):
        s = by_path[path]
        # CapacityScheduler keeps shares as floats (32-bit) and multiplies them down the path
        abs_cap = abs_max = 1.0
        prefix = ""
        for part in path.split(".")[1:]:
            prefix = f"{prefix}.{part}" if prefix else f"root.{part}"
            q = by_path[prefix]
            abs_cap = _f32(abs_cap * _f32(_f32(q.capacity) / 100))
            abs_max = _f32(abs_max * _f32(_f32(q.max_capacity) / 100))
        out.append(Queue(path.rpartition(".")[2], path, path.rpartition(".")[0] or None, path not in children,
                         s.running, round(s.capacity / 100.0, 6), round(s.max_capacity / 100.0, 6),
                         round(abs_cap, 6), round(abs_max, 6), s.user_limit_percent, s.user_limit_factor,
                         max_resources(capacity, abs_max, min_allocation)))
    return tuple(out)


def rescaled(queues: Sequence[Queue], capacity: Resources, min_allocation: Resources) -> tuple[Queue, ...]:
    """`queues` on a cluster of `capacity`: CapacityScheduler recomputes every maximum when the cluster's size changes."""
    return tuple(dataclasses.replace(q, max_resources=max_resources(capacity, _f32(q.abs_max_capacity),
                                                                    min_allocation)) for q in queues)


def site_properties(specs: Sequence[QueueSpec]) -> dict[str, str]:
    """The capacity-scheduler.xml properties that declare `specs` (what `yarnctl cluster up` writes for a bench)."""
    prefix = "yarn.scheduler.capacity."
    children: dict[str, list[str]] = {}
    out: dict[str, str] = {}
    for s in specs:
        parent, _, name = s.path.rpartition(".")
        children.setdefault(parent, []).append(name)
        out.update({f"{prefix}{s.path}.capacity": f"{s.capacity:g}",
                    f"{prefix}{s.path}.maximum-capacity": f"{s.max_capacity:g}",
                    f"{prefix}{s.path}.state": "RUNNING" if s.running else "STOPPED",
                    f"{prefix}{s.path}.minimum-user-limit-percent": str(s.user_limit_percent),
                    f"{prefix}{s.path}.user-limit-factor": f"{s.user_limit_factor:g}"})
    for parent, names in children.items():
        out[f"{prefix}{parent}.queues"] = ",".join(names)
    return out


def spec_doc(s: QueueSpec) -> dict[str, object]:
    """One `cluster.queues` entry as a workload file writes it."""
    return {"path": s.path, "capacity": s.capacity, "max_capacity": s.max_capacity,
            "state": "RUNNING" if s.running else "STOPPED", "user_limit_percent": s.user_limit_percent,
            "user_limit_factor": s.user_limit_factor}


def _f32(x: float) -> float:
    """`x` as a Java float holds it."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def max_resources(capacity: Resources, share: float, min_allocation: Resources) -> Resources:
    """`share` of `capacity` in whole minimum allocations, as Resources.multiplyAndNormalizeDown (int x float in float)."""
    def down(x: int, step: int) -> int:
        v = int(_f32(x * _f32(share)))
        return v - v % step if step > 0 else v
    return Resources(down(capacity.memory_mb, min_allocation.memory_mb), down(capacity.vcores, min_allocation.vcores))
