"""Usage feedback: node resizes from Eq. 5-6 within [allocated, max_overcommit x AR], filled by the ordering policy."""

from __future__ import annotations

import pytest
from snapshots import GB, running, snapshot

from yarnctl.engine import Engine, validate
from yarnctl.errors import ConfigError
from yarnctl.estimation.feedback import Usage
from yarnctl.model import App, ContainerLoad, NodeLoad, NodeResize, Observation, Ask, Resources
from yarnctl.policies import make_policy
from yarnctl.policies.feedback import Feedback, FeedbackConfig, resized
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import load_workload

NODES = [("n1", GB(8, 8)), ("n2", GB(8, 8))]
APPS = [App("a1", submit_s=0.0), App("a2", submit_s=1.0)]
FULL = [running(f"c{i}", "a1", "n1", GB(2, 1)) for i in range(4)]  # n1 fully reserved: 8 GB / 4 vcores
ASK = [Ask("a2", 20, GB(2, 1), 10)]


@pytest.mark.parametrize("allocated, avail, ceiling, want", [
    (Resources(8192, 4), Usage(3584, 5.5), Resources(16384, 16), Resources(11776, 9)),  # rounded down
    (Resources(8192, 4), Usage(-500, -1), Resources(16384, 16), Resources(8192, 4)),  # never below allocated
    (Resources(8192, 4), Usage(20000, 30), Resources(16384, 16), Resources(16384, 16)),  # never above the cap
    (Resources(20000, 20), Usage(100, 1), Resources(16384, 16), Resources(20000, 20)),  # allocated wins
], ids=["room", "negative", "ceiling", "over-ceiling-keeps-allocated"])
def test_resized(allocated, avail, ceiling, want):
    assert resized(allocated, avail, ceiling) == want


def obs(snap, loads):
    nodes = [NodeLoad(n.id, n.capacity, n.allocated) for n in snap.nodes.values()]
    cl = [ContainerLoad(cid, app, node, mem, cpu) for cid, app, node, mem, cpu in loads]
    return Observation.build(snap.now_s, nodes, [], cl, usage_measured=True, snapshot=snap)


def idle_loads(containers, mem=256.0, cpu=0.25):
    return [(c.id, c.app_id, c.node_id, mem, cpu) for c in containers]


def test_no_feedback_yet_is_the_reservation_model():
    snap = snapshot(NODES, APPS, ASK, FULL)
    p = Feedback()
    full = p.decide(snap, "n1")  # RU = allocated: no room on the full node, only the sliver that keeps it asked
    assert full.containers() == 0 and full.resizes == (NodeResize("n1", Resources(8192 + 1024, 8)),)
    d = p.decide(snap, "n2")
    # AR = 8 GB: four 2 GB containers, as fifo; the offer only adds the sliver above them
    assert d.containers() == 4 and d.resizes == (NodeResize("n2", Resources(8192 + 1024, 8)),)


def test_low_usage_rescales_the_node_and_fills_it():
    snap = snapshot(NODES, APPS, ASK, FULL)
    p = Feedback(FeedbackConfig(alpha=0.5))
    p.tune(obs(snap, idle_loads(FULL)))
    # n1: Eq. 2 gives 8192 / 4, Eq. 1 with ACU 1024 / 1 gives 4608 / 2.5; Eq. 5-6: min(8192 − 1024, 8192 − 4608)
    # = 3584, min(8 − 1, 8 − 2.5) = 5.5 -> capacity 8192 + 3584 = 11776, 4 + 5 = 9
    d = p.decide(snap, "n1")
    assert d.resizes == (NodeResize("n1", Resources(11776, 9)),)
    assert d.containers() == 1  # 3584 MB of room: one 2 GB container
    v = validate(snap, d, "n1")
    assert v.rejected == () and v.accepted == d


def test_resize_capped_by_max_overcommit():
    snap = snapshot(NODES, APPS, ASK, FULL)
    p = Feedback(FeedbackConfig(alpha=1.0, max_overcommit=1.5))
    p.tune(obs(snap, idle_loads(FULL, 0.0, 0.0)))  # α = 1, nothing used: the node looks empty
    d = p.decide(snap, "n1")
    # the policy fills 1.5 x AR (12 GB, not 8 GB + 8 GB); the offer adds one minimum allocation above what the node
    # then holds (8 GB + two 2 GB containers), so the shim keeps asking about it
    assert d.resizes == (NodeResize("n1", Resources(12288 + 1024, 12)),)
    assert d.containers() == 2
    assert validate(snap, d, "n1").rejected == ()


