"""The sharing (fairness) degree of [H-MRF] Sec. 4: β_{i,j}(t) (Eq. 2) and β_i(t) (Eq. 3).

β_{i,j} = ∫u_{i,j} dt / ∫(allocation without sharing)_{i,j} dt; β_i = min_j β_{i,j}. Above 1 is
a sharing benefit, below 1 a sharing loss.
"""

from __future__ import annotations

import math

from yarnctl.fairness.shares import Vector


def sharing_degrees(used: Vector, fair: Vector) -> Vector:
    """Eq. 2 per resource from the two integrals; a resource never demanded has β = +inf (it bounds nothing)."""
    # by index, as every vector function: the accounting asks for it at every standing
    return (used[0] / fair[0] if fair[0] > 0 else math.inf, used[1] / fair[1] if fair[1] > 0 else math.inf)


def sharing_degree(used: Vector, fair: Vector) -> float:
    """Eq. 3: β_i = min_j β_{i,j}; 1.0 (neither benefit nor loss) for a user that never demanded anything."""
    beta = min(sharing_degrees(used, fair))
    return 1.0 if math.isinf(beta) else beta
