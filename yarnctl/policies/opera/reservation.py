"""Task assignment and reservation ([OPERA], Sec. III-D/E, Alg. 2, 3 and 4).

Alg. 2 Assign: normal assignment first (D_t fits GA_i: GA_i −= D_t, OA_i −= D_t), else, for a
task eligible for opportunistic resources, opportunistic assignment (D_t fits OA_i: OA_i −= D_t).
An opportunistic grant must also fit `extra`, what the node may still be offered beyond its
configured capacity (OperaConfig.max_overcommit, a YARN 2.7 guard the paper does not need).

Alg. 3 (strict): a node with a reserved task tries only that task in a heartbeat; otherwise it
tries the next task of the queue once, and reserves it when Assign fails.

Alg. 4 (multi-chance): reserved tasks are tried first in FIFO order; one that fails has its skip
count raised, and past ε_s the heartbeat ends there. Then, while at most ε_r tasks are reserved
and no skip count exceeds ε_s, the next queued task is assigned (raising every reserved task's
skip count) or reserved with a skip count of 1. The loop also ends when the queue has nothing
left that is not reserved here. Both: a heartbeat whose GA_i and OA_i cannot hold the smallest
pending demand does nothing (line 3), and a reservation whose request is gone is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from yarnctl.estimation.feedback import Usage
from yarnctl.model import ContainerKind
from yarnctl.policies.opera.availability import below, fits
from yarnctl.policies.opera.queue import FairQueue, Task, TaskKey

Eligible = Callable[[Task], bool]


@dataclass(slots=True)
class Room:
    """One node's room while a heartbeat is decided: GA_i, OA_i and the over-commit headroom."""

    guaranteed: Usage
    opportunistic: Usage
    extra: Usage

    def assign(self, task: Task, eligible: Eligible) -> ContainerKind | None:
        """Alg. 2: normal if D_t fits GA_i, else opportunistic if eligible and D_t fits OA_i, else None."""
        d = Usage.of(task.demand)
        if fits(task.demand, self.guaranteed):
            self.guaranteed = self.guaranteed - d
            self.opportunistic = self.opportunistic - d
            return ContainerKind.NORMAL
        if fits(task.demand, self.opportunistic) and fits(task.demand, self.extra) and eligible(task):
            self.opportunistic = self.opportunistic - d
            self.extra = self.extra - d
            return ContainerKind.OPPORTUNISTIC
        return None


@dataclass(frozen=True, slots=True)
class Reserved:
    """A task reserved on a node and how often it has been skipped."""

    key: TaskKey
    skips: int = 1


@dataclass(slots=True)
class Outcome:
    """What one heartbeat's assignment gave and which tasks stay reserved on the node."""

    grants: list[tuple[Task, ContainerKind]] = field(default_factory=list)
    reserved: list[Reserved] = field(default_factory=list)


def _starved(room: Room, queue: FairQueue) -> bool:
    smallest = queue.smallest()
    return smallest is None or (below(room.guaranteed, smallest) and below(room.opportunistic, smallest))


def strict(room: Room, queue: FairQueue, reserved: list[Reserved], eligible: Eligible) -> Outcome:
    """Alg. 3: serve the node's reserved task alone, or the next queued task, reserving it if it does not fit."""
    live = [r for r in reserved[:1] if queue.task(r.key) is not None]
    out = Outcome(reserved=live)
    if _starved(room, queue):
        return out
    if live:
        t = queue.task(live[0].key)
        assert t is not None
        kind = room.assign(t, eligible)
        if kind is not None:
            queue.take(t)
            out.grants.append((t, kind))
            out.reserved = []
        return out
    t = queue.next()
    if t is None:
        return out
    kind = room.assign(t, eligible)
    if kind is None:
        out.reserved = [Reserved(t.key)]
    else:
        queue.take(t)
        out.grants.append((t, kind))
    return out


def multi_chance(room: Room, queue: FairQueue, reserved: list[Reserved], eligible: Eligible,
                 max_reserved: int, max_skips: int) -> Outcome:
    """Alg. 4: reserved tasks first, each skippable up to ε_s times, then queued tasks while fewer than ε_r wait."""
    live = [r for r in reserved if queue.task(r.key) is not None]
    out = Outcome(reserved=live)
    if _starved(room, queue):
        return out
    left: list[Reserved] = []
    for i, r in enumerate(live):
        t = queue.task(r.key)
        kind = None if t is None else room.assign(t, eligible)
        if t is not None and kind is not None:
            queue.take(t)
            out.grants.append((t, kind))
            continue
        left.append(Reserved(r.key, r.skips + 1))
        if r.skips + 1 > max_skips:
            out.reserved = left + live[i + 1:]
            return out
    out.reserved = left
    while len(out.reserved) <= max_reserved and max((r.skips for r in out.reserved), default=0) <= max_skips:
        t = queue.next({r.key for r in out.reserved})
        if t is None:
            break
        kind = room.assign(t, eligible)
        if kind is None:
            out.reserved.append(Reserved(t.key))
        else:
            queue.take(t)
            out.grants.append((t, kind))
            out.reserved = [Reserved(r.key, r.skips + 1) for r in out.reserved]
    return out
