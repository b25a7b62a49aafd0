"""The tuning interface: Engine.tune, and the simulator feeding Observations like the live control loop."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pytest

from yarnctl.engine import Engine
from yarnctl.model import ZERO, Assignment, ClusterSnapshot, Decision, NodeId, Observation, Resources
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import parse_workload
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.hmrf import LongTermPolicy

MR = """
cluster: {nodes: 2, node: {memory_mb: 8192, vcores: 8}}
defaults: {am: {memory_mb: 1024, vcores: 1}}
jobs:
  - id: j1
    submit_s: 0
    type: mapreduce
    maps: {tasks: 30, resource: {memory_mb: 2048, vcores: 1}, duration: 12}
    reduces: {tasks: 2, resource: {memory_mb: 3072, vcores: 1}, duration: 7}
  - id: j2
    submit_s: 4
    type: mapreduce
    maps: {tasks: 10, resource: {memory_mb: 1024, vcores: 2}, duration: 9}
    reduces: {tasks: 1, resource: {memory_mb: 1024, vcores: 1}, duration: 3}
"""


class Recorder(PolicyBase):
    """FIFO that records every observation; its tuning value `cap` limits containers per heartbeat until a time."""

    name = "recorder"

    def __init__(self, cap_until_s: float = 0.0) -> None:
        self.fifo = make_policy("fifo")
        self.seen: list[Observation] = []
        self.cap_until_s = cap_until_s
        self.cap = 1000.0

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        d = self.fifo.decide(snap, node_id)
        if not d.assignments or self.cap >= 1000:
            return d
        a = d.assignments[0]
        return Decision((Assignment(a.app_id, a.priority, a.node_id, min(a.count, int(self.cap))),))

    def tune(self, obs: Observation) -> None:
        self.seen.append(obs)
        self.cap = 1.0 if obs.at_s < self.cap_until_s else 1000.0

    def tuning(self) -> Mapping[str, float]:
        return {"cap": self.cap}


def workload() -> object:
    return parse_workload(MR, "tuning.yaml", 0)


def test_a_plain_policy_is_never_tuned() -> None:
    engine = Engine(make_policy("fifo"))
    assert not engine.tunable
    assert engine.tune(Observation.build(0.0, [], [])) is False
    assert engine.tuning() == {} and engine.stats["tunes"] == 0


def test_a_failing_tune_is_logged_counted_and_changes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(Recorder):
        def tune(self, obs: Observation) -> None:
            raise RuntimeError("boom")

    engine = Engine(Broken())
    with caplog.at_level(logging.ERROR):
        assert engine.tune(Observation.build(1.0, [], [])) is False
    assert engine.stats["tune_errors"] == 1 and engine.tuning() == {"cap": 1000.0}
    assert "failed to tune" in caplog.text


def test_the_simulator_observes_every_interval_with_consistent_totals() -> None:
    policy = Recorder()
    sim = SimCluster(workload(), Engine(policy), tune_interval_s=5.0)  # type: ignore[arg-type]
    run = sim.run()
    times = [o.at_s for o in policy.seen]
    assert len(times) >= 5
    assert all(b - a >= 5.0 - 1e-9 for a, b in zip(times, times[1:]))
    for obs in policy.seen:
        assert obs.capacity.memory_mb == 2 * 8192 and obs.usage_measured
        assert sum((a.allocated for a in obs.apps.values()), ZERO) == obs.allocated
        assert obs.available_containers(Resources(1024, 1)) == sum(
            min(n.available.memory_mb // 1024, n.available.vcores) for n in obs.nodes.values())
        for c in obs.containers.values():
            assert c.app_id in obs.apps and c.node_id in obs.nodes
    # memorySeconds as the RM counts it: resource x (release or now - start), from the container records
    for obs in policy.seen:
        for app_id, usage in obs.apps.items():
            # every container is released by the end of the run, so the records cover them all
            expected = sum(r.memory_mb * (min(r.released_s, obs.at_s) - r.start_s)
                           for r in run.containers if r.job == app_id and r.start_s <= obs.at_s)
            assert usage.memory_seconds == pytest.approx(expected, abs=1.0), (app_id, obs.at_s)
    assert [t for t, _ in run.tuning] == [policy.seen[0].at_s]  # only the first value: cap never changed


def test_pending_demand_is_what_the_apps_still_ask_for() -> None:
    policy = Recorder()
    SimCluster(workload(), Engine(policy), tune_interval_s=1.0).run()  # type: ignore[arg-type]
    early = policy.seen[0]
    assert early.apps["j1"].pending_containers >= 1
    assert early.pending.memory_mb == sum(a.pending.memory_mb for a in early.apps.values())
    assert policy.seen[-1].pending.memory_mb <= early.pending.memory_mb + 10 * 1024 + 1024


def test_a_tuning_change_takes_effect_and_is_recorded() -> None:
    capped, plain = Recorder(cap_until_s=20.0), Recorder()
    r_capped = SimCluster(workload(), Engine(capped), tune_interval_s=5.0).run()  # type: ignore[arg-type]
    r_plain = SimCluster(workload(), Engine(plain), tune_interval_s=5.0).run()  # type: ignore[arg-type]
    assert [v["cap"] for _, v in r_capped.tuning] == [1.0, 1000.0]
    # the first tick is mid-interval (2.5 s), then every 5 s
    assert r_capped.tuning[0][0] == 2.5 and 20.0 <= r_capped.tuning[1][0] < 25.0
    assert r_capped.end_s > r_plain.end_s  # one container per heartbeat for 20 s is slower


def test_a_tunable_policy_that_never_changes_decides_like_the_plain_one() -> None:
    tuned = SimCluster(workload(), Engine(Recorder()), tune_interval_s=2.0).run()  # type: ignore[arg-type]
    plain = SimCluster(workload(), Engine(make_policy("fifo"))).run()
    assert [(j.id, j.finish_s) for j in tuned.jobs] == [(j.id, j.finish_s) for j in plain.jobs]


@pytest.mark.parametrize("name", ["af", "hmrf"])
def test_a_policy_that_reads_no_observation_gets_ticks_without_one(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """H-MRF's family is tunable only to report its accounting: its ticks build no Observation, and it still reports."""
    def refuse(self: SimCluster) -> Observation:
        raise AssertionError("built an observation nobody reads")

    monkeypatch.setattr(SimCluster, "observe", refuse)
    run = SimCluster(workload(), Engine(make_policy(name)), tune_interval_s=5.0).run()  # type: ignore[arg-type]
    assert not run.stuck and all(j.finish_s is not None for j in run.jobs)
    assert run.tuning and any(k.startswith("hmrf_accumulated_vcore_seconds") for k in run.tuning[0][1])


@pytest.mark.parametrize("name", ["af", "lt-drf"])
def test_skipping_the_observation_changes_nothing_the_run_records(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The family's tune is a no-op: fed an observation at every tick or none, its runs are the same."""
    def run() -> tuple[object, ...]:
        r = SimCluster(workload(), Engine(make_policy(name)), tune_interval_s=3.0).run()  # type: ignore[arg-type]
        return tuple(r.containers), tuple(r.jobs), tuple(r.tuning), r.end_s

    skipped = run()
    monkeypatch.setattr(LongTermPolicy, "observes", True)
    assert run() == skipped


def test_a_policy_that_reads_observations_gets_one_at_every_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[float] = []
    observe = SimCluster.observe

    def counted(self: SimCluster) -> Observation:
        built.append(self.k.now)
        return observe(self)

    monkeypatch.setattr(SimCluster, "observe", counted)
    engine = Engine(make_policy("dress"))
    SimCluster(workload(), engine, tune_interval_s=5.0).run()  # type: ignore[arg-type]
    assert len(built) == engine.stats["tunes"] >= 5