def test_spike_shrinks_to_allocated_never_below():
    snap = snapshot(NODES, APPS, ASK, FULL)
    p = Feedback()
    p.tune(obs(snap, idle_loads(FULL, 3000.0, 2.0)))  # 12000 MB used of 8 GB allowance: Eq. 3 and Eq. 5 < 0
    d = p.decide(snap, "n1")
    # the paper scales the node down (Sec. VI-A): the estimate leaves no room, so nothing is assigned; the
    # offer is the allocation (8 GB / 4 vcores) plus one minimum allocation: 9 GB / 5 vcores
    assert d.resizes == (NodeResize("n1", Resources(9216, 5)),) and d.containers() == 0
    assert validate(snap, d, "n1").rejected == ()


def test_physical_capacity_and_allowance_are_remembered():
    snap = snapshot(NODES, APPS, ASK, FULL)
    p = Feedback(FeedbackConfig(alpha=0.5, node_capacity=Resources(10240, 0)))
    p.tune(obs(snap, idle_loads(FULL)))
    # NC 10 GB / (8 vcores, the allowance's): min(8192 − 1024, 10240 − 4608) = 5632; vcores as before
    d = p.decide(snap, "n1")
    assert d.resizes == (NodeResize("n1", Resources(8192 + 5632, 9)),)
    # the next heartbeat sees the resized capacity, registered at 8 GB: AR stays 8 GB, the answer does not drift
    resized_snap = snapshot([("n1", Resources(13824, 9), GB(8, 8)), ("n2", GB(8, 8))], APPS, ASK, FULL)
    assert p.allowance(resized_snap.nodes["n1"]) == GB(8, 8)
    assert p.capacity_for(resized_snap, resized_snap.nodes["n1"]) == Resources(13824, 9)
    # a source that does not know the registered size (the RM REST API) keeps the AR last heard
    rest = snapshot([("n1", Resources(13824, 9)), ("n2", GB(8, 8))], APPS, ASK, FULL)
    assert p.allowance(rest.nodes["n1"]) == GB(8, 8)
    # an admin's change reaches the shim's registered size: a new allowance
    other = snapshot([("n1", Resources(13824, 9), GB(6, 8)), ("n2", GB(8, 8))], APPS, ASK, FULL)
    assert p.allowance(other.nodes["n1"]) == GB(6, 8)


def test_tuning_reports_cluster_totals():
    snap = snapshot(NODES, APPS, ASK, FULL)
    p = Feedback(FeedbackConfig(alpha=0.5))
    p.tune(obs(snap, idle_loads(FULL)))
    t = p.tuning()
    assert t["feedback_estimated_used_bytes"] == 4608 * 2**20
    assert t["feedback_estimated_used_vcores"] == 2.5
    assert t["feedback_available_bytes"] == (3584 + 8192) * 2**20  # n1's room + empty n2
    assert t["feedback_available_vcores"] == 5.5 + 8


def test_registry_and_config():
    p = make_policy("feedback", {"alpha": "0.25", "ordering": "drf"})
    assert isinstance(p, Feedback) and p.config.alpha == 0.25 and p.inner.name == "drf"
    for bad in ({"alpha": 2}, {"ordering": "feedback"}, {"max_overcommit": 0.5}):
        with pytest.raises(ConfigError):
            make_policy("feedback", bad)


def test_simulated_day_start_validates():
    w = load_workload("feedback-day")
    engine = Engine(make_policy("feedback"))
    run = SimCluster(w, engine, max_time_s=1800).run()
    assert engine.stats["rejections"] == 0 and engine.stats["tunes"] > 0
    assert run.stats["assigned"] > 0


def test_allowance_never_ratchets_on_its_own_offers():
    """Live, every capacity the policy sees may be an offer of its own, seen late and in any order; AR comes from
    the registered size the shim sends, so it stays put. Guessing AR from "not one of my offers" ratcheted on a
    real cluster (4 GB nodes grew to 270 GB under a 2x cap, tests/integration/test_feedback_live.py)."""
    snap = snapshot(NODES, APPS, ASK, FULL)
    p = Feedback(FeedbackConfig(alpha=1.0))
    p.tune(obs(snap, idle_loads(FULL, 512.0, 0.5)))
    seen = [GB(8, 8)]
    for step in range(20):  # each heartbeat sees an arbitrary earlier capacity, here one the policy never offered
        cap = Resources(seen[-1].memory_mb + 777 * step, seen[-1].vcores + step)
        s = snapshot([("n1", cap, GB(8, 8)), ("n2", GB(8, 8))], APPS, ASK, FULL)
        p.tune(obs(s, idle_loads(FULL, 0.0, 0.0)))
        d = p.decide(s, "n1")
        assert p.allowance(s.nodes["n1"]) == GB(8, 8)
        if d.resizes:
            seen.append(d.resizes[0].capacity)
            # the ceiling (2x AR) plus the one-minimum-allocation sliver above a node filled to it
            assert d.resizes[0].capacity.memory_mb <= 2 * 8192 + 1024
