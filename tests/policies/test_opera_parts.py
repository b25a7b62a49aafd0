"""OPERA's equations and algorithms one by one [OPERA]: Eq. 4, 6, 7, Alg. 1 (CRes and the
three relief policies with PRESERVE's BR/BT state machine), Alg. 2 (assignment), Alg. 3-4 (reservation)."""

from __future__ import annotations

import pytest
from snapshots import GB, snapshot

from yarnctl.estimation.feedback import Usage
from yarnctl.model import App, Container, ContainerKind, Ask, Resources
from yarnctl.policies.opera.availability import fits, guaranteed, opportunistic
from yarnctl.policies.opera.queue import FairQueue, Task
from yarnctl.policies.opera.relief import Block, Contention, Relief, cres, kills, relieve, victim
from yarnctl.policies.opera.reservation import Reserved, Room, multi_chance, strict

C = Resources(12288, 15)  # Sec. IV-A: a node's <12 GB, 15 vCores>


# ---------------------------------------------------------------- Eq. 4, 6, 7

def test_eq6_guaranteed_counts_only_normal_demands():
    assert guaranteed(C, [Resources(1024, 4), Resources(1024, 4)]) == Usage(10240, 7)


def test_eq7_opportunistic_counts_usage_of_every_running_task():
    assert opportunistic(C, [Usage(400, 0.8), Usage(1024, 5.3)]) == Usage(12288 - 1424, pytest.approx(8.9))


def test_eq4_preserve_subtracts_blocked_resources():
    assert opportunistic(C, [Usage(1000, 3.0)], blocked=Usage(1024, 2)) == Usage(12288 - 2024, 10.0)


@pytest.mark.parametrize("demand, room, want", [
    (Resources(1024, 4), Usage(1024, 4), True),
    (Resources(1024, 4), Usage(1023.9, 8), False),
    (Resources(1024, 4), Usage(4096, 3.99), False),
], ids=["exactly", "memory-short", "cpu-short"])
def test_fits_every_resource(demand, room, want):
    assert fits(demand, room) is want


# ---------------------------------------------------------------- Alg. 1: CRes and RelieveContention

@pytest.mark.parametrize("used, want", [
    (Usage(11674, 14.2), Contention.MEMORY),       # ρ C = 11673.6 MB: just over
    (Usage(11673, 14.25), Contention.NONE),        # ρ C = 14.25 vcores exactly is not over it
    (Usage(11000, 14.3), Contention.CPU),
    (Usage(11700, 20.0), Contention.MEMORY),       # both: memory first
], ids=["memory-just-over", "at-threshold", "cpu", "both-memory-first"])
def test_cres_rho_095(used, want):
    assert cres(used, C, 0.95) is want


@pytest.mark.parametrize("relief, c, want", [
    (Relief.AGGRESSIVE, Contention.MEMORY, True),
    (Relief.AGGRESSIVE, Contention.CPU, False),
    (Relief.NEUTRAL, Contention.MEMORY, True),
    (Relief.NEUTRAL, Contention.CPU, True),
    (Relief.PRESERVE, Contention.CPU, True),
    (Relief.PRESERVE, Contention.MEMORY, True),
    (Relief.NEUTRAL, Contention.NONE, False),
    (Relief.PRESERVE, Contention.NONE, False),
], ids=["aggr-mem", "aggr-cpu-ignored", "neutral-mem", "neutral-cpu", "preserve-cpu", "preserve-mem",
        "neutral-none", "preserve-none"])
def test_which_policy_kills_alg1_lines_19_25(relief, c, want):
    assert kills(relief, c) is want


def container(cid: str, start: float) -> Container:
    return Container(cid, "a", "n1", 20, Resources(1024, 4), start)


def test_victim_is_most_recently_launched_opportunistic():
    cs = [container("c1", 10), container("c2", 30), container("c3", 20), container("c4", 40)]
    assert victim(cs, {"c1", "c2", "c3"}).id == "c2"  # c4 is newer but normal
    assert victim(cs, set()) is None
    assert victim([container("x2", 5), container("x1", 5)], {"x1", "x2"}).id == "x2"  # tie: by id


