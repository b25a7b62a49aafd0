"""LT-DRF ([H-MRF] Sec. 5.1, Attempt 1): equalise accumulated dominant shares.

Serves the queue (or user) with the least max_j ü_ij / (r_j w_i) over the window. Truthful
(Theorem 1) but not resource-as-you-contributed fair (Theorem 2). Example 4 at t2: A 35, B 30
(accumulated dominant shares 100 / 100, Fig. 3).
"""

from __future__ import annotations

from yarnctl.fairness.accounting import Standing
from yarnctl.fairness.comparators import SortKey
from yarnctl.model import Resources
from yarnctl.policies.hmrf import LongTermPolicy, lt_drf_rank


class LtDrf(LongTermPolicy):
    """Long-term DRF: the least accumulated dominant share goes next."""

    name = "lt-drf"

    def rank(self, st: Standing, capacity: Resources) -> SortKey:
        """Sec. 5.1's accumulated dominant share."""
        return lt_drf_rank(st, capacity)
