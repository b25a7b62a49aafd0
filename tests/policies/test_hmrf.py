"""H-MRF and the long-term family [H-MRF]: golden examples, guards, properties.

Golden cases carry the paper's example/table/figure number in their ids. Slots are 10 s and
every task lasts one slot (the hmrf-example built-ins' time mapping), so `slot(t)` = t // 10.
"""

import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yarnctl.engine import Engine
from yarnctl.errors import ConfigError
from yarnctl.fairness.shares import aggregate
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import load_workload, parse_workload


def run(workload, policy, until, **params):
    """Run to `until` s; return the policy and the tasks each queue started per slot."""
    p = make_policy(policy, params)
    sim = SimCluster(workload, Engine(p), max_time_s=until)
    r = sim.run()
    snap = sim.snapshot()
    starts = [(c.queue, c.start_s) for c in r.containers]
    starts += [(snap.apps[c.app_id].queue, c.start_s) for c in snap.containers.values()]
    if hasattr(p, "tracker"):
        p.tracker.advance(snap)  # integrate up to the end
    return p, sim, Counter((q, int(s // 10)) for q, s in starts)


def per_slot(counts, queue, slots):
    return [counts[(queue, k)] for k in range(slots)]


# ------------------------------------------------------------------ golden cases


@pytest.mark.parametrize("policy, a, b", [
    ("af", 28, 44),  # Sec. 3.3
    ("lt-af", 28, 44),  # same history as AF: everything starts at 0 (hmrf-example1 comment)
    ("lt-drf", 25, 50),  # Sec. 3.2, DRF's allocation
    ("hmrf", 25, 50),
], ids=["example1-af-28-44", "example1-lt-af", "example1-lt-drf-25-50", "example1-hmrf"])
def test_example1(policy, a, b):
    _, sim, _ = run(load_workload("hmrf-example1"), policy, 500)
    assert Counter(c.app_id for c in sim.snapshot().containers.values()) == {"a1": a, "b1": b}


@pytest.mark.parametrize("policy", ["drf", "af"], ids=["table1a-drf", "table1a-af"])
def test_example3_table1a_memoryless_gives_a_86_and_b_56(policy):
    _, _, counts = run(load_workload("hmrf-example3"), policy, 35)
    assert per_slot(counts, "A", 4) == [24, 20, 22, 20]
    assert per_slot(counts, "B", 4) == [4, 20, 12, 20]
    assert (sum(per_slot(counts, "A", 4)), sum(per_slot(counts, "B", 4))) == (86, 56)


@pytest.mark.parametrize("policy", ["hmrf", "lt-af", "lt-drf"],
                         ids=["table1b-hmrf", "table1b-lt-af", "table1b-lt-drf"])
def test_example3_table1b_long_term_gives_59_and_59(policy):
    # A's and B's tasks are worth the same (5 units), so every long-term rank equalises task counts
    _, _, counts = run(load_workload("hmrf-example3"), policy, 35)
    assert per_slot(counts, "A", 4) == [24, 4, 23, 8]
    assert per_slot(counts, "B", 4) == [4, 24, 8, 23]
    assert (sum(per_slot(counts, "A", 4)), sum(per_slot(counts, "B", 4))) == (59, 59)


@pytest.mark.parametrize("policy, a, b", [
    ("lt-drf", 35, 30),  # Fig. 3b
    ("lt-af", 42, 16),  # Fig. 4
    ("hmrf", 40, 20),  # Fig. 5
    ("af", 30, 40),  # memoryless: derived in the hmrf-example4 comment
], ids=["example4-fig3-lt-drf-35-30", "example4-fig4-lt-af-42-16", "example4-fig5-hmrf-40-20",
        "example4-af-30-40"])
def test_example4_t2(policy, a, b):
    _, _, counts = run(load_workload("hmrf-example4"), policy, 15)
    assert (counts[("A", 0)], counts[("B", 0)]) == (15, 70)  # t1: every policy
    assert (counts[("A", 1)], counts[("B", 1)]) == (a, b)


def test_example4_fig5_sharing_degrees_and_aggregate_values():
    p, _, _ = run(load_workload("hmrf-example4"), "hmrf", 9.9)
    measured = p.tracker.measured(9.9)
    assert measured["A"][0] == pytest.approx(1.0)  # β_A(t1)
    assert measured["B"][0] == pytest.approx(1.4)  # β_B(t1)
    p, _, _ = run(load_workload("hmrf-example4"), "hmrf", 19.9)
    measured = p.tracker.measured(19.9)
    assert measured["A"][0] == pytest.approx(1.375, rel=0.01)  # β_A(t2), Fig. 5 (19.9 of 20 s)
    assert measured["B"][0] == pytest.approx(1.0, rel=0.01)  # β_B(t2)
    # aggregate value in CPU-slots + GB-slots (1 CPU worth 1 GB): A 165, B 180 (Sec. 5.3.1)
    value = {q: aggregate(measured[q][1], p.tracker.capacity) * 100 / 10 for q in "AB"}
    assert value == pytest.approx({"A": 165, "B": 180}, rel=0.01)


# ------------------------------------------------------------------ windows and guards


def test_zero_window_makes_lt_af_memoryless():
    _, _, counts = run(load_workload("hmrf-example3"), "lt-af", 35, window_s=0)
    assert per_slot(counts, "A", 4) == [24, 20, 22, 20]


def test_tumbling_window_forgets_at_its_boundary():
    # a 30 s window starts afresh at t4: B no longer catches up to 59 (23 tasks) but meets A at 20
    _, _, counts = run(load_workload("hmrf-example3"), "hmrf", 35, window_s=30)
    assert per_slot(counts, "A", 4)[:3] == [24, 4, 23]
    assert per_slot(counts, "B", 4) == [4, 24, 8, 20]


HOG = """
cluster: {nodes: 1, node: {memory_mb: 10240, vcores: 10}, heartbeat_s: 0.1}
defaults: {am: false, type: generic}
jobs:
  - {id: a, queue: A, submit_s: 0, stages: [{name: t, tasks: 1000, resource: {memory_mb: 1024, vcores: 1}, duration: 10}]}
  - {id: b, queue: B, submit_s: 100, stages: [{name: t, tasks: 1000, resource: {memory_mb: 1024, vcores: 1}, duration: 10}]}
"""


@pytest.mark.parametrize("timeout, served", [(-1, False), (20, True)], ids=["no-timeout", "timeout-20s"])
def test_timeout_serves_a_starved_queue(timeout, served):
    # Sec. 6.1: A had the cluster alone for 100 s, so B is owed ~100 s; without a time-out A starves.
    # Both queues are configured: a queue not yet seen would not count in A's share (Eq. 1)
    _, _, counts = run(parse_workload(HOG, "hog.yaml", 0), "hmrf", 185, timeout_s=timeout,
                       weights={"A": 1, "B": 1})
    assert (sum(counts[("A", k)] for k in range(11, 18)) > 0) == served


def test_borrow_cap_zero_keeps_each_queue_in_its_share():
    _, _, counts = run(load_workload("hmrf-example4"), "hmrf", 5, borrow_cap_s=0)
    assert (counts[("A", 0)], counts[("B", 0)]) == (15, 50)  # B may not borrow A's idle half


@pytest.mark.parametrize("params, message", [
    ({"entity": "group"}, "entity"),
    ({"window": "hopping"}, "window kind"),
    ({"window_s": -1}, "window_s: must be >= 0"),
])
def test_bad_config_is_one_clear_error(params, message):
    with pytest.raises(ConfigError, match=message):
        make_policy("hmrf", params)


@pytest.mark.parametrize("given", [float("inf"), "inf"])
def test_an_infinite_window_and_cap_are_taken_from_the_command_line_too(given):
    """`--param hmrf.window_s=.inf`: pure long-term, as the defaults are (a finite-number check once refused it)."""
    p = make_policy("hmrf", {"window_s": given, "borrow_cap_s": given})
    assert (p.config.window_s, p.config.borrow_cap_s) == (math.inf, math.inf)


def test_tuning_reports_beta_and_accumulated_per_queue():
    p, _, _ = run(load_workload("hmrf-example4"), "hmrf", 9.9)
    values = p.tuning()
    assert values['hmrf_sharing_degree{queue="B"}'] == pytest.approx(1.4)
    assert values['hmrf_accumulated_vcore_seconds{queue="B"}'] == pytest.approx(70 * 9.9)
    assert values['hmrf_accumulated_memory_byte_seconds{queue="A"}'] == pytest.approx(15 * 2048 * 9.9 * (1 << 20))
    assert p.time_dependent and not make_policy("af").time_dependent


def test_user_entity_uses_the_category_label():
    p, _, _ = run(load_workload("hmrf-example4"), "hmrf", 5, entity="user")
    assert 'hmrf_sharing_degree{category="A"}' in p.tuning()


# ------------------------------------------------------------------ properties

SIZES = st.tuples(st.sampled_from([1, 2, 5]), st.sampled_from([1, 2, 5]))  # divide the 50/50 share


def _workload(users):
    """One node of <50 CPU, 50 GB> per user, 10 s slots, every task one slot (as Examples 3-4)."""
    n = len(users)
    lines = [f"cluster: {{nodes: 1, node: {{memory_mb: {n * 50 * 1024}, vcores: {n * 50}}}, heartbeat_s: 0.1}}",
             "defaults: {am: false, type: generic}", "jobs:"]
    for u, ((cpu, gb), jobs) in enumerate(users):
        for k, (slot, tasks) in enumerate(jobs):
            lines.append(f"  - {{id: q{u}-{k}, queue: q{u}, user: q{u}, submit_s: {slot * 10}, stages: "
                         f"[{{name: t, tasks: {tasks}, resource: {{memory_mb: {gb * 1024}, vcores: {cpu}}}, "
                         f"duration: 10}}]}}")
    return parse_workload("\n".join(lines), "property.yaml", 0)


@given(st.lists(st.tuples(SIZES, st.lists(st.tuples(st.integers(0, 5), st.integers(1, 60)), min_size=1,
                                          max_size=3)), min_size=2, max_size=3))
def test_hmrf_gives_every_user_with_demand_a_sharing_benefit(users):
    # feasible by construction: rounds are fresh, and each user's task divides its share exactly,
    # so static partitioning is possible every round and H-MRF can always give β_i >= 1
    # every queue configured up front, as in YARN: one that submits late still counts in Eq. 1
    p, _, _ = run(_workload(users), "hmrf", 10_000, weights={f"q{u}": 1 for u in range(len(users))})
    for name, (beta, _) in p.tracker.measured(p.tracker.last_s).items():
        assert beta >= 1 - 1e-6, name


def _example2(extra):
    """Example 2 (Sec. 3.2): 120 CPUs / 120 GB; A 50 <1, 2>, B 10 <2, 1>, C 10 <1, 4> (+ `extra` lies), then all busy."""
    jobs = [("a", 1, 2, 50), ("b", 2, 1, 10), ("c", 1, 4, 10 + extra)]
    lines = ["cluster: {nodes: 1, node: {memory_mb: 122880, vcores: 120}, heartbeat_s: 0.1}",
             "defaults: {am: false, type: generic}", "jobs:"]
    for q, cpu, gb, n in jobs:
        for k, (at, tasks) in enumerate([(0, n), (10, 400)]):
            lines.append(f"  - {{id: {q}{k}, queue: {q}, user: {q}, submit_s: {at}, stages: [{{name: t, "
                         f"tasks: {tasks}, resource: {{memory_mb: {gb * 1024}, vcores: {cpu}}}, duration: 10}}]}}")
    return parse_workload("\n".join(lines), "example2.yaml", 0)


def c_total(policy, extra, until=95.0):
    """C's aggregate accumulated resources (CPU-slots + GB-slots) by `until`, from the containers it held."""
    sim = SimCluster(_example2(extra), Engine(make_policy(policy)), max_time_s=until)
    r = sim.run()
    held = [(c.vcores, c.memory_mb, c.start_s, c.end_s) for c in r.containers if c.queue == "c"]
    held += [(c.resource.vcores, c.resource.memory_mb, c.start_s, until)
             for c in sim.snapshot().containers.values() if c.app_id.startswith("c")]
    return sum((vc + mb / 1024) * (min(end, until) - start) for vc, mb, start, end in held) / 10


def test_example2_lying_pays_under_memoryless_af_only():
    assert c_total("af", 4, 9.9) > c_total("af", 0, 9.9)  # Fig. 2b: C gains <4 CPUs, 16 GB> at once
    assert c_total("hmrf", 4, 9.9) > c_total("hmrf", 0, 9.9)  # H-MRF too lends it more for now...
    assert c_total("hmrf", 4) <= c_total("hmrf", 0) + 5  # ...but takes it back (one task is worth 5)


@given(st.integers(1, 10))
def test_hmrf_truthfulness_inflating_demand_earns_no_more(extra):
    # Theorem 6: in the long run, C's backup tasks are a pre-consumption it pays back
    assert c_total("hmrf", extra) <= c_total("hmrf", 0) + 5
