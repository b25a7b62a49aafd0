"""DRF: dominant shares decide, secondary shares break ties (DominantResourceFairnessPolicy)."""

import pytest
from snapshots import GB, running, snapshot

from yarnctl.fairness.comparators import drf_key
from yarnctl.model import ZERO, App, Ask, Resources
from yarnctl.policies import make_policy

CLUSTER = Resources(100 * 1024, 100)  # [H-MRF] Example 1: <100 CPU, 100 GB>


def _key(usage, name):
    return drf_key(usage, usage, ZERO, 1.0, 0.0, name, cluster=CLUSTER)


@pytest.mark.parametrize(
    "a_tasks, b_tasks, next_",
    [
        (0, 0, "A"),    # tie on everything: name
        (1, 1, "B"),    # A <1 CPU, 2 GB> dominant 2%, B <1 CPU, 1 GB> dominant 1%
        (25, 49, "B"),  # A 50%, B 49%
        (25, 50, "A"),  # A (0.5, 0.25) vs B (0.5, 0.5): equal dominant shares, A's second is lower
    ],
    ids=["empty-tie", "ex1-start", "ex1-b-behind", "ex1-equal-dominant-second-share"],
)
def test_drf_key_example1(a_tasks, b_tasks, next_):
    a = Resources(2048 * a_tasks, a_tasks)
    b = Resources(1024 * b_tasks, b_tasks)
    assert ("A" if _key(a, "A") < _key(b, "B") else "B") == next_


def test_drf_policy_picks_the_lower_dominant_share():
    apps = [App("A", submit_s=0), App("B", submit_s=0)]
    snap = snapshot([("n1", Resources(100 * 1024, 100))], apps,
                    [Ask("A", 20, GB(2), 100), Ask("B", 20, GB(1), 100)],
                    [running(f"a{i}", "A", "n1", GB(2)) for i in range(10)]
                    + [running(f"b{i}", "B", "n1", GB(1)) for i in range(15)])
    # A holds 20% memory, B 15%: B goes next
    assert make_policy("drf").decide(snap, "n1").assignments[0].app_id == "B"


def test_weights_divide_shares():
    k_heavy = drf_key(Resources(40 * 1024, 40), ZERO, ZERO, 2.0, 0.0, "x", cluster=CLUSTER)
    k_light = drf_key(Resources(30 * 1024, 30), ZERO, ZERO, 1.0, 0.0, "y", cluster=CLUSTER)
    assert k_heavy < k_light  # 0.4 / 2 = 0.2 < 0.3
