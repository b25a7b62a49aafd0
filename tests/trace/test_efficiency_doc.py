"""docs/reproduction.md's allocation-efficiency table is what the simulator's trace gives: it cannot drift silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.engine import Engine
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.report import container_usage
from yarnctl.sim.workload import load_workload
from yarnctl.trace.efficiency import LEVELS, RESOURCES, distribution, efficiencies

DOC = (Path(__file__).resolve().parents[2] / "docs" / "reproduction.md").read_text().splitlines()


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


@pytest.fixture(scope="module")
def trace() -> list:  # type: ignore[type-arg]
    run = SimCluster(load_workload("feedback-day", seed=0), Engine(make_policy("fifo"))).run()
    return container_usage(run.containers)


def test_efficiency_rows_in_the_doc_are_regenerated_exactly(trace: list) -> None:  # type: ignore[type-arg]
    for level in LEVELS:
        effs = efficiencies(trace, level)
        for res in RESOURCES:
            d = distribution(effs, res, (10, 50, 90))
            p = dict(d.percentiles)
            row = (f"| {level} | {res} | {d.count:,} | {_pct(p[10])} | {_pct(p[50])} | {_pct(p[90])} | {_pct(d.max)} | "
                   f"{_pct(d.share_below(0.5))} | {_pct(d.share_below(1.0))} |")
            assert row in DOC, f"docs/reproduction.md has no line\n{row}"


def test_paper_statement_rows_in_the_doc(trace: list) -> None:  # type: ignore[type-arg]
    tasks = [c for c in trace if not c.is_am]

    def share(cs: list, level: str, res: str, below: float) -> str:  # type: ignore[type-arg]
        return _pct(distribution(efficiencies(cs, level), res, thresholds=(below,)).share_below(below))

    rows = {
        "containers using less cpu than allocated": (share(trace, "container", "cpu", 1.0),
                                                     share(tasks, "container", "cpu", 1.0)),
        "containers using < 50% of their memory": (share(trace, "container", "memory", 0.5),
                                                   share(tasks, "container", "memory", 0.5)),
        "applications using < 24% of their memory": (share(trace, "job", "memory", 0.24),
                                                     share(tasks, "job", "memory", 0.24)),
        "users using < 35% of their memory": (share(trace, "user", "memory", 0.35),
                                              share(tasks, "user", "memory", 0.35)),
    }
    for statement, (everything, only_tasks) in rows.items():
        line = next((ln for ln in DOC if ln.startswith(f"| {statement} |")), None)
        assert line is not None, statement
        assert line.endswith(f"| {everything} | {only_tasks} |"), (line, everything, only_tasks)
