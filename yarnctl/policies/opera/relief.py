"""The NodeManager monitor's contention relief ([OPERA], Sec. III-C, Alg. 1).

CRes (lines 12-17): memory contention when NU_i(mem) > ρ C_i(mem), else CPU contention when
NU_i(CPU) > ρ C_i(CPU), else none (memory first: it kills tasks, CPU only slows them). It is
only asked when the node runs an opportunistic task (lines 6-9).

RelieveContention (lines 18-33), one step per monitor interval:

    AGGRESSIVE  kill the most recently launched opportunistic task on memory contention only
    NEUTRAL     kill it on memory or CPU contention
    PRESERVE    as NEUTRAL, and on contention BR_i <- α BR_i, BT_i <- α BT_i, LastReliefTime <- now;
                with none, once now − LastReliefTime > BT_i: BR_i <- BR_i / α, BT_i <- BT_i / α,
                LastReliefTime <- now

Sec. III-C's text says BR_i and BT_i are "doubled" on contention and "decreased exponentially by
a factor of α", so α is the growth factor (default 2). The paper gives no initial values, no
bounds and no MonitorInterval: BR_i and BT_i start at a floor (`block`, `block_time_s`, Fig. 12
shows 2 vCores blocked before contention) that decay never goes below (below it repeated
halving would drive both to 0 and doubling could never bring them back), BR_i never exceeds the
node's capacity and BT_i never exceeds `max_block_time_s`. The monitor interval is the control
loop's tick (usage is read there).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from yarnctl.estimation.feedback import Usage
from yarnctl.model import Container, Resources


class Contention(str, enum.Enum):
    """The contended resource CRes reports."""

    NONE = "none"
    CPU = "cpu"
    MEMORY = "memory"


class Relief(str, enum.Enum):
    """The user-specified relief policy of Alg. 1."""

    AGGRESSIVE = "aggressive"
    NEUTRAL = "neutral"
    PRESERVE = "preserve"


def cres(used: Usage, capacity: Resources, rho: float) -> Contention:
    """Alg. 1 lines 12-17: which resource the node's usage NU_i has pushed past ρ C_i (memory first)."""
    if used.memory_mb > rho * capacity.memory_mb:
        return Contention.MEMORY
    if used.vcores > rho * capacity.vcores:
        return Contention.CPU
    return Contention.NONE


def kills(relief: Relief, c: Contention) -> bool:
    """Alg. 1 lines 19-25: True when `relief` kills an opportunistic task under contention `c`."""
    if relief is Relief.AGGRESSIVE:
        return c is Contention.MEMORY
    return c is not Contention.NONE


def victim(containers: Iterable[Container], opportunistic: set[str]) -> Container | None:
    """The most recently launched opportunistic container (ties: the larger id, the later grant)."""
    return max((c for c in containers if c.id in opportunistic), key=lambda c: (c.start_s, c.id), default=None)


@dataclass(frozen=True, slots=True)
class Block:
    """PRESERVE's state on one node: blocked resources BR_i, block time BT_i and LastReliefTime."""

    blocked: Usage
    block_time_s: float
    last_relief_s: float


def _clamp(u: Usage, low: Usage, high: Usage) -> Usage:
    return Usage(min(max(u.memory_mb, low.memory_mb), high.memory_mb), min(max(u.vcores, low.vcores), high.vcores))


def relieve(block: Block, c: Contention, now_s: float, alpha: float, floor: Block, capacity: Resources,
            max_block_time_s: float) -> Block:
    """Alg. 1 lines 23-33: grow BR_i and BT_i by α on contention, shrink them by α after a quiet BT_i."""
    top = Usage.of(capacity)
    if c is not Contention.NONE:
        return Block(_clamp(block.blocked.scaled(alpha), floor.blocked, top),
                     min(max(block.block_time_s * alpha, floor.block_time_s), max_block_time_s), now_s)
    if now_s - block.last_relief_s > block.block_time_s:
        return Block(_clamp(block.blocked.scaled(1.0 / alpha), floor.blocked, top),
                     max(block.block_time_s / alpha, floor.block_time_s), now_s)
    return block
