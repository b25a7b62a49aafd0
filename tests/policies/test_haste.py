"""HaSTE ([HaSTE] Sec. 3.2-3.4): AMs first, ITA for the first batch, RTA's Eq. 4 preference."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from snapshots import GB, running, snapshot

from yarnctl.engine import validate
from yarnctl.errors import ConfigError
from yarnctl.model import App, Container, Locality, Node, Ask
from yarnctl.state import snapshot_of
from yarnctl.policies import make_policy
from yarnctl.policies.ffd_dp import FfdDpConfig, fitness
from yarnctl.policies.haste import TaskAsk, normalised, preferences, real_time_assignment
from yarnctl.policies.urgency import JobProgress

TYPE_I, TYPE_II = GB(1, 3), GB(3, 1)


def decide(snap, node="n1", policy="haste", **params):
    return {(a.app_id, a.priority): a.count for a in make_policy(policy, params).decide(snap, node).assignments}


def request(app, capability, left=10, submit=0.0, priority=20, urgency=0.0):
    return TaskAsk(app, priority, capability, left, 0.0, JobProgress(), urgency, (2, submit, app, priority))


def test_sec_3_4_1_table_scores_per_iteration_and_final_pick():
    """Sec. 3.4.1's table: fitness of both task types on the shrinking residual, and the pick."""
    requests = [request("I", TYPE_I, submit=0.0), request("II", TYPE_II, submit=1.0)]
    residual, residuals, picks = GB(10, 6), [], []
    for best, _why in real_time_assignment(requests, residual, FfdDpConfig(), (1.0, 1.0, 0.0)):
        residuals.append(residual)
        picks.append(best.app_id)
        residual = residual - best.capability
    assert residuals == [GB(10, 6), GB(7, 5), GB(4, 4), GB(3, 1)]
    assert [fitness(TYPE_I, c, FfdDpConfig()) for c in residuals] == [28, 22, 16, 6]
    assert [fitness(TYPE_II, c, FfdDpConfig()) for c in residuals] == [36, 26, 16, 10]
    # <4, 4> scores both 16: the earlier-submitted type I goes; at <3, 1> only type II fits
    assert picks == ["II", "II", "I", "II"] and residual == GB(0, 0)


def test_sec_3_4_1_preferences_are_normalised_fitness_when_urgency_is_equal():
    requests = [request("I", TYPE_I), request("II", TYPE_II, submit=1.0)]
    assert [(p, r.app_id) for p, r in preferences(requests, GB(10, 6), FfdDpConfig(), (1.0, 1.0, 0.0))] == [
        (0.0, "I"), (1.0, "II")]
    assert [r.app_id for _, r in preferences(requests, GB(3, 1), FfdDpConfig(), (1.0, 1.0, 0.0))] == ["II"]


def test_sec_3_4_1_example_through_the_policy():
    # a node of <12 GB, 8 cores> holding another job's AM has the example's <10 GB, 6 cores> free
    snap = snapshot([("n1", GB(12, 8))], [App("I", submit_s=0), App("II", submit_s=1), App("x")],
                    [Ask("I", 20, TYPE_I, 10), Ask("II", 20, TYPE_II, 10)],
                    [running("am", "x", "n1", GB(2, 2), 0, is_am=True)])
    assert decide(snap) == {("II", 20): 3, ("I", 20): 1}


def test_eq_4_adds_normalised_fitness_and_urgency():
    # I fits worse (0) but is most urgent (1); II the reverse; III is in between on both
    requests = [request("I", TYPE_I, urgency=8.0), request("II", TYPE_II, urgency=2.0, submit=1.0),
                request("III", GB(2, 2), urgency=6.0, submit=2.0)]
    scored = {r.app_id: p for p, r in preferences(requests, GB(10, 6), FfdDpConfig(), (1.0, 1.0, 0.0))}
    # fitness I 28, II 36, III 32 -> 0, 1, 0.5; urgency 8, 2, 6 -> 1, 0, 2/3
    assert scored == pytest.approx({"I": 1.0, "II": 1.0, "III": 0.5 + 2 / 3})