FLOOR = Block(Usage(1024, 2), 30.0, 0.0)


def step(block: Block, c: Contention, now: float) -> Block:
    return relieve(block, c, now, 2.0, FLOOR, C, 480.0)


def test_preserve_grows_br_bt_by_alpha_on_contention():
    b = step(FLOOR, Contention.CPU, 10.0)
    assert b == Block(Usage(2048, 4), 60.0, 10.0)
    b = step(b, Contention.MEMORY, 15.0)  # again within the window: doubled again
    assert b == Block(Usage(4096, 8), 120.0, 15.0)


def test_preserve_keeps_br_within_window_and_decays_after_a_quiet_bt():
    b = Block(Usage(4096, 8), 120.0, 15.0)
    assert step(b, Contention.NONE, 135.0) == b  # 120 s not yet passed
    assert step(b, Contention.NONE, 135.01) == Block(Usage(2048, 4), 60.0, 135.01)  # line 29-32
    b = step(step(b, Contention.NONE, 135.01), Contention.NONE, 200.0)
    assert b == Block(Usage(1024, 2), 30.0, 200.0)
    assert step(b, Contention.NONE, 1000.0) == Block(Usage(1024, 2), 30.0, 1000.0)  # never below the floor


def test_preserve_bounds_br_by_capacity_and_bt_by_max():
    b = FLOOR
    for t in range(10):
        b = step(b, Contention.CPU, float(t))
    assert b.blocked == Usage(12288, 15) and b.block_time_s == 480.0


# ---------------------------------------------------------------- Alg. 2

SHORT = lambda t: True  # noqa: E731
LONG = lambda t: False  # noqa: E731
MAP = Task("a", 20, Resources(1024, 4))


def test_alg2_normal_first_and_it_takes_from_oa_too():
    room = Room(Usage(4096, 4), Usage(8192, 10), Usage(12288, 15))
    assert room.assign(MAP, SHORT) is ContainerKind.NORMAL
    assert room.guaranteed == Usage(3072, 0) and room.opportunistic == Usage(7168, 6)  # lines 9-10


def test_alg2_opportunistic_only_for_short_tasks():
    room = Room(Usage(4096, 2), Usage(8192, 10), Usage(12288, 15))
    assert room.assign(MAP, LONG) is None  # not eligible: only normal assignment, which does not fit
    assert room.assign(MAP, SHORT) is ContainerKind.OPPORTUNISTIC
    assert room.guaranteed == Usage(4096, 2) and room.opportunistic == Usage(7168, 6)  # line 17: OA only
    assert room.extra == Usage(11264, 11)


def test_alg2_nothing_when_oa_too_small_or_overcommit_cap_reached():
    assert Room(Usage(0, 0), Usage(8192, 3.5), Usage(12288, 15)).assign(MAP, SHORT) is None
    assert Room(Usage(0, 0), Usage(8192, 10), Usage(12288, 3)).assign(MAP, SHORT) is None


# ---------------------------------------------------------------- Alg. 3-4

APPS = [App("a", submit_s=0.0), App("b", submit_s=1.0)]


def queue(a_count=5, b_count=5, a_demand=Resources(1024, 4), b_demand=Resources(1024, 2)):
    reqs = [Ask("a", 20, a_demand, a_count), Ask("b", 20, b_demand, b_count)]
    return FairQueue(snapshot([("n1", GB(12, 15))], APPS, reqs))


def test_queue_is_fair_order_and_counts_what_it_gave():
    q = queue()
    t = q.next()
    assert t.key == ("a", 20)  # both hold nothing: submit order
    q.take(t)
    assert q.next().key == ("b", 20)  # a now holds more memory
    assert q.next({("b", 20)}).key == ("a", 20)
    assert q.left(("a", 20)) == 4 and q.smallest() == Resources(1024, 2)


