"""LT-AF ([H-MRF] Sec. 5.2, Attempt 2): equalise aggregate accumulated shares.

Serves the queue (or user) with the least α_i = Σ_j ü_ij / r_j (over its weight) in the window,
ties by dominant share. Resource-as-you-contributed fair (Theorem 3) but without sharing
incentive (Theorem 4). Example 4 at t2: A 42, B 16 (aggregate values 171 / 172, Fig. 4).
"""

from __future__ import annotations

from yarnctl.fairness.accounting import Standing
from yarnctl.fairness.comparators import SortKey
from yarnctl.model import Resources
from yarnctl.policies.hmrf import LongTermPolicy, lt_af_rank


class LtAf(LongTermPolicy):
    """Long-term Asset Fairness: the least aggregate accumulated share goes next."""

    name = "lt-af"

    def rank(self, st: Standing, capacity: Resources) -> SortKey:
        """Sec. 5.2's aggregate accumulated share α_i."""
        return lt_af_rank(st, capacity)