def test_normalised_maps_the_range_to_0_1_and_a_flat_list_to_zeros():
    assert normalised([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert normalised([5.0, 5.0]) == [0.0, 0.0]


def test_am_requests_are_served_first():
    # b's AM came last and fits worse than a's tasks, but the node's last 2 GB go to it
    snap = snapshot([("n1", GB(8, 8))], [App("a", submit_s=0), App("b", submit_s=5)],
                    [Ask("a", 20, GB(2, 4), 10), Ask("b", 0, GB(2, 1), 1)],
                    [running("c1", "a", "n1", GB(6, 2)), running("am-a", "a", "n1", GB(0, 1), 0, is_am=True)])
    assert decide(snap) == {("b", 0): 1}


def test_am_requests_in_submit_order_then_tasks():
    snap = snapshot([("n1", GB(6, 8))], [App("a", submit_s=2), App("b", submit_s=1), App("c", submit_s=0)],
                    [Ask("a", 0, GB(2), 1), Ask("b", 0, GB(2), 1), Ask("c", 20, GB(1), 9)],
                    [running("am-c", "c", "n1", GB(3), 0, is_am=True)])
    assignments = make_policy("haste").decide(snap, "n1").assignments
    assert [(a.app_id, a.priority, a.count) for a in assignments] == [("b", 0, 1), ("c", 20, 1)]


def _busy(requests, apps, capacity=GB(6, 6)):
    """A node that is not empty (so RTA runs) with `capacity` minus <2 GB, 2 cores> free."""
    return snapshot([("n1", capacity)], [*apps, App("x")], requests,
                    [running("am-x", "x", "n1", GB(2, 2), 0, is_am=True)])


def test_equal_scores_go_to_the_better_locality():
    # a and b ask for the same thing; b came later but asks for this node by name
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    requests = [Ask("a", 20, GB(4, 4), 1), Ask("b", 20, GB(4, 4), 1),
                Ask("b", 20, GB(4, 4), 1, "n1", Locality.NODE)]
    assert decide(_busy(requests, apps)) == {("b", 20): 1}
    # without the node-level request a wins on submit time
    assert decide(_busy(requests[:2], apps)) == {("a", 20): 1}


def test_strict_locality_elsewhere_is_not_placed():
    apps = [App("a", submit_s=0), App("b", submit_s=1)]
    requests = [Ask("a", 20, GB(4, 4), 1, relax_locality=False), Ask("a", 20, GB(4, 4), 1, "n2", Locality.NODE),
                Ask("b", 20, GB(1, 1), 1)]
    assert decide(_busy(requests, apps)) == {("b", 20): 1}


TABLE_2_MAPS = [Ask(f"wc{i}", 20, GB(1, i + 1), 52) for i in (1, 2, 3, 4)]
TABLE_2_APPS = [App(f"wc{i}") for i in (1, 2, 3, 4)]


def test_ita_packs_an_empty_node_of_an_idle_cluster():
    # Table 2's maps on an empty <8 GB, 8 cores> node: Alg. 1 maximises w.R placed (four 2-core maps)
    snap = snapshot([("n1", GB(8, 8))], TABLE_2_APPS, TABLE_2_MAPS)
    assert decide(snap) == {("wc1", 20): 4}


def test_rta_fills_a_node_that_is_not_empty():
    # RTA takes the fittest first: a 5-core map, then the 3-core map that fills the cores
    snap = snapshot([("n1", GB(9, 8)), ("n2", GB(8, 8))], TABLE_2_APPS, TABLE_2_MAPS,
                    [running("am", "wc1", "n2", GB(1), 0, is_am=True), running("x", "wc4", "n1", GB(1, 0))])
    assert decide(snap) == {("wc4", 20): 1, ("wc2", 20): 1}


def test_reasons_say_which_rule_chose_each_app():
    """The decision log's "why": RTA picks name their fitness, urgency and preference; ITA and AMs say so."""
    snap = snapshot([("n1", GB(9, 8)), ("n2", GB(8, 8))], TABLE_2_APPS, TABLE_2_MAPS,
                    [running("am", "wc1", "n2", GB(1), 0, is_am=True), running("x", "wc4", "n1", GB(1, 0))])
    reasons = make_policy("haste").decide(snap, "n1").reasons
    assert set(reasons) == {"wc4", "wc2"}
    # wc4's <1 GB, 5 cores> on the residual <8 GB, 8 cores>: F = 1 x 8 + 5 x 8 = 48, the best of the four
    # fitting requests; no job has started a map, so every urgency is 0 and the preference is F's 1.0
    assert reasons["wc4"] == "RTA p20: fitness 48.0, urgency 0, preference 1.00 of 4"
    assert reasons["wc2"].startswith("RTA p20: fitness ")
    ita = make_policy("haste").decide(snapshot([("n1", GB(8, 8))], TABLE_2_APPS, TABLE_2_MAPS), "n1").reasons
    assert ita == {"wc1": "ITA p20: 4 of the batch packed by Alg. 1"}
    am = make_policy("haste").decide(snapshot([("n1", GB(8, 8))], [App("a")], [Ask("a", 0, GB(1), 1)]), "n1")
    assert am.reasons == {"a": "AM first"}


def test_ita_falls_back_to_rta_above_its_work_bound():
    snap = snapshot([("n1", GB(8, 8))], TABLE_2_APPS, TABLE_2_MAPS)
    assert decide(snap, ita_max_work=9 * 9 * 4 - 1) == {("wc4", 20): 1, ("wc2", 20): 1}


def test_ita_only_until_a_job_has_finished_a_map():
    policy = make_policy("haste")
    policy.decide(snapshot([("n1", GB(8, 8))], TABLE_2_APPS, TABLE_2_MAPS), "n1")
    # wc1 then shows 50 maps pending and none running: two have finished, the batch is under way
    later = [Ask("wc1", 20, GB(1, 2), 50), *TABLE_2_MAPS[1:]]
    d = policy.decide(snapshot([("n1", GB(8, 8))], TABLE_2_APPS, later), "n1")
    assert {(a.app_id, a.count) for a in d.assignments} == {("wc4", 1), ("wc2", 1)}


def test_urgency_follows_the_containers_placed_in_the_same_heartbeat():
    # 10 maps, 3 running (progress 0.3), 8 reduces; maps and reduces are the same size, so only
    # urgency decides. With <6 GB, 6 cores> free, R3 alternates as the shares move: reduce, reduce,
    # map, reduce, map, reduce. A score frozen at the heartbeat's start would give all six to reduces.
    snap = snapshot([("n1", GB(7, 7)), ("n2", GB(8, 8))], [App("a")],
                    [Ask("a", 20, GB(1), 7), Ask("a", 10, GB(1), 8)],
                    [running("m1", "a", "n2", GB(1)), running("m2", "a", "n2", GB(1)), running("m3", "a", "n1", GB(1)),
                     running("am", "a", "n2", GB(2), 0, is_am=True)])
    assert decide(snap) == {("a", 10): 4, ("a", 20): 2}


@pytest.mark.parametrize("params", [{"memory_weight": -1.0}, {"memory_weight": 0.0, "vcores_weight": 0.0},
                                    {"vcores_weight": float("nan")}, {"memory_weight": float("inf")}],
                         ids=["negative", "both-zero", "nan", "inf"])
def test_weights_that_would_value_nothing_are_refused(params):
    # a NaN or an infinity is refused as any number parameter's is, before HaSTE's own check
    with pytest.raises(ConfigError, match="policy haste-a: (memory_weight|vcores_weight: expected a number, got nan)"):
        make_policy("haste-a", params)


@pytest.mark.parametrize("beta", ["beta_fitness", "beta_urgency", "beta_alignment"])
def test_betas_that_are_not_numbers_are_refused(beta):
    # a NaN or infinite weight makes Eq. 6's max depend on the order requests are scored in
    with pytest.raises(ConfigError, match=f"policy haste-a: {beta}: expected a number, got nan"):
        make_policy("haste-a", {beta: float("nan")})


# ---------------------------------------------------------------- random snapshots

TAGS = [(), ("yarnctl.iterations=3", "yarnctl.stage=2"), ("yarnctl.iterations=6",), ("yarnctl.stage=x",)]


@st.composite
def snapshots(draw):
    nodes = {f"n{i}": Node(f"n{i}", f"r{i % 2}", GB(draw(st.integers(2, 32)), draw(st.integers(1, 16))))
             for i in range(draw(st.integers(1, 4)))}
    apps = [App(f"a{i}", submit_s=draw(st.integers(0, 3)), tags=draw(st.sampled_from(TAGS)))
            for i in range(draw(st.integers(1, 6)))]
    requests, containers, used = [], {}, {n: GB(0, 0) for n in nodes}
    for app in apps:
        for priority in draw(st.lists(st.sampled_from([0, 5, 10, 20]), unique=True, max_size=3)):
            capability = GB(draw(st.sampled_from([0.5, 1, 2, 3, 4, 6])), draw(st.integers(1, 4)))
            requests.append(Ask(app.id, priority, capability, draw(st.integers(0, 30)),
                                    relax_locality=draw(st.booleans())))
            if draw(st.booleans()):
                where = draw(st.sampled_from([*nodes, "r0", "r1"]))
                requests.append(Ask(app.id, priority, capability, draw(st.integers(0, 5)), where,
                                        Locality.RACK if where.startswith("r") else Locality.NODE))
            for _ in range(draw(st.integers(0, 3))):
                node = draw(st.sampled_from(sorted(nodes)))
                if (used[node] + capability).fits_in(nodes[node].capacity):
                    cid = f"c{len(containers)}"
                    containers[cid] = Container(cid, app.id, node, priority, capability, 0.0, is_am=priority == 0)
                    used[node] = used[node] + capability
    nodes = {n: Node(n, x.rack, x.capacity, used[n]) for n, x in nodes.items()}
    return snapshot_of(1.0, nodes.values(), apps, requests, containers.values())


@given(snap=snapshots(), policy=st.sampled_from(["haste", "haste-a"]))
def test_decisions_on_random_snapshots_pass_the_validator_and_replay(snap, policy):
    for node in snap.nodes:
        d = make_policy(policy).decide(snap, node)
        assert validate(snap, d, node).rejected == ()
        assert make_policy(policy).decide(snap, node) == d
