"""The OPERA policy end to end [OPERA]: what it offers a node, what it kills, what it learns."""

from __future__ import annotations

import pytest
from snapshots import snapshot

from yarnctl.engine import Engine, validate
from yarnctl.errors import ConfigError
from yarnctl.model import (
    App, Container, ContainerKind, ContainerLoad, NodeLoad, NodeResize, Observation, Ask, Resources,
)
from yarnctl.policies import make_policy
from yarnctl.policies.opera import Opera, OperaConfig
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import parse_workload

CAP = Resources(12288, 15)
APPS = [App("old", type="MAPREDUCE", name="sort", submit_s=0.0), App("new", type="MAPREDUCE", name="count", submit_s=1.0)]
OPP = ContainerKind.OPPORTUNISTIC
MAPS = [Container(f"old_{i}", "old", "n1", 20, Resources(1024, 4), 0.0) for i in range(3)]  # 12 of 15 vcores
ASK = [Ask("new", 20, Resources(1024, 4), 10)]


def snap_with(containers, now=10.0, asks=ASK, capacity=CAP):
    s = snapshot([("n1", capacity, CAP)], APPS, asks, containers)  # registered at CAP, as the shim says
    return s.__class__(now, s.nodes, s.apps, s.asks, s.node_containers, s.app_allocated, s.min_allocation,
                       s.capacity)


def observe(snap, loads):
    nodes = [NodeLoad(n.id, n.capacity, n.allocated) for n in snap.nodes.values()]
    cl = [ContainerLoad(c.id, c.app_id, c.node_id, mem, cpu) for c, (mem, cpu) in loads.items()]
    return Observation.build(snap.now_s, nodes, [], cl, usage_measured=True, snapshot=snap)


def trained(config=OperaConfig(), snap=None):
    """A policy whose classifier has seen short maps of `new`."""
    p = Opera(config)
    s = snap or snap_with(MAPS)
    f = p.features(s, "new", 20, Resources(1024, 4))
    for _ in range(3):
        p.classifier.learn(f, 20.0)
    return p


@pytest.mark.parametrize("params, field", [({"relief": "gentle"}, "relief"), ({"reservation": "loose"}, "reservation"),
                                           ({"rho": 1.5}, "rho"), ({"max_overcommit": 0.5}, "max_overcommit")],
                         ids=["relief", "reservation", "rho", "overcommit"])
def test_bad_config_names_the_field(params, field):
    with pytest.raises(ConfigError, match=field):
        make_policy("opera", params)


def test_registered_with_paper_defaults():
    p = make_policy("opera")
    assert p.name == "opera" and p.time_dependent
    assert (p.config.rho, p.config.threshold_s, p.config.alpha) == (0.95, 60.0, 2.0)


def test_unknown_tasks_get_only_guaranteed_resources():
    snap = snap_with(MAPS)
    p = Opera()
    p.tune(observe(snap, {c: (400.0, 1.0) for c in MAPS}))  # the maps use 1 of their 4 vcores
    d = p.decide(snap, "n1")
    assert d.is_empty()  # GA = 3 vcores < 4; the new app's tasks are unknown, so long (Sec. III-B)


def test_short_task_gets_idle_resources_through_a_resize():
    snap = snap_with(MAPS)
    p = trained(OperaConfig(relief="neutral"))
    p.tune(observe(snap, {c: (400.0, 1.0) for c in MAPS}))
    d = p.decide(snap, "n1")
    # OA = 15 − 3 x 1 = 12 vcores: three 4-vcore maps, all opportunistic; YARN sees C + Σ D of them
    assert [(a.app_id, a.count, a.kind) for a in d.assignments] == [("new", 3, ContainerKind.OPPORTUNISTIC)]
    assert d.resizes == (NodeResize("n1", Resources(12288 + 3072, 15 + 12)),)
    assert validate(snap, d, "n1").rejected == ()


def test_preserve_blocks_br_from_oa_eq4():
    snap = snap_with(MAPS)
    p = trained(OperaConfig(relief="preserve"))  # BR starts at <1 GB, 2 vcores>
    p.tune(observe(snap, {c: (400.0, 1.0) for c in MAPS}))
    assert p.decide(snap, "n1").containers() == 2  # OA = 15 − 3 − 2 = 10 vcores: two maps, not three


