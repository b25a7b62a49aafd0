"""PNG figures of a usage trace: CDFs of allocation efficiency like [FEEDBACK] Fig. 1."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on servers or in CI
import matplotlib.pyplot as plt  # noqa: E402

from yarnctl.trace.efficiency import Efficiency, cdf  # noqa: E402


def efficiency_cdf(by_level: Mapping[str, Sequence[Efficiency]], path: Path, title: str) -> Path:
    """One panel per resource (cpu, memory), one CDF per level (container, job, user), E = 1 marked."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for ax, resource, label in ((axes[0], "cpu", "CPU"), (axes[1], "memory", "memory")):
        for level, effs in by_level.items():
            if not effs:
                continue
            xs, ys = cdf(effs, resource)
            # a step per entity, starting from 0 so the curve begins at the axis
            ax.step([0.0, *xs], [0.0, *ys], where="post", label=f"{level} ({len(xs):,})")
        ax.axvline(1.0, color="black", linewidth=0.7, linestyle=":")
        ax.set_xlabel(f"{label} allocation efficiency (used / allocated)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
