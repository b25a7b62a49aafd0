"""Guaranteed and opportunistic available resources ([OPERA], Sec. III-C/D, Eq. 4, 6, 7).

    Eq. 6  GA_i(r) = C_i(r) − Σ_{t ∈ NT_i} D_t(r)          demands of the normal tasks only
    Eq. 7  OA_i(r) = C_i(r) − Σ_{t ∈ RT_i} TU_t(r)         usage of every running task
    Eq. 4  OA_i(r) = C_i(r) − Σ_{t ∈ RT_i} TU_t(r) − BR_i(r)   under PRESERVE (BR_i = 0 otherwise)

C_i is the node's configured capacity, not the capacity OPERA rescales it to. A demand fits when
it is at most the room in every resource (the paper writes D_t(r) < GA_i(r); with YARN's integer
resources a strict test would leave the last container of a full node empty, which the Fair
baseline would fill, so "fits" is YARN's own ≤ for both kinds of room).
"""

from __future__ import annotations

from collections.abc import Iterable

from yarnctl.estimation.feedback import Usage
from yarnctl.model import Resources

NONE = Usage()


def guaranteed(capacity: Resources, normal: Iterable[Resources]) -> Usage:
    """Eq. 6: capacity less the demands of the node's normal tasks."""
    # the subtractions of a Usage per task, in the same order, without building one per task (every heartbeat)
    mb, vc = float(capacity.memory_mb), float(capacity.vcores)
    for d in normal:
        mb, vc = mb - float(d.memory_mb), vc - float(d.vcores)
    return Usage(mb, vc)


def opportunistic(capacity: Resources, usages: Iterable[Usage], blocked: Usage = NONE) -> Usage:
    """Eq. 7 (Eq. 4 with `blocked` = BR_i): capacity less the usage of every running task, less BR_i."""
    mb, vc = float(capacity.memory_mb) - blocked.memory_mb, float(capacity.vcores) - blocked.vcores
    for u in usages:
        mb, vc = mb - u.memory_mb, vc - u.vcores
    return Usage(mb, vc)


def fits(demand: Resources, room: Usage) -> bool:
    """True when `demand` is at most `room` in every resource."""
    return demand.memory_mb <= room.memory_mb + 1e-9 and demand.vcores <= room.vcores + 1e-9


def below(room: Usage, smallest: Resources) -> bool:
    """Alg. 3-4 line 3: the room cannot hold even the smallest pending demand."""
    return not fits(smallest, room)
