"""DRESS: Alg. 3 branches, categories, pool limits and borrowing through δ, and δ moving in the simulator."""

from __future__ import annotations

import logging

import pytest
from snapshots import GB, running, snapshot

from yarnctl.engine import Engine, validate
from yarnctl.errors import ConfigError
from yarnctl.model import App, AppUsage, NodeLoad, Observation, Ask, Resources
from yarnctl.policies import make_policy
from yarnctl.policies.dress import Category, Dress, DressConfig, category_of, reserve_ratio
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import load_workload

NODES = [("n1", GB(10, 10)), ("n2", GB(10, 10))]  # 20 one-GB containers: each is 5% of the cluster


@pytest.mark.parametrize("delta, ac1, ac2, f1, f2, sd, ld, want", [
    # lines 7-8: SD covered (A_c1 + F_1 = 0.3 >= P_1 = 0.1): δ drops by the surplus 0.2
    (0.5, 0.2, 0.0, 0.1, 0.0, [0.1], [0.4], 0.3),
    # lines 7-8 with nothing pending and nothing free in SD: δ unchanged
    (0.1, 0.0, 0.0, 0.0, 0.0, [], [0.5], 0.1),
    # lines 10-11: SD short (0 < 0.2), LD has a surplus 0.3 + 0.1 − 0.1 = 0.3: δ grows by it
    (0.1, 0.0, 0.3, 0.0, 0.1, [0.2], [0.1], 0.4),
    # lines 13-24: both short; SD 0.04 fits A_c1 = 0.05, LD 0.5 does not fit 0.1, the leftovers
    # 0.01 + 0.1 take SD's 0.06 (δ += 0.06) but not its 0.2
    (0.1, 0.05, 0.1, 0.0, 0.0, [0.04, 0.06, 0.2], [0.5], 0.16),
    # lines 13-24: LD's small job takes LD's leftover first, so nothing moves to SD
    (0.1, 0.0, 0.1, 0.0, 0.0, [0.06], [0.08, 0.5], 0.1),
    # lines 13-24 counting expected releases F_2 as leftover (line 14, read as A_c2 + F_2)
    (0.0, 0.0, 0.0, 0.0, 0.05, [0.03, 0.03], [0.4], 0.03),
    # bounded to [0, 1]
    (0.05, 0.3, 0.0, 0.5, 0.0, [], [0.4], 0.0),
    (0.9, 0.0, 0.6, 0.0, 0.0, [0.1], [], 1.0),
], ids=["alg3-l7-surplus", "alg3-l7-nothing", "alg3-l10-ld-surplus", "alg3-l13-leftover-to-sd",
        "alg3-l18-ld-first", "alg3-l14-releases", "bound-0", "bound-1"])
def test_alg3_reserve_ratio(delta, ac1, ac2, f1, f2, sd, ld, want):
    assert reserve_ratio(delta, ac1, ac2, f1, f2, sd, ld) == pytest.approx(want)


@pytest.mark.parametrize("request_, cat", [
    (Resources(8192 * 9, 9), Category.SD),    # Sec. V-B1: 9 of 100 containers is "less than 10"
    (Resources(8192 * 10, 10), Category.SD),  # exactly θ × A_c is still small (Sec. IV-C: "larger than")
    (Resources(8192 * 12, 12), Category.LD),
    (Resources(8192, 11), Category.LD),       # dominant share: vcores decide
], ids=["sec5b1-9-containers", "theta-exact", "12-containers", "dominant-vcores"])
def test_category_is_the_request_against_theta_of_the_cluster(request_, cat):
    assert category_of(request_, Resources(819200, 100), 0.10) is cat


def test_category_memory_measure_ignores_vcores():
    assert category_of(Resources(8192, 11), Resources(819200, 100), 0.10, "memory") is Category.SD


def test_category_fixed_at_first_task_request_with_am_counted():
    p = Dress()
    apps = [App("big", submit_s=0), App("small", submit_s=1)]
    am_only = snapshot(NODES, apps, [Ask("big", 0, GB(1), 1), Ask("small", 0, GB(1), 1)])
    p.observe(am_only)
    assert p.categories == {}  # only AMs asked: demand unknown, admitted as SD
    assert p.category("big") is Category.SD
    # the AM runs (5%) and asks for 2 maps: 15% > θ; small asks for 1 map with its AM: 10%
    later = snapshot(NODES, apps, [Ask("big", 20, GB(1), 2), Ask("small", 20, GB(1), 1)],
                     [running("am1", "big", "n1", GB(1), 0, True), running("am2", "small", "n1", GB(1), 0, True)])
    p.observe(later)
    assert p.categories == {"big": Category.LD, "small": Category.SD}
    # fixed: a smaller later request does not move it
    p.observe(snapshot(NODES, apps, [Ask("big", 20, GB(1), 1)], [running("am1", "big", "n1", GB(1), 0, True)]))
    assert p.category("big") is Category.LD
    p.observe(snapshot(NODES, [App("small", submit_s=1)]))
    assert "big" not in p.categories  # forgotten once gone


