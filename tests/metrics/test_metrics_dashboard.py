"""docker/grafana/yarnctl-dashboard.json reads only what ServeCollector exports."""

from __future__ import annotations

import json

import pytest
from dashboard import DASHBOARD, exprs, metric_names

from yarnctl.metrics import METRIC_NAMES


def test_dashboard_has_the_panels_the_issue_asks_for() -> None:
    titles = {p["title"] for p in json.loads(DASHBOARD.read_text())["panels"]}
    assert {"Bridge up", "Decisions/s by outcome", "Decision latency", "Cluster memory", "Cluster vcores",
            "Pending containers", "Apps"} <= titles


@pytest.mark.parametrize("expr", exprs())
def test_expr_reads_exported_metrics(expr: str) -> None:
    names = metric_names(expr)
    assert names, f"{expr!r} reads no yarnctl_ metric"
    assert names <= set(METRIC_NAMES), f"{expr!r} reads {sorted(names - set(METRIC_NAMES))}, not exported"


def test_every_exported_metric_is_on_the_dashboard() -> None:
    shown = set().union(*(metric_names(e) for e in exprs()))
    assert shown == set(METRIC_NAMES)
