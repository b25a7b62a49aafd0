"""ITA (001_cab13f737c1b28a6.txt Sec. 3.3, Alg. 1): the knapsack DP that packs one node."""

import pytest
from snapshots import GB

from yarnctl.model import Resources
from yarnctl.policies.ffd_dp import FfdDpConfig
from yarnctl.policies.ita import grid_work, initial_assignment
from yarnctl.policies.urgency import weighted_size

UNIT = GB(1, 1)


def value(r: Resources) -> float:
    return weighted_size(r, FfdDpConfig())


@pytest.mark.parametrize(
    "tasks, residual, expected",
    [
        # Sec. 3.4.1's node and task types: three type II and one type I use all of <10 GB, 6 cores>
        ([(GB(1, 3), 50), (GB(3, 1), 50)], GB(10, 6), [1, 3]),
        # Table 2's map sizes on an empty <8 GB, 8 cores> node: four 2-core maps (value 12) beat the
        # 5-core + 3-core pair FFD-DP's greedy picks (value 10)
        ([(GB(1, 2), 52), (GB(1, 3), 52), (GB(1, 4), 52), (GB(1, 5), 52)], GB(8, 8), [4, 0, 0, 0]),
        # Alg. 1 line 8: a size is used no more often than there are tasks of it
        ([(GB(1, 2), 2), (GB(1, 3), 52)], GB(8, 8), [1, 2]),
        # HaSTE Fig. 1's node: four 1 GB tasks use more vcores than one 3 GB + one 1 GB
        ([(GB(1, 1), 4), (GB(3, 1), 4)], GB(4, 8), [4, 0]),
        # nothing fits
        ([(GB(16, 1), 3)], GB(8, 8), [0]),
    ],
    ids=["sec-3.4.1-example", "table-2-maps", "counts-bound-each-size", "fig-1-node", "nothing-fits"],
)
def test_alg_1_maximises_the_weighted_resources_placed(tasks, residual, expected):
    assert initial_assignment(tasks, residual, UNIT, value) == expected


def test_alg_1_ties_go_to_the_cell_scanned_first():
    # on <4 GB, 4 cores> two <2 GB, 1 core>, two <1 GB, 2 cores> or one of each are worth 6;
    # line 18's argmax keeps the first cell reaching it, the one with the least memory
    assert initial_assignment([(GB(2, 1), 9), (GB(1, 2), 9)], GB(4, 4), UNIT, value) == [0, 2]


def test_alg_1_rounds_odd_sizes_up_to_the_grid():
    # 1.5 GB counts as 2 units, so only two fit in 4 GB, never three
    assert initial_assignment([(GB(1.5, 1), 9)], GB(4, 8), UNIT, value) == [2]


def test_grid_work_is_cells_times_sizes():
    assert grid_work(3, GB(8, 8), UNIT) == 9 * 9 * 3
    assert grid_work(3, GB(32, 16), GB(2, 1)) == 17 * 17 * 3