def classified(delta: float, cats: dict[str, Category], **cfg: object) -> Dress:
    p = Dress(DressConfig(initial_reserve=delta, multiple_off_switch=True, **cfg))  # type: ignore[arg-type]
    p.categories.update(cats)
    return p


def test_pools_limit_sd_to_delta_and_ld_to_one_minus_delta():
    apps = [App("ld", submit_s=0), App("sd", submit_s=1)]
    reqs = [Ask("ld", 20, GB(1), 30), Ask("sd", 20, GB(1), 30)]
    snap = snapshot(NODES, apps, reqs)
    p = classified(0.1, {"ld": Category.LD, "sd": Category.SD})
    d = p.decide(snap, "n1")
    assert {a.app_id: a.count for a in d.assignments} == {"sd": 2, "ld": 8}  # SD first, 10% = 2 containers
    assert not validate(snap, d, "n1").rejected
    # LD already holds 17 of its 18 (90%): one more, and the free rest of the node stays reserved
    held = [running(f"c{i}", "ld", "n2" if i < 10 else "n1", GB(1)) for i in range(17)]
    snap = snapshot(NODES, apps, [Ask("ld", 20, GB(1), 30)], held)
    d = classified(0.1, {"ld": Category.LD, "sd": Category.SD}).decide(snap, "n1")
    assert [(a.app_id, a.count) for a in d.assignments] == [("ld", 1)]


def test_unused_pool_share_is_lent_only_through_delta():
    apps = [App("ld", submit_s=0)]
    snap = snapshot(NODES, apps, [Ask("ld", 20, GB(1), 30)])
    p = classified(0.5, {"ld": Category.LD})
    assert sum(a.count for a in p.decide(snap, "n1").assignments) == 10  # 50%: SD's half stays free
    # the next tick: SD has no demand, its free 50% goes to LD (Alg. 3 lines 7-8)
    obs = Observation.build(5.0, [NodeLoad("n1", GB(10, 10), GB(10, 10)), NodeLoad("n2", GB(10, 10), GB(0, 0))],
                            [AppUsage("ld", "default", "u", GB(10, 10), GB(20, 20), 20, 0, 0)])
    p.tune(obs)
    assert p.delta == pytest.approx(0.0)
    assert sum(a.count for a in p.decide(snap, "n2").assignments) == 10


def test_am_of_unclassified_job_goes_through_sd_pool_and_one_container_per_heartbeat():
    apps = [App("ld", submit_s=0), App("new", submit_s=5)]
    reqs = [Ask("ld", 20, GB(1), 30), Ask("new", 0, GB(1), 1)]
    p = Dress()  # δ = 10%, Capacity-like one off-switch container per heartbeat
    p.categories["ld"] = Category.LD
    d = p.decide(snapshot(NODES, apps, reqs), "n1")
    assert [(a.app_id, a.priority, a.count) for a in d.assignments] == [("new", 0, 1)]


def test_tune_logs_change_and_reports_gauges(caplog):
    p = Dress()
    p.categories.update({"ld": Category.LD, "sd": Category.SD})
    obs = Observation.build(10.0, [NodeLoad("n1", GB(10, 10), GB(10, 10)), NodeLoad("n2", GB(10, 10), GB(10, 10))],
                            [AppUsage("ld", "default", "u", GB(18, 18), GB(4, 4), 4, 0, 0),
                             AppUsage("sd", "default", "u", GB(2, 2), GB(1, 1), 1, 0, 0)])
    with caplog.at_level(logging.INFO, logger="yarnctl.policies.dress"):
        p.tune(obs)
    # full cluster, both short, no releases: nothing moves
    assert p.tuning() == {"dress_reserve_ratio": pytest.approx(0.1),
                          'dress_pending_bytes{category="sd"}': 1024.0 * 2**20,
                          'dress_pending_bytes{category="ld"}': 4096.0 * 2**20}
    assert not caplog.records
    free = Observation.build(15.0, [NodeLoad("n1", GB(10, 10), GB(10, 10)), NodeLoad("n2", GB(10, 10), GB(6, 6))],
                             [AppUsage("ld", "default", "u", GB(14, 14), GB(0, 0), 0, 0, 0),
                              AppUsage("sd", "default", "u", GB(2, 2), GB(1, 1), 1, 0, 0)])
    with caplog.at_level(logging.INFO, logger="yarnctl.policies.dress"):
        p.tune(free)
    # SD short (0 free in its 10%), LD has 20% free and nothing pending: δ grows by 0.2 (lines 10-11)
    assert p.delta == pytest.approx(0.3)
    assert "δ 0.1000 -> 0.3000" in caplog.text and "P1 0.0500" in caplog.text


