"""`sweep report`: the results table read back, summarised per cell, written as markdown, CSV and a plot."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from yarnctl.errors import ConfigError
from yarnctl.sim.workload.reader import Reader
from yarnctl.sweep.stats import cell_means, need_metric, paired_differences, report_table

log = logging.getLogger(__name__)
BOOTSTRAP_MIN_SEEDS = 10  # below this a percentile bootstrap's interval is far too narrow (n=2: [min, max])


def load_results(out: Path, metric: str) -> pd.DataFrame:
    """OUT/results.csv of `sweep run`, `metric` as numbers; ConfigError naming the file when it is missing or not such a table."""
    table = out / "results.csv"
    if not table.is_file():
        raise ConfigError(f"{table}: no results; run `yarnctl sweep run ... --out {out}` first")
    try:
        df = pd.read_csv(table)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{table}: unreadable ({str(e).splitlines()[0]})") from None
    if not {"workload", "label", "policy", "seed"} <= set(df.columns):
        raise ConfigError(f"{table}: not a results table of `yarnctl sweep run`")
    need_metric(df, metric)
    values = pd.to_numeric(df[metric], errors="coerce")
    bad = values.isna() & df[metric].notna()  # an empty cell is a metric a run did not have
    if bad.any():
        i = int(bad.to_numpy().argmax())
        raise ConfigError(f"{table}: line {i + 2}, {metric}: not a number: {df[metric].iloc[i]!r}")
    df[metric] = values
    return df


def recorded_baseline(out: Path) -> str | None:
    """The baseline `sweep run` recorded in OUT/sweep.json, None without one; ConfigError naming the file when corrupt."""
    path = out / "sweep.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: unreadable ({str(e).splitlines()[0]}); give --baseline, or run `yarnctl sweep "
                          f"run` again to rewrite it") from None
    r = Reader(str(path))
    baseline = r.mapping(doc, "").get("baseline")
    return None if baseline is None else r.string(baseline, "baseline")


def write_report(out: Path, metric: str, baseline: str | None = None, ci: str = "t",
                 plot: bool = True) -> tuple[str, list[Path]]:
    """The report's markdown text and the files written (OUT/report-METRIC.md, .csv, .png); baseline default: the sweep's."""
    df = load_results(out, metric)
    if baseline is None:
        baseline = recorded_baseline(out)
    means = cell_means(df, metric, ci)
    if ci == "bootstrap" and len(means) and int(means["n"].min()) < BOOTSTRAP_MIN_SEEDS:
        log.warning("--ci bootstrap with %d seeds in a cell: its intervals are too narrow below %d seeds; "
                    "prefer --ci t", int(means["n"].min()), BOOTSTRAP_MIN_SEEDS)
    diffs = paired_differences(df, metric, baseline, ci) if baseline else None
    text = report_table(means, diffs, metric)
    # not with_suffix: a per job type metric (avg_completion_s.MAPREDUCE) has a dot of its own
    md, csv, png = (out / f"report-{metric}.{ext}" for ext in ("md", "csv", "png"))
    md.write_text(text + "\n")
    merged = means if diffs is None else means.merge(diffs, on=["workload", "label"], how="left", suffixes=("", "_diff"))
    merged.to_csv(csv, index=False)
    written = [md, csv]
    if plot:
        from yarnctl.sweep.plots import plot_means
        written.append(plot_means(df, means, metric, png))
    return text, written
