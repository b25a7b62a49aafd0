"""AF, Asset Fairness ([H-MRF] Sec. 3.3): equalise the aggregate share held now.

LT-AF over a zero window (Sec. 6: L -> 0 is memoryless), so the two share one allocator and
one rank. Example 1: A 28 tasks <28 CPUs, 56 GB>, B 44 <44 CPUs, 44 GB>; Example 3 / Table 1a:
A 86 and B 56 tasks in total by t4.
"""

from __future__ import annotations

from dataclasses import dataclass

from yarnctl.policies.hmrf import LongTermConfig
from yarnctl.policies.lt_af import LtAf


@dataclass(frozen=True, slots=True)
class AfConfig(LongTermConfig):
    """LT-AF's parameters with a zero (memoryless) window."""

    window_s: float = 0.0


class Af(LtAf):
    """Memoryless Asset Fairness: the least aggregate share held now goes next."""

    name = "af"
    Config = AfConfig

    def __init__(self, config: LongTermConfig = AfConfig()) -> None:
        super().__init__(config)