def test_config_errors_name_the_field():
    with pytest.raises(ConfigError, match="order"):
        make_policy("dress", {"order": "random"})
    assert make_policy("dress").config == DressConfig()  # type: ignore[attr-defined]


def test_smallest_order_serves_the_smaller_pending_job_first():
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    reqs = [Ask("a", 20, GB(1), 3), Ask("b", 20, GB(1), 1)]
    snap = snapshot(NODES, apps, reqs)
    p = Dress(DressConfig(order="smallest"))
    p.categories.update({"a": Category.SD, "b": Category.SD})
    assert [a.app_id for a in p.decide(snap, "n1").assignments] == ["b"]
    p = Dress()
    p.categories.update({"a": Category.SD, "b": Category.SD})
    assert [a.app_id for a in p.decide(snap, "n1").assignments] == ["a"]


def test_sim_delta_moves_and_categories_match_the_paper_fig9():
    # Sec. V-B2: jobs 4, 5, 6, 8, 10, 11 of the 20 MapReduce jobs are the small ones
    w = load_workload("dress-mr20")
    policy = Dress()
    seen: dict[str, Category] = {}

    class Categories:
        def observe(self, snap: object) -> None:
            seen.update(policy.categories)

    run = SimCluster(w, Engine(policy, [Categories()])).run()
    deltas = [v["dress_reserve_ratio"] for _, v in run.tuning]
    assert len(set(round(d, 6) for d in deltas)) > 5
    assert all(0.0 <= d <= 1.0 for d in deltas)
    assert sorted(a for a, c in seen.items() if c is Category.SD) == ["j04", "j05", "j06", "j08", "j10", "j11"]
    assert not run.stuck and run.stats.get("engine_rejections", 0) == 0 and run.stats.get("engine_policy_errors", 0) == 0


def test_a_refusal_is_remembered_for_nodes_with_no_more_room_at_the_same_state(monkeypatch):
    """One container per heartbeat: a node no roomier than one refused at the same store state is refused unwalked."""
    apps = [App("ld", submit_s=0), App("sd", submit_s=1)]
    reqs = [Ask("ld", 20, GB(1), 30), Ask("sd", 20, GB(4), 3)]
    nodes = [("n1", GB(10, 10)), ("n2", GB(10, 10)), ("n3", GB(10, 10))]
    held = [running("c1", "ld", "n1", GB(8, 8)), running("c2", "ld", "n2", GB(9, 9))]
    snap = snapshot(nodes, apps, reqs, held)
    p = Dress(DressConfig(initial_reserve=0.5))  # LD holds 17 of 30 GB: over its half, its ask waits
    p.categories.update({"ld": Category.LD, "sd": Category.SD})
    walks = []
    monkeypatch.setattr(p, "_one", lambda *a, f=p._one: walks.append(a[1]) or f(*a))
    assert not p.decide(snap, "n1").assignments  # 2 GB free: SD's 4 GB does not fit, LD's pool is full
    assert not p.decide(snap, "n2").assignments and walks == ["n1"]  # 1 GB free: remembered
    assert [(a.app_id, a.count) for a in p.decide(snap, "n3").assignments] == [("sd", 1)]  # roomier: walked
    assert walks == ["n1", "n3"]
    p.delta = 0.3  # LD's pool grows to 70%: the same state no longer means the same answer
    assert [(a.app_id, a.count) for a in p.decide(snap, "n2").assignments] == [("ld", 1)]
    other = snapshot(nodes, apps, reqs, held)  # another store at the same version number
    p.delta = 0.5
    assert not p.decide(other, "n1").assignments and walks[-1] == "n1"
    assert not p.decide(other, "n2").assignments and walks[-1] == "n1"
    p.observe(other)  # the categories may move at a tick: walked again
    assert not p.decide(other, "n2").assignments and walks[-1] == "n2"
