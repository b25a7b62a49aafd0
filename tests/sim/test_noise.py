"""Model noise: the simulator's arbitrary choices (heartbeat phases, simultaneous events' order) drawn again."""

from __future__ import annotations

import pytest

from yarnctl.sim.noise import NoiseReport, Spread, model_noise, redrawn
from yarnctl.sim.runner import simulate
from yarnctl.sim.workload import load_workload


def test_redrawn_phases_are_fractions_of_the_interval_one_per_node_and_the_same_for_a_seed() -> None:
    w = load_workload("haste-simple")
    a, b, c = redrawn(w, 1), redrawn(w, 1), redrawn(w, 2)
    assert len(a.cluster.phases) == len(w.cluster.nodes) and all(0 <= x < 1 for x in a.cluster.phases)
    assert a.cluster.phases == b.cluster.phases != c.cluster.phases
    assert a.jobs == w.jobs and a.cluster.nodes == w.cluster.nodes and not w.cluster.phases


@pytest.mark.parametrize("workload", ["haste-simple", "dress-mr20", "opera-mr6"])
def test_every_drawn_order_runs_every_job_to_its_end(workload: str) -> None:
    w = load_workload(workload)
    for seed in (1, 2):
        for result, run in simulate(redrawn(w, seed), ["fifo", "fair", "capacity"], order_seed=seed):
            assert (result.unfinished, result.failed) == (0, 0), (workload, seed, result.policy)
            assert run.stats["tasks"] == w.tasks


def test_the_report_starts_with_the_run_it_is_given_and_counts_the_ranking() -> None:
    w = load_workload("haste-simple")
    base = [r for r, _ in simulate(w, ["fifo", "fair"])]
    noise = model_noise(w, base, 3)
    assert noise.orders == 4
    for r, spread in zip(base, noise.spreads):
        assert spread.policy == r.policy and spread.values["makespan_s"][0] == r.makespan_s
        low, high = spread.range("avg_completion_s") or (0.0, 0.0)
        assert low <= r.avg_completion_s <= high  # type: ignore[operator]
    # a seed's run is the same whenever it is made: the report is reproducible
    again = model_noise(w, base, 3)
    assert [s.values for s in again.spreads] == [s.values for s in noise.spreads]
    assert noise.ranking(0) == ("fifo", "fair")  # haste-simple: FIFO's 272 s against Fair's 520 s


def test_a_run_that_leaves_jobs_unfinished_is_counted() -> None:
    w = load_workload("haste-simple")
    base = [r for r, _ in simulate(w, ["fifo"], max_time_s=200.0)]
    noise = model_noise(w, base, 2, max_time_s=200.0)
    assert base[0].unfinished > 0 and noise.spreads[0].incomplete == 3
    assert noise.to_json()["policies"]["fifo"]["incomplete_runs"] == 3


def test_ranking_counts_by_hand() -> None:
    def spread(policy: str, completions: tuple[float | None, ...]) -> Spread:
        return Spread(policy, {"avg_completion_s": completions, "makespan_s": completions,
                               "avg_wait_s": completions})

    noise = NoiseReport(4, (spread("a", (10.0, 12.0, 9.0, 11.0)), spread("b", (11.0, 11.5, 9.5, None)),
                            spread("c", (20.0, 5.0, 21.0, 22.0))))
    assert [noise.ranking(k) for k in range(4)] == [("a", "b", "c"), ("c", "b", "a"), ("a", "b", "c"),
                                                    ("a", "c", "b")]  # an unknown average ranks last
    assert noise.ranking_held() == 2 and noise.ranking_held("makespan_s") == 2
    assert (noise.ahead("a", "b"), noise.ahead("b", "c"), noise.ahead("c", "a")) == ((2, 0), (2, 0), (1, 0))
    tied = NoiseReport(2, (spread("a", (1.0, 2.0)), spread("b", (1.0, 3.0))))
    assert tied.ahead("a", "b") == (1, 1) and tied.ahead("b", "a") == (0, 1)
    assert noise.spreads[1].range("avg_completion_s") is None and noise.spreads[0].range("makespan_s") == (9.0, 12.0)
