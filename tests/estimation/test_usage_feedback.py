"""Usage-feedback estimation [FEEDBACK]: Eq. 1-4 by hand, Eq. 5-6, and the per-tick estimator."""

from __future__ import annotations

import pytest
from snapshots import GB, running, snapshot

from yarnctl.estimation.feedback import Usage, UsageEstimator, available, bump, correct, damp, remove
from yarnctl.model import App, ContainerLoad, NodeLoad, Observation, Resources


@pytest.mark.parametrize("est, measured, alpha, want", [
    (Usage(8000, 8), Usage(0, 0), 0.125, Usage(7000, 7)),  # 8000 x 0.875
    (Usage(8000, 8), Usage(2000, 4), 0.125, Usage(7250, 7.5)),  # 7000 + 250, 7 + 0.5
    (Usage(1000, 1), Usage(5000, 3), 0.5, Usage(3000, 2)),
    (Usage(1000, 1), Usage(5000, 3), 0.0, Usage(1000, 1)),  # α = 0: the reservation model
    (Usage(1000, 1), Usage(5000, 3), 1.0, Usage(5000, 3)),  # α = 1: the instant load only
], ids=["eq1-decay", "eq1-mix", "eq1-half", "eq1-alpha0", "eq1-alpha1"])
def test_eq1_damp(est, measured, alpha, want):
    assert damp(est, measured, alpha) == want


@pytest.mark.parametrize("est, req, want", [
    (Usage(0, 0), Resources(2048, 1), Usage(2048, 1)),
    (Usage(500.5, 0.25), Resources(3072, 2), Usage(3572.5, 2.25)),
], ids=["eq2-empty", "eq2-add"])
def test_eq2_bump(est, req, want):
    assert bump(est, req) == want


@pytest.mark.parametrize("est, measured, want", [
    (Usage(1000, 2), Usage(1500, 1), Usage(1500, 2)),  # memory spiked, cpu did not
    (Usage(1000, 2), Usage(500, 3.5), Usage(1000, 3.5)),
    (Usage(1000, 2), Usage(1000, 2), Usage(1000, 2)),
], ids=["eq3-memory-spike", "eq3-cpu-spike", "eq3-equal"])
def test_eq3_correct(est, measured, want):
    assert correct(est, measured) == want


@pytest.mark.parametrize("est, req, alpha, n, want", [
    (Usage(2048, 1), Resources(2048, 1), 0.125, 0, Usage(0, 0)),  # finished before any update
    (Usage(5000, 4), Resources(2048, 1), 0.5, 1, Usage(3976, 3.5)),  # 5000 − 1024, 4 − 0.5
    (Usage(5000, 4), Resources(2048, 2), 0.5, 2, Usage(4488, 3.5)),  # 5000 − 512, 4 − 0.5
    (Usage(100, 0.1), Resources(2048, 1), 0.5, 1, Usage(0, 0)),  # clamped at 0 (after an Eq. 3 reset)
], ids=["eq4-n0", "eq4-n1", "eq4-n2", "eq4-clamp"])
def test_eq4_remove(est, req, alpha, n, want):
    assert remove(est, req, alpha, n) == want


@pytest.mark.parametrize("ar, acu, nc, ru, want", [
    # AR 28 GB / 18, ACU 10 GB / 6: Eq. 5 = 18432 / 12; NC 32 GB / 24, RU 12 GB / 14: Eq. 6 = 20480 / 10
    (Resources(28672, 18), Usage(10240, 6), Resources(32768, 24), Usage(12288, 14), Usage(18432, 10)),
    (Resources(8192, 8), Usage(1024, 1), Resources(8192, 8), Usage(10240, 2), Usage(-2048, 6)),  # over: negative
], ids=["eq5-6-min-per-resource", "eq6-negative"])
def test_eq5_6_available(ar, acu, nc, ru, want):
    assert available(ar, acu, nc, ru) == want


NODES = [("n1", GB(8, 8)), ("n2", GB(8, 8))]
APP = App("a1")


def obs(at, containers, loads, measured=True):
    snap = snapshot(NODES, [APP], containers=containers)
    nodes = [NodeLoad(n.id, n.capacity, n.allocated) for n in snap.nodes.values()]
    cl = [ContainerLoad(cid, "a1", node, mem, cpu) for cid, node, mem, cpu in loads]
    return Observation.build(at, nodes, [], cl, usage_measured=measured, snapshot=snap)


