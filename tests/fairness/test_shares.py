"""Share maths of [H-MRF]: Eq. 1, dominant/asset shares, Eq. 2-3, Alg. 1 line 23."""

import math

import pytest

from yarnctl.fairness.accounting import split_allocation
from yarnctl.fairness.shares import asset_share, dominant_share, nonsharing_allocation, share_vector
from yarnctl.fairness.sharing_degree import sharing_degree, sharing_degrees
from yarnctl.model import Resources

GB = 1024
R = Resources(100 * GB, 100)  # Example 1: 100 CPUs, 100 GB


def test_eq1_share_is_capacity_times_weight_over_total():
    assert share_vector(R, 1, 2) == (50 * GB, 50)
    assert share_vector(R, 20, 100) == (20 * GB, 20)  # Sec. 2: A contributes 20 of 100 nodes
    assert share_vector(R, 1, 0) == (0.0, 0.0)


@pytest.mark.parametrize("acc, dominant, asset", [
    ((50 * GB, 25), 0.5, 0.75),  # Example 1 under DRF: A <25 CPU, 50 GB>
    ((50 * GB, 50), 0.5, 1.0),  # B <50 CPU, 50 GB>
    ((56 * GB, 28), 0.56, 0.84),  # Example 1 under AF: A 28 tasks
    ((44 * GB, 44), 0.44, 0.88),  # B 44 tasks
], ids=["ex1-drf-A", "ex1-drf-B", "ex1-af-A", "ex1-af-B"])
def test_dominant_and_asset_shares(acc, dominant, asset):
    assert dominant_share(acc, R, 1) == pytest.approx(dominant)
    assert asset_share(acc, R, 1) == pytest.approx(asset)
    assert asset_share(acc, R, 2) == pytest.approx(asset / 2)  # twice the contribution, half the share


@pytest.mark.parametrize("demand, expected", [
    ((120 * GB, 60), (50 * GB, 25)),  # Example 4 t2, A's 60 tasks <1, 2 GB>: 25 tasks fit in <50, 50>
    ((40 * GB, 40), (40 * GB, 40)),  # B's 40 tasks fit whole
    ((120 * GB, 30), (50 * GB, 12.5)),  # Example 3 t1, A <1 CPU, 4 GB> x 30
    ((0, 0), (0, 0)),
], ids=["ex4-t2-A", "ex4-t2-B", "ex3-t1-A", "nothing"])
def test_nonsharing_allocation_scales_demand_into_the_share(demand, expected):
    assert nonsharing_allocation(demand, (50 * GB, 50)) == pytest.approx(expected)


def test_fig5_sharing_degrees_from_the_integrals():
    # Example 4 / Fig. 5, slot units: A ran 15 then 40 tasks <1, 2>, alone it would run 15 then 25
    used_a, fair_a = (30 + 80, 15 + 40), (30 + 50, 15 + 25)
    assert sharing_degrees(used_a, fair_a) == pytest.approx((1.375, 1.375))
    assert sharing_degree(used_a, fair_a) == pytest.approx(1.375)
    assert sharing_degree((70, 70), (50, 50)) == pytest.approx(1.4)  # β_B(t1)
    # Eq. 3 takes the smallest resource: a surplus of one cannot hide a loss in the other
    assert sharing_degree((100, 10), (50, 20)) == 0.5


def test_sharing_degree_without_demand_is_neutral():
    assert sharing_degree((0, 0), (0, 0)) == 1.0
    assert sharing_degrees((5, 0), (0, 0)) == (math.inf, math.inf)


def test_alg1_line23_splits_allocation_into_own_share_and_borrowed():
    own, borrowed = split_allocation((70, 30), (50, 50))
    assert own == (50, 30) and borrowed == (20, 0)
    assert tuple(a + b for a, b in zip(own, borrowed)) == (70, 30)
