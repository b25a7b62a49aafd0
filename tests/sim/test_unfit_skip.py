"""Heartbeats where no pending ask fits: the simulator does not ask a policy that could only answer nothing there."""

from __future__ import annotations

import pytest

from yarnctl.engine import Engine
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import load_workload


def _run(workload: str, policy: str, skip_unfit: bool, explain: frozenset[str] = frozenset()) -> SimCluster:
    sim = SimCluster(load_workload(workload), Engine(make_policy(policy)), explain=explain, max_time_s=1800)
    sim.skip_unfit = sim.skip_unfit and skip_unfit  # the counterfactual: ask it there too
    sim.run()
    return sim


@pytest.mark.parametrize("policy", ["fifo", "fair", "drf", "capacity", "haste-a", "ffd-dp", "dress", "af"])
def test_skipping_where_nothing_fits_changes_no_record_and_no_reason(policy: str) -> None:
    jobs = frozenset({"j1", "j2", "j5"})
    asked, skipped = (_run("haste-mixed1", policy, flag, jobs) for flag in (False, True))
    assert skipped.stats["decisions"] < asked.stats["decisions"]  # it does skip on this workload
    assert [r for r in skipped.records] == [r for r in asked.records]
    assert [(w.t, w.job, w.node, w.wait) for w in skipped.waits] == [(w.t, w.job, w.node, w.wait) for w in asked.waits]


@pytest.mark.parametrize("policy", ["fair", "drf", "capacity"])
def test_a_policy_that_reserves_is_asked_where_nothing_fits(policy: str) -> None:
    w = load_workload("haste-mixed1")
    plain = SimCluster(w, Engine(make_policy(policy)))
    reserving = SimCluster(w, Engine(make_policy(policy, {"reservations": True})))
    assert plain.skip_unfit and not reserving.skip_unfit  # it would reserve such a node: not an empty answer


def test_time_dependent_and_resizing_policies_are_asked_at_every_heartbeat() -> None:
    w = load_workload("haste-mixed1")
    for policy in ("hmrf", "lt-drf", "feedback", "opera"):
        assert not SimCluster(w, Engine(make_policy(policy))).skip_unfit, policy
