"""ITA ([HaSTE] Sec. 3.3, Alg. 1): the knapsack DP that packs one node."""

import random
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from snapshots import GB

from yarnctl.model import Resources
from yarnctl.policies.ffd_dp import FfdDpConfig
from yarnctl.policies.ita import _pack, cache_clear, grid_work, initial_assignment
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


# ---------------------------------------------------------------- the literal Alg. 1 as reference

def alg_1(tasks, residual, unit, value):
    """Lines 4-18 of Alg. 1 as written: OPT and the list L in every cell, every size tried in every cell.

    The version ita.py replaced (too slow for a 1 ms heartbeat); kept to check that one returns the same.
    """
    um, uv = max(unit.memory_mb, 1), max(unit.vcores, 1)
    items = [(-(-r.memory_mb // um), -(-r.vcores // uv), value(r), n) for r, n in tasks]
    rows, cols = residual.memory_mb // um + 1, residual.vcores // uv + 1
    opt = [[(0.0, ())] * cols for _ in range(rows)]
    best = (0.0, ())
    for a in range(rows):
        for b in range(cols):
            for t, (da, db, v, n) in enumerate(items):
                if da <= a and db <= b:
                    prev_value, prev_list = opt[a - da][b - db]
                    if prev_value + v > opt[a][b][0] and prev_list.count(t) < n:  # lines 8, 14-15
                        opt[a][b] = (prev_value + v, prev_list + (t,))
            if opt[a][b][0] > best[0]:  # line 18
                best = opt[a][b]
    return [best[1].count(t) for t in range(len(items))]


WEIGHTS = [0.0, 0.1, 0.25, 1 / 3, 0.5, 1.0, 1.7, 3.0]  # fractions whose sums round differently by order


@st.composite
def alg_1_inputs(draw):
    unit = Resources(draw(st.sampled_from([512, 1024, 1536])), draw(st.sampled_from([1, 2])))
    residual = Resources(draw(st.integers(0, 16 * 1024)), draw(st.integers(0, 12)))
    size = st.builds(Resources, st.integers(0, 32).map(lambda k: k * 256), st.integers(0, 6))
    # small counts bind (line 8), large ones never do; a size may repeat
    tasks = draw(st.lists(st.tuples(size, st.one_of(st.integers(0, 6), st.integers(7, 500))), min_size=1, max_size=8))
    w = draw(st.tuples(st.sampled_from(WEIGHTS), st.sampled_from(WEIGHTS)).filter(lambda w: w[0] + w[1] > 0))
    return tasks, residual, unit, FfdDpConfig(*w)


@settings(max_examples=400)
@given(case=alg_1_inputs())
def test_alg_1_computed_faster_gives_the_literal_result(case):
    tasks, residual, unit, w = case
    fn = partial(weighted_size, w=w)
    assert initial_assignment(tasks, residual, unit, fn) == alg_1(tasks, residual, unit, fn)


def test_alg_1_on_the_benchmark_node_and_its_shuffles():
    # bench.py's empty node: <32 GB, 16 cores>, all 16 sizes of <1-4 GB, 1-4 cores>, in many orders and counts
    rng = random.Random(7)
    sizes = [GB(m, v) for m in (1, 2, 3, 4) for v in (1, 2, 3, 4)]
    for _ in range(20):
        rng.shuffle(sizes)
        tasks = [(s, rng.choice([2, 5, 9, 400])) for s in sizes[:rng.randint(1, 16)]]
        w = FfdDpConfig(rng.choice(WEIGHTS[1:]), rng.choice(WEIGHTS[1:]))
        fn = partial(weighted_size, w=w)
        cache_clear()
        assert initial_assignment(tasks, GB(32, 16), UNIT, fn) == alg_1(tasks, GB(32, 16), UNIT, fn)


def test_counts_above_what_fits_give_the_same_cached_answer():
    # 100 or 1,000 pending of a size: at most 8 of <1 GB, 2 cores> fit on <8 GB, 8 cores> either way
    tasks = [(GB(1, 2), 100), (GB(1, 3), 100)]
    cache_clear()
    first = initial_assignment(tasks, GB(8, 8), UNIT, value)
    assert initial_assignment([(GB(1, 2), 1000), (GB(1, 3), 5)], GB(8, 8), UNIT, value) == first == [4, 0]
    assert _pack.cache_info().hits == 1
