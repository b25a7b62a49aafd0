"""FFD-DP: the fitness of Eq. 1 of [HaSTE] and the packing it produces."""

import pytest
from snapshots import GB, snapshot

from yarnctl.model import App, Ask, Resources
from yarnctl.policies import make_policy
from yarnctl.policies.ffd_dp import FfdDpConfig, fitness


def test_sec_3_4_1_example_picks_three_type_ii_and_one_type_i():
    # node residual <10 GB, 6 cores>; type I <1 GB, 3 cores>, type II <3 GB, 1 core>
    snap = snapshot([("n1", Resources(10 * 1024, 6))], [App("I", submit_s=0), App("II", submit_s=1)],
                    [Ask("I", 20, Resources(1024, 3), 10), Ask("II", 20, Resources(3072, 1), 10)])
    d = make_policy("ffd-dp").decide(snap, "n1")
    assert {a.app_id: a.count for a in d.assignments} == {"I": 1, "II": 3}


@pytest.mark.parametrize(
    "task, residual, expected",
    [
        (Resources(1024, 3), Resources(10 * 1024, 6), 10 + 18),  # paper: type I first score 28
        (Resources(3072, 1), Resources(10 * 1024, 6), 30 + 6),   # type II: 36
        (Resources(3072, 1), Resources(7 * 1024, 5), 21 + 5),
    ],
    ids=["type-i-first-round", "type-ii-first-round", "type-ii-second-round"],
)
def test_fitness_is_the_weighted_dot_product(task, residual, expected):
    assert fitness(task, residual, FfdDpConfig()) == pytest.approx(expected)


def test_weights_change_the_choice():
    snap = snapshot([("n1", Resources(10 * 1024, 6))], [App("I", submit_s=0), App("II", submit_s=1)],
                    [Ask("I", 20, Resources(1024, 3), 1), Ask("II", 20, Resources(3072, 1), 1)])
    cpu_heavy = make_policy("ffd-dp", {"memory_weight": 0.1, "vcores_weight": 1.0})
    first = cpu_heavy.decide(snap, "n1").assignments[0]
    assert first.app_id == "I"


def test_ignores_priority_order_when_a_later_priority_fits_better():
    snap = snapshot([("n1", GB(4, 8))], [App("a")], [Ask("a", 10, GB(1), 1), Ask("a", 20, GB(3), 1)])
    d = make_policy("ffd-dp").decide(snap, "n1")
    assert {(a.priority, a.count) for a in d.assignments} == {(10, 1), (20, 1)}