def test_alg3_strict_one_task_per_heartbeat_and_reserve_on_failure():
    q = queue()
    out = strict(Room(Usage(2048, 3), Usage(2048, 3), Usage(0, 0)), q, [], SHORT)
    assert out.grants == [] and out.reserved == [Reserved(("a", 20))]  # a's 4-vcore map fits nowhere
    # the next heartbeat serves the reserved task only, even though b's 2-vcore task would fit
    out = strict(Room(Usage(2048, 3), Usage(2048, 3), Usage(0, 0)), queue(), out.reserved, SHORT)
    assert out.grants == [] and out.reserved == [Reserved(("a", 20))]
    out = strict(Room(Usage(8192, 12), Usage(8192, 12), Usage(0, 0)), queue(), out.reserved, SHORT)
    assert [(t.key, k) for t, k in out.grants] == [(("a", 20), ContainerKind.NORMAL)] and out.reserved == []


def test_alg3_strict_drops_a_reservation_whose_request_is_gone():
    out = strict(Room(Usage(8192, 12), Usage(8192, 12), Usage(0, 0)), queue(a_count=0), [Reserved(("a", 20))], SHORT)
    assert [t.key for t, _ in out.grants] == [("b", 20)]


def test_alg3_line3_starved_node_does_nothing():
    out = strict(Room(Usage(512, 1), Usage(512, 1), Usage(0, 0)), queue(), [Reserved(("a", 20))], SHORT)
    assert out.grants == [] and out.reserved == [Reserved(("a", 20))]


def test_alg4_loop_stops_at_eps_r_reserved_or_a_skip_over_eps_s():
    one_vcore = Resources(1024, 1)
    # a's 4-vcore map fits nowhere; b's 1-vcore tasks fit three times
    out = multi_chance(Room(Usage(4096, 3), Usage(4096, 3), Usage(0, 0)), queue(b_demand=one_vcore), [], SHORT, 0, 3)
    assert out.grants == [] and out.reserved == [Reserved(("a", 20), 1)]  # |tr| = 1 > ε_r = 0 ends the loop
    out = multi_chance(Room(Usage(4096, 3), Usage(4096, 3), Usage(0, 0)), queue(b_demand=one_vcore), [], SHORT, 3, 3)
    # a reserved (skip 1), then b, b, b, each raising a's skip count (line 18): 4 > ε_s ends the loop
    assert [t.key for t, _ in out.grants] == [("b", 20)] * 3
    assert out.reserved == [Reserved(("a", 20), 4)]
    out = multi_chance(Room(Usage(4096, 3), Usage(4096, 3), Usage(0, 0)), queue(b_demand=one_vcore), [], SHORT, 3, 10)
    assert len(out.grants) == 3 and out.reserved == [Reserved(("a", 20), 4), Reserved(("b", 20), 1)]  # b too


def test_alg4_skips_a_reserved_task_at_most_eps_s_times():
    reserved = [Reserved(("a", 20), 3)]
    out = multi_chance(Room(Usage(4096, 3), Usage(4096, 3), Usage(0, 0)), queue(), reserved, SHORT, 3, 3)
    assert out.grants == [] and out.reserved == [Reserved(("a", 20), 4)]  # 4 > ε_s: back to waiting for it
    reserved = [Reserved(("a", 20), 1)]
    out = multi_chance(Room(Usage(4096, 3), Usage(4096, 3), Usage(0, 0)), queue(), reserved, SHORT, 3, 3)
    assert [t.key for t, _ in out.grants] == [("b", 20)]  # skippable: b's task goes past it
    assert out.reserved[0] == Reserved(("a", 20), 3)  # +1 for failing, +1 for b's grant (line 18)


def test_alg4_reserved_tasks_served_first_fifo():
    reserved = [Reserved(("b", 20), 1), Reserved(("a", 20), 1)]
    out = multi_chance(Room(Usage(2048, 6), Usage(2048, 6), Usage(0, 0)), queue(), reserved, SHORT, 3, 3)
    assert [t.key for t, _ in out.grants][:2] == [("b", 20), ("a", 20)]


def test_alg4_opportunistic_grant_for_short_reserved_task():
    reserved = [Reserved(("a", 20), 1)]
    out = multi_chance(Room(Usage(0, 0), Usage(4096, 5), Usage(4096, 5)), queue(b_count=0), reserved, SHORT, 3, 3)
    assert [(t.key, k) for t, k in out.grants] == [(("a", 20), ContainerKind.OPPORTUNISTIC)]