def test_policy_remembers_its_opportunistic_containers_and_keeps_offering_them():
    snap = snap_with(MAPS)
    p = trained(OperaConfig(relief="neutral"))
    p.tune(observe(snap, {c: (400.0, 1.0) for c in MAPS}))
    p.decide(snap, "n1")
    # launched as the decision asked: opportunistic (the simulator and the shim record the kind)
    launched = [Container(f"new_{i}", "new", "n1", 20, Resources(1024, 4), 10.0, OPP) for i in range(3)]
    later = snap_with(MAPS + launched, now=11.0, asks=[Ask("new", 20, Resources(1024, 4), 7)],
                      capacity=Resources(15360, 27))
    d = p.decide(later, "n1")
    assert all(p.is_opportunistic(c.id) for c in launched) and not p.is_opportunistic("old_0")
    assert d.assignments == ()  # OA now counts the new ones at their demand: 12 − 12 = 0
    assert d.resizes == ()  # already offering C + 3 x <1 GB, 4 vcores>
    done = snap_with(MAPS + launched[:1], now=12.0, asks=[], capacity=Resources(15360, 27))
    assert p.decide(done, "n1").resizes == (NodeResize("n1", Resources(13312, 19)),)  # one left: shrink


def contended(relief: str, cpu: float, mem: float):
    """A node with three normal maps and two opportunistic ones, measured at (mem, cpu) per container."""
    snap = snap_with(MAPS)
    p = trained(OperaConfig(relief=relief))
    p.tune(observe(snap, {c: (400.0, 1.0) for c in MAPS}))
    offer = p.decide(snap, "n1").resizes[0].capacity
    opp = [Container("new_1", "new", "n1", 20, Resources(1024, 4), 10.0, OPP),
           Container("new_2", "new", "n1", 20, Resources(1024, 4), 10.5, OPP)]
    later = snap_with(MAPS + opp, now=15.0, asks=[], capacity=offer)  # as it offered
    p.tune(observe(later, {c: (mem, cpu) for c in MAPS + opp}))
    return p, later


@pytest.mark.parametrize("relief, cpu, mem, killed", [
    ("neutral", 3.0, 1000.0, "new_2"),      # 15 busy vcores > 0.95 x 15: CPU contention
    ("aggressive", 3.0, 1000.0, None),      # CPU contention is ignored
    ("aggressive", 1.0, 2400.0, "new_2"),   # 12000 MB > 0.95 x 12288: memory contention
    ("preserve", 3.0, 1000.0, "new_2"),
    ("neutral", 2.0, 1000.0, None),         # 10 vcores: no contention
], ids=["neutral-cpu", "aggressive-cpu", "aggressive-memory", "preserve-cpu", "none"])
def test_alg1_relief_kills_the_newest_opportunistic_container(relief, cpu, mem, killed):
    p, later = contended(relief, cpu, mem)
    d = p.decide(later, "n1")
    assert [k.container_id for k in d.kills] == ([killed] if killed else [])
    if killed:
        assert d.resizes == (NodeResize("n1", Resources(13312, 19)),)  # the killed one is no longer offered
        assert validate(later, d, "n1").rejected == ()
        assert p.tuning()["opera_relief_kills_total"] == 1.0


def test_preserve_doubles_blocked_resources_on_contention():
    p, _ = contended("preserve", 3.0, 1000.0)
    assert p.tuning()["opera_blocked_vcores"] == 4.0  # 2 -> 4 (Alg. 1 line 26, α = 2)
    p2, _ = contended("preserve", 2.0, 1000.0)
    assert p2.tuning()["opera_blocked_vcores"] == 2.0


def test_no_relief_without_opportunistic_tasks():
    snap = snap_with(MAPS)
    p = Opera(OperaConfig(relief="neutral"))
    p.tune(observe(snap, {c: (4000.0, 5.0) for c in MAPS}))  # over both thresholds, but only normal tasks
    assert p.decide(snap, "n1").kills == ()


def test_normal_grant_never_lands_on_memory_used_by_opportunistic_tasks():
    big = [Container("old_big", "old", "n1", 20, Resources(8192, 4), 0.0)]  # normal, uses 2 GB so far
    opp = [Container(f"new_{i}", "new", "n1", 20, Resources(1024, 1), 5.0 + i, OPP) for i in range(8)]
    snap = snap_with(big + opp, asks=[Ask("old", 20, Resources(4096, 2), 1)])
    p = Opera(OperaConfig(relief="aggressive"))
    p.tune(observe(snap, {**{c: (1000.0, 0.5) for c in opp}, big[0]: (2048.0, 1.0)}))
    d = p.decide(snap, "n1")
    # GA = 12288 − 8192 = 4096: the 4 GB task is normal; usage 2048 + 8000 + 4096 > 12288: the two newest go
    assert [a.kind for a in d.assignments] == [ContainerKind.NORMAL]
    assert [k.container_id for k in d.kills] == ["new_7", "new_6"]
    assert validate(snap, d, "n1").rejected == ()


def test_learns_finished_tasks_but_not_its_own_kills():
    p, later = contended("neutral", 3.0, 1000.0)
    p.decide(later, "n1")  # kills new_2
    gone = snap_with(MAPS, now=40.0, asks=[])
    p.tune(observe(gone, {c: (400.0, 1.0) for c in MAPS}))
    assert [t.id for t in p.finished] == ["new_1"]  # new_2 was killed: not a finished task
    assert p.finished[0].end_s - p.finished[0].start_s == pytest.approx(17.5)  # ended half way between ticks
    assert p.confusion.short_as_short == 1


