"""The report's picture: each policy's mean and 95% interval against the parameter it sweeps, per workload."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd


def plot_means(df: pd.DataFrame, means: pd.DataFrame, metric: str, path: Path) -> Path:
    """One panel per workload: a line with its interval band per policy swept over one numeric parameter, bars otherwise."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(means["workload"]))
    fig, axes = plt.subplots(1, len(workloads), figsize=(6 * len(workloads), 4), squeeze=False)
    params = [c for c in df.columns if c.startswith("param.")]
    for ax, w in zip(axes[0], workloads):
        m = means[means["workload"] == w]
        flat = []
        colors = (f"C{i % 10}" for i in range(10 ** 6))  # one colour per line, levels included
        xlabels = []
        for policy, g in m.groupby("policy", sort=False):
            rows = df[(df["workload"] == w) & (df["policy"] == policy)]
            swept = [p for p in params if rows[p].nunique(dropna=True) > 1]
            if len(swept) == 1 and pd.api.types.is_numeric_dtype(rows[swept[0]]):
                x = rows.groupby("label", sort=False)[swept[0]].first().reindex(g["label"]).to_numpy(dtype=float)
                order = x.argsort()
                xs, ys = x[order], g["mean"].to_numpy()[order]
                line, = ax.plot(xs, ys, marker="o", color=next(colors), label=f"{policy} vs {swept[0][6:]}")
                xlabels.append(swept[0][6:])
                lo, hi = g["lo"].to_numpy()[order], g["hi"].to_numpy()[order]
                if not all(math.isnan(v) for v in lo):
                    ax.fill_between(xs, lo, hi, alpha=0.2, color=line.get_color())
            else:
                flat += list(g.itertuples())
        for r in flat:  # unswept cells: a level with its band across the panel
            line = ax.axhline(r.mean, linestyle="--", color=next(colors), label=r.label)
            if not math.isnan(r.lo):
                ax.axhspan(r.lo, r.hi, alpha=0.1, color=line.get_color())
        ax.set_title(w)
        if xlabels:
            ax.set_xlabel(" / ".join(dict.fromkeys(xlabels)))
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
