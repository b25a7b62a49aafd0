"""The Grafana dashboard's PromQL expressions and the metric names they read."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "docker" / "grafana" / "yarnctl-dashboard.json"
_METRIC = re.compile(r"\byarnctl_[a-z0-9_]+")
_HISTOGRAM_SERIES = re.compile(r"_(bucket|sum|count)$")


def exprs() -> list[str]:
    """Every target `expr` of every panel, in panel order."""
    doc = json.loads(DASHBOARD.read_text())
    return [t["expr"] for p in doc["panels"] for t in p.get("targets", [])]


def metric_names(expr: str) -> set[str]:
    """The yarnctl_ series an expression reads, as their family names (histogram suffixes dropped)."""
    return {_HISTOGRAM_SERIES.sub("", m) for m in _METRIC.findall(expr)}
