"""HaSTE-A: HaSTE plus the alignment of iterative jobs ([HaSTE] Sec. 4, Eq. 5-6, R4-R6).

Alignment (Eq. 5):   A_i = (I_i + I_i^current) / sum_j I_j
with I_i the job's iterations (1 for a plain job), I_i^current those it has finished and the sum
over every job in the cluster. It ranks iterative jobs above plain ones (R4), jobs with more
iterations above those with fewer (R5) and, among those, the ones further along (R6). The
preference of Eq. 4 becomes Eq. 6: beta_1 F^ + beta_2 U^ + beta_3 A^ with every score min-max
normalised over the asks that fit, beta = (0.2, 0.2, 0.6) as in Sec. 5.2.3. Everything else
is HaSTE's (haste.py).

Jobs declare their iterations through application tags (the paper assumes the count is known,
Sec. 4.1, footnote 2): `yarnctl.iterations=N` and `yarnctl.stage=K` (1 <= K <= N) on the app
running iteration K, so I_i^current = K - 1. Live, an iterative application is a chain of YARN
apps, each submitted with both tags (e.g. `-Dmapreduce.job.tags=yarnctl.iterations=6,yarnctl.stage=2`;
YARN lowercases tags, so the names are lowercase). The simulator runs an iterative job as one app
and updates its `yarnctl.stage` tag as each iteration starts. A missing or malformed tag counts
as a plain job (N = 1) or the first iteration (K = 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from yarnctl.errors import ConfigError
from yarnctl.model import App, ClusterSnapshot
from yarnctl.model.cluster import ITERATIONS_TAG, STAGE_TAG
from yarnctl.policies.haste import Haste, HasteConfig


@dataclass(frozen=True, slots=True)
class HasteAConfig(HasteConfig):
    """HaSTE's parameters plus the weights beta of Eq. 6 (Sec. 5.2.3's defaults)."""

    beta_fitness: float = 0.2
    beta_urgency: float = 0.2
    beta_alignment: float = 0.6


def iterations(app: App) -> tuple[int, int]:
    """(I_i, I_i^current): the job's iterations and how many have finished, from its tags."""
    total, stage = 1, 1
    for tag in app.tags:
        key, _, value = tag.partition("=")
        if value.isdigit() and int(value) >= 1:
            if key == ITERATIONS_TAG:
                total = int(value)
            elif key == STAGE_TAG:
                stage = int(value)
    return total, min(stage, total) - 1


def alignments(snap: ClusterSnapshot) -> dict[str, float]:
    """Eq. 5 for every app in the cluster."""
    counts = {app.id: iterations(app) for app in snap.apps.values()}
    total = sum(n for n, _ in counts.values())
    return {app_id: (n + done) / total for app_id, (n, done) in counts.items()}


class HasteA(Haste):
    """HaSTE-A: HaSTE whose preference also weighs how far iterative jobs have to go (Eq. 6)."""

    name = "haste-a"
    Config = HasteAConfig
    iterations = staticmethod(iterations)

    def __init__(self, config: HasteAConfig = HasteAConfig()) -> None:
        super().__init__(config)
        self.beta = (config.beta_fitness, config.beta_urgency, config.beta_alignment)
        if not all(map(math.isfinite, self.beta)):
            raise ConfigError(f"policy {self.name}: beta_fitness, beta_urgency and beta_alignment must be finite")

    def alignments(self, snap: ClusterSnapshot) -> Mapping[str, float]:
        """Alignment per app (Eq. 5)."""
        return alignments(snap)