MR = """
cluster: {nodes: 2, node: {memory_mb: 8192, vcores: 8}, physical: {memory_mb: 8192, vcores: 8}}
defaults: {am: false}
jobs:
  - id: early
    submit_s: 0
    type: mapreduce
    name: early
    maps: {tasks: 16, resource: {memory_mb: 1024, vcores: 2}, duration: 20, usage: {cpu: 0.25, memory: 0.5}}
  - id: late
    submit_s: 30
    type: mapreduce
    name: late
    maps: {tasks: 40, resource: {memory_mb: 1024, vcores: 2}, duration: 10, usage: {cpu: 0.25, memory: 0.5}}
  - id: later
    submit_s: 60
    type: mapreduce
    name: late
    maps: {tasks: 40, resource: {memory_mb: 1024, vcores: 2}, duration: 10, usage: {cpu: 0.25, memory: 0.5}}
"""


def test_simulated_idle_containers_are_lent_and_jobs_finish_sooner():
    w = parse_workload(MR, "opera.yaml", 0)
    fair = SimCluster(w, Engine(make_policy("fair"))).run()
    sim = SimCluster(w, Engine(make_policy("opera", {"relief": "neutral"})))
    run = sim.run()
    assert all(j.state == "succeeded" for j in run.jobs) and run.stats.get("engine_rejections", 0) == 0
    assert max(v["opera_opportunistic_containers"] for _, v in run.tuning) > 0
    done = {j.id: j.finish_s for j in run.jobs}
    assert done["later"] < {j.id: j.finish_s for j in fair.jobs}["later"]


def test_grant_that_died_at_launch_stops_opportunistic_grants_until_the_next_tick():
    snap = snap_with(MAPS)
    p = trained(OperaConfig(relief="neutral"))
    p.tune(observe(snap, {c: (400.0, 1.0) for c in MAPS}))
    first = p.decide(snap, "n1")
    assert first.containers() == 3
    # next heartbeat: none of the three containers exists (OOM-killed at launch), the tasks are asked again
    again = snap_with(MAPS, now=11.0, capacity=first.resizes[0].capacity)
    d = p.decide(again, "n1")
    assert d.assignments == () and d.resizes == (NodeResize("n1", CAP),)
    p.tune(observe(again, {c: (400.0, 1.0) for c in MAPS}))  # measured again
    assert p.decide(snap_with(MAPS, now=12.0, capacity=CAP), "n1").containers() == 3


def test_one_walk_sums_a_node_as_the_equations_do():
    """`_sums` (a heartbeat's one walk) equals Eq. 6, Eq. 4/7 and the held demands computed apart, to the bit;
    and a heartbeat on an unchanged node reads them again, a tick computes them anew."""
    from yarnctl.estimation.feedback import Usage
    from yarnctl.policies.opera.availability import guaranteed, opportunistic

    launched = [Container(f"new_{i}", "new", "n1", 20, Resources(1000 + 7 * i, 1 + i % 3), 10.0, OPP) for i in range(3)]
    snap = snap_with(MAPS + launched, capacity=Resources(15360, 27))
    p = trained(OperaConfig(relief="preserve"))
    p.tune(observe(snap, {c: (333.3 + i, 0.7 * i) for i, c in enumerate(MAPS + launched[:1])}))  # two not measured
    p.decide(snap, "n1")
    cs = snap.node_containers["n1"]
    st = p.nodes["n1"]
    assert st.sums is not None and st.sums.containers is cs
    blocked = st.block.blocked if st.block is not None else Usage()
    assert blocked != Usage()  # PRESERVE's BR_i is in OA_i
    ga = guaranteed(st.registered, (c.resource for c in cs if not p.is_opportunistic(c.id)))
    oa = opportunistic(st.registered, (p.task_usage(c) for c in cs), blocked)
    held = Usage()
    for c in cs:
        if p.is_opportunistic(c.id):
            held = held + Usage.of(c.resource)  # Σ_{t ∈ OT_i} D_t, added in launch order
    assert held != Usage() and (st.sums.guaranteed, st.sums.opportunistic, st.sums.held) == (ga, oa, held)
    assert st.sums.allocated == sum((c.resource for c in cs), Resources(0, 0))
    kept = st.sums
    p.decide(snap, "n1")
    assert p.nodes["n1"].sums is kept  # the same containers: read again
    p.tune(observe(snap, {c: (100.0, 0.5) for c in MAPS}))
    assert p.nodes["n1"].sums is None  # a tick moves usage: computed anew at the next heartbeat
