"""Per cell mean and 95% interval over seeds, and paired differences against a baseline on the same seeds.

The interval of a mean is Student's t (default) or a bootstrap (scipy.stats.bootstrap, percentile,
fixed random state); a difference is *significant* only when its interval excludes zero. A relative
difference is the mean over seeds of (cell − baseline) / baseline, with its own interval; it is
undefined when the baseline is zero on some seed. A cell with one seed has a mean and no interval,
and is never significant; nor is a difference between two cells neither of which changed in any
metric from seed to seed (`varied` false: the seeds changed nothing, so however many ran, it is one
sample). A significant difference whose relative interval lies within 5% of the baseline is reported
as such, and one whose interval reaches across 5% as at the margin: the seeds agree on it, but of
the scheduler pairs a real cluster ran more than 5% apart, the simulator ordered those it put within
5% alike in only 24 of 43 (docs/fidelity.md). A relative change undefined (the baseline zero on
some seed) has no margin to be placed against, and a significant one reads as a finding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as st

from yarnctl.errors import ConfigError
from yarnctl.sim.report import SAME_RANK_MARGIN
from yarnctl.sweep.spec import resolve_baseline

CI_METHODS = ("t", "bootstrap")


def interval(xs: np.ndarray, method: str = "t", confidence: float = 0.95) -> tuple[float, float]:
    """The confidence interval of the mean of `xs` (NaN, NaN with fewer than two values)."""
    xs = xs[~np.isnan(xs)]
    if len(xs) < 2:
        return math.nan, math.nan
    m = float(np.mean(xs))
    if np.all(xs == xs[0]):
        return m, m  # no spread: the interval is the value (both methods would degenerate)
    if method == "bootstrap":
        res = st.bootstrap((xs,), np.mean, confidence_level=confidence, n_resamples=9999, method="percentile",
                           random_state=np.random.default_rng(0))
        return float(res.confidence_interval.low), float(res.confidence_interval.high)
    sem = float(st.sem(xs))
    lo, hi = st.t.interval(confidence, len(xs) - 1, loc=m, scale=sem)
    return float(lo), float(hi)


def cell_means(df: pd.DataFrame, metric: str, method: str = "t", confidence: float = 0.95) -> pd.DataFrame:
    """workload, label, policy, n, mean, lo, hi per cell (a cell: a workload and a policy with its parameters)."""
    need_metric(df, metric)
    rows = []
    for (w, label), g in df.groupby(["workload", "label"], sort=False):
        xs = g[metric].to_numpy(dtype=float)
        lo, hi = interval(xs, method, confidence)
        rows.append({"workload": w, "label": label, "policy": g["policy"].iloc[0], "n": int((~np.isnan(xs)).sum()),
                     "mean": float(np.nanmean(xs)) if (~np.isnan(xs)).any() else math.nan, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def baseline_label(df: pd.DataFrame, baseline: str) -> str:
    """The cell label `baseline` names: a label as is, or a policy swept with one parameter set; ConfigError otherwise."""
    return resolve_baseline(baseline, list(zip(map(str, df["policy"]), map(str, df["label"]))), "--baseline")


def paired_differences(df: pd.DataFrame, metric: str, baseline: str, method: str = "t",
                       confidence: float = 0.95) -> pd.DataFrame:
    """Per cell: mean of (cell − baseline) over the seeds both ran, its interval, the same relative to the baseline, significance."""
    need_metric(df, metric)
    base_label = baseline_label(df, baseline)
    base = df.loc[df["label"] == base_label, ["workload", "seed", metric]].rename(columns={metric: "_base"})
    metrics = metric_columns(df)
    moving = {label for label, g in df.groupby("label", sort=False)
              if any(g[m].nunique(dropna=True) > 1 for m in metrics)}
    rows = []
    for (w, label), g in df.groupby(["workload", "label"], sort=False):
        if label == base_label:
            continue
        m = g[["workload", "seed", metric]].merge(base, on=["workload", "seed"])
        both = m[[metric, "_base"]].to_numpy(dtype=float)
        both = both[~np.isnan(both).any(axis=1)]  # the seeds where both have a value, for diff and rel alike
        d = both[:, 0] - both[:, 1]
        lo, hi = interval(d, method, confidence)
        mean_d = float(np.mean(d)) if len(d) else math.nan
        defined = len(d) and bool(np.all(both[:, 1] != 0))
        rel = d / both[:, 1] if defined else np.array([])
        rel_lo, rel_hi = interval(rel, method, confidence)
        # neither cell changed in any metric from seed to seed: the seeds varied nothing (a workload with nothing
        # random in it), so the pairs are one sample repeated; a metric constant in a cell whose other metrics move
        # (a count of failures, say) is a real sample
        varied = len(d) >= 2 and (base_label in moving or label in moving)
        rows.append({"workload": w, "label": label, "baseline": base_label, "pairs": len(d), "diff": mean_d,
                     "lo": lo, "hi": hi, "rel": float(np.mean(rel)) if defined else math.nan,
                     "rel_lo": rel_lo, "rel_hi": rel_hi, "varied": varied,
                     "significant": bool(len(d) >= 2 and varied and (lo > 0 or hi < 0))})
    return pd.DataFrame(rows)


def report_table(means: pd.DataFrame, diffs: pd.DataFrame | None, metric: str) -> str:
    """A markdown table per workload: mean [interval] per cell, and its difference from the baseline."""
    out = []
    for w, g in means.groupby("workload", sort=False):
        out += [f"### {w}: {metric}", ""]
        head = "| cell | seeds | mean [95% CI] |"
        sep = "|---|---|---|"
        if diffs is not None and len(diffs):
            head += f" vs {diffs['baseline'].iloc[0]} [95% CI] | relative | significant |"
            sep += "---|---|---|"
        out += [head, sep]
        for r in g.itertuples():
            line = f"| {r.label} | {r.n} | {_num(r.mean)} {_ci(r.lo, r.hi)} |"
            if diffs is not None and len(diffs):
                d = diffs[(diffs["workload"] == w) & (diffs["label"] == r.label)]
                if len(d):
                    x = d.iloc[0]
                    line += (f" {_num(x['diff'], signed=True)} {_ci(x['lo'], x['hi'], signed=True)} | "
                             f"{' '.join(filter(None, (_pct(x['rel']), _pct_ci(x['rel_lo'], x['rel_hi']))))} | "
                             f"{_significance(x)} |")
                else:
                    line += " baseline | | |"
            out.append(line)
        out.append("")
    return "\n".join(out)


def metric_columns(df: pd.DataFrame) -> list[str]:
    """The columns of `df` that are metrics (not the cell's workload, policy, label, seed, key or parameters)."""
    cell = ("workload", "policy", "label", "seed", "key")
    return [c for c in df.columns if c not in cell and not c.startswith("param.")]


def need_metric(df: pd.DataFrame, metric: str) -> None:
    """ConfigError listing the metrics when `metric` is not a metric column of `df` (a cell's column is not one)."""
    metrics = metric_columns(df)
    if metric not in metrics:
        what = "names the cells, it is not a metric" if metric in df.columns else "not in the results"
        raise ConfigError(f"--metric {metric!r}: {what}; metrics: {', '.join(metrics)}")


def _num(v: Any, signed: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:+.4g}" if signed else f"{v:.4g}"


def _significance(x: Any) -> str:
    if x["significant"]:
        # real over the seeds; a finding only where all of it is beyond the gaps the simulator calls
        side, pct = margin_side(x["rel"], x["rel_lo"], x["rel_hi"]), f"{100 * SAME_RANK_MARGIN:.0f}%"
        return {"beyond": "**yes**", "within": f"yes, within {pct}"}.get(side, f"yes, at the {pct} margin")
    if x["pairs"] >= 2 and not x["varied"] and x["diff"] != 0:
        return "no (the same on every seed)"
    return "no"


def margin_side(rel: float, lo: float, hi: float, margin: float = SAME_RANK_MARGIN) -> str:
    """Where a relative change lies against the simulator's margin: "within", "beyond", or "at" (spanning it)."""
    if math.isnan(rel):
        return "beyond"  # the baseline is zero on some seed: no relative margin to place it against
    if math.isnan(lo) or lo == hi:
        lo = hi = rel  # no interval (one pair, or no spread): the point is all there is
    if max(abs(lo), abs(hi)) <= margin:
        return "within"
    if lo > margin or hi < -margin:
        return "beyond"
    return "at"  # the interval reaches the margin or both sides of it: maybe a gap the simulator calls, maybe not


def _ci(lo: float, hi: float, signed: bool = False) -> str:
    if math.isnan(lo):
        return ""
    if lo == hi:
        return "(no spread over seeds)"
    return f"[{_num(lo, signed)}, {_num(hi, signed)}]"


def _pct(v: float) -> str:
    return "-" if math.isnan(v) else f"{100 * v:+.1f}%"


def _pct_ci(lo: float, hi: float) -> str:
    if math.isnan(lo) or lo == hi:
        return ""
    return f"[{100 * lo:+.1f}, {100 * hi:+.1f}]"