def test_ticks_apply_eq2_then_eq1_eq3_then_eq4():
    e = UsageEstimator(0.5)
    c1 = running("c1", "a1", "n1", GB(2, 1))
    # tick 1: c1 is new (Eq. 2: 2048 / 1), measured 512 MB / 0.25: Eq. 1 gives 1280 / 0.625
    e.observe(obs(5, [c1], [("c1", "n1", 512, 0.25)]))
    assert e.estimate("n1") == Usage(1280, 0.625)
    assert e.estimate("n2") == Usage(0, 0)
    # tick 2: spike to 2000 MB: Eq. 1 gives 1640 < 2000, Eq. 3 raises it to 2000; cpu 0.3125 + 0.125 = 0.4375
    e.observe(obs(10, [c1], [("c1", "n1", 2000, 0.25)]))
    assert e.estimate("n1") == Usage(2000, 0.4375)
    assert e.tracked() == {"c1": ("n1", 2)}
    # tick 3: c1 finished: Eq. 4 takes (1 − 0.5)^2 x 2048 = 512 / 0.25 (1488 / 0.1875); c2 is new: Eq. 2
    # adds 1024 / 1 (2512 / 1.1875); Eq. 1 with c2 measured idle halves it
    c2 = running("c2", "a1", "n1", GB(1, 1))
    e.observe(obs(15, [c2], [("c2", "n1", 0, 0)]))
    assert e.estimate("n1") == Usage(1256, 0.59375)
    assert e.tracked() == {"c2": ("n1", 1)}  # bounded: finished containers are forgotten
    # tick 4: nothing runs on n1 any more: its estimate is 0 (not Eq. 1's slow decay)
    e.observe(obs(20, [], []))
    assert e.estimate("n1") == Usage(0, 0) and e.tracked() == {}


def test_unmeasured_tick_learns_allocations_only():
    e = UsageEstimator()
    e.observe(obs(5, [running("c1", "a1", "n1", GB(2, 1))], [], measured=False))
    assert e.estimate("n1") == Usage(2048, 1)  # no usage source: the reservation model
    assert e.tracked() == {"c1": ("n1", 0)}


def test_view_between_ticks_counts_new_and_finished_containers_without_learning():
    e = UsageEstimator(0.5)
    c1 = running("c1", "a1", "n1", GB(2, 1))
    e.observe(obs(5, [c1], [("c1", "n1", 512, 0.25)]))  # estimate 1280 / 0.625, ACU 512 / 0.25
    c2 = running("c2", "a1", "n1", GB(1, 1))
    assert e.estimate("n1", [c1, c2]) == Usage(1280 + 1024, 1.625)  # Eq. 2 at once
    assert e.estimate("n1", [c2]) == Usage(1280 - 1024 + 1024, 0.625 - 0.5 + 1)  # Eq. 4 with n_J = 1
    assert e.aggregated("n1", [c2]) == Usage(0, 0)
    # Eq. 5-6 with AR = NC = 8 GB / 8: min(8192 − 512, 8192 − 2304) = 5888; min(8 − 0.25, 8 − 1.625)
    assert e.available("n1", GB(8, 8), GB(8, 8), [c1, c2]) == Usage(5888, 6.375)
    assert e.estimate("n1") == Usage(1280, 0.625)  # the views learned nothing


def test_a_nodes_room_is_read_again_for_the_same_containers_until_a_tick():
    """`available` on the store's tuple of a node's containers keeps its answer for that very tuple (and AR, NC)
    until the next tick; an equal but new tuple, another AR, or a tick computes it anew."""
    e = UsageEstimator(0.5)
    c1, c2 = running("c1", "a1", "n1", GB(2, 1)), running("c2", "a1", "n1", GB(1, 1))
    e.observe(obs(5, [c1], [("c1", "n1", 512, 0.25)]))
    live = (c1, c2)
    first = e.available("n1", GB(8, 8), GB(8, 8), live)
    assert first == Usage(5888, 6.375) and e.available("n1", GB(8, 8), GB(8, 8), live) is first
    assert e.available("n1", GB(8, 8), GB(8, 8), (c1, c2)) == first  # equal, not the same: computed again
    assert e.available("n1", GB(4, 8), GB(8, 8), live) == Usage(4096 - 512, 6.375)  # another AR
    e.observe(obs(10, [c1, c2], [("c1", "n1", 512, 0.25), ("c2", "n1", 1024, 1.0)]))
    after = e.available("n1", GB(8, 8), GB(8, 8), live)
    assert after != first and after == available(GB(8, 8), e.aggregated("n1"), GB(8, 8), e.estimate("n1"))


def test_deterministic_and_forgets_nodes():
    runs = []
    for _ in range(2):
        e = UsageEstimator()
        cs = [running(f"c{i}", "a1", "n1" if i % 2 else "n2", GB(1 + i % 3, 1)) for i in range(6)]
        e.observe(obs(5, cs, [(c.id, c.node_id, 300.0 * i, 0.1 * i) for i, c in enumerate(cs)]))
        e.observe(obs(10, cs[:3], [(c.id, c.node_id, 700.0, 0.7) for c in cs[:3]]))
        runs.append((e.estimate("n1"), e.estimate("n2"), e.total()))
    assert runs[0] == runs[1]
    e.observe(Observation.build(15, [NodeLoad("n1", GB(8, 8), GB(0, 0))], [], [], usage_measured=True))
    assert set(e.estimates) == {"n1"}


def test_alpha_out_of_range():
    with pytest.raises(ValueError):
        UsageEstimator(1.5)
