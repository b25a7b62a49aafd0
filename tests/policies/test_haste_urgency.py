"""Urgency ([HaSTE] Sec. 3.4.2): Eq. 2-3, rules R1-R3, and the inputs read from snapshots."""

import json

import pytest
from snapshots import GB, running, snapshot

from yarnctl.policies.contract import is_stateful
from yarnctl.model import App, Ask
from yarnctl.policies import make_policy
from yarnctl.policies.ffd_dp import FfdDpConfig
from yarnctl.policies.urgency import JobProgress, Progress, weighted_size

AM = 3.0  # a <2 GB, 1 vcore> AM: R_i^am = 2 + 1


def job(total=10, pending=5, maps=0.0, reduces=0.0, am=AM):
    return JobProgress(maps_total=total, maps_pending=pending, map_held=maps, reduce_held=reduces, am_held=am)


def test_eq_2_and_3_values():
    # A^m/T^m = 6/10; U^m = 0.6 * (4 + 3) = 4.2; U^r = 4.2 * 0.6 * (12 + 4) / 4 = 10.08
    j = job(total=10, pending=4, maps=12.0, reduces=4.0)
    assert j.map_urgency() == pytest.approx(4.2)
    assert j.reduce_urgency(2.0) == pytest.approx(10.08)


@pytest.mark.parametrize(
    "more, less",
    [
        (job(pending=2), job(pending=8)),  # 80% of the maps assigned against 20%
        (job(total=100, pending=10), job(total=10, pending=5)),  # progress, not the number assigned
        (job(pending=4), job(pending=5, maps=40.0)),  # holding many maps does not make maps urgent
    ],
    ids=["R1-more-progress", "R1-fraction-not-count", "R1-not-the-maps-held"],
)
def test_r1_more_map_progress_makes_maps_more_urgent(more, less):
    assert more.map_urgency() > less.map_urgency()


@pytest.mark.parametrize(
    "more, less",
    [
        (job(reduces=8.0), job(reduces=2.0)),
        (job(reduces=2.0), job(reduces=0.0)),
        (job(pending=6, reduces=12.0), job(pending=4, reduces=0.0)),  # R2 can outweigh R1
    ],
    ids=["R2-more-reduce-resources", "R2-some-against-none", "R2-outweighs-a-little-progress"],
)
def test_r2_reduces_held_make_maps_more_urgent(more, less):
    assert more.map_urgency() > less.map_urgency()


@pytest.mark.parametrize(
    "j, reduce_size, reduce_first",
    [
        # progress 0.5; reduces hold 4 of the 16 running: share 0.25 < 0.5
        (job(pending=5, maps=12.0, reduces=4.0), 2.0, True),
        # progress 0.2; share 0.25 > 0.2
        (job(pending=8, maps=12.0, reduces=4.0), 2.0, False),
        # progress 0.8; share 0.75 < 0.8
        (job(pending=2, maps=4.0, reduces=12.0), 2.0, True),
        # no reduce running: the one to place counts, share 2 / (4 + 2) = 0.33 > 0.2 ...
        (job(pending=8, maps=4.0), 2.0, False),
        # ... and 2 / (4 + 2) < 0.5
        (job(pending=5, maps=4.0), 2.0, True),
    ],
    ids=["R3-share-below-progress", "R3-share-above-progress", "R3-late-map-phase",
         "R3-first-reduce-waits", "R3-first-reduce-goes"],
)
def test_r3_reduces_beat_maps_while_their_share_is_below_map_progress(j, reduce_size, reduce_first):
    assert (j.reduce_urgency(reduce_size) > j.map_urgency()) is reduce_first


def test_r3_equal_share_and_progress_tie():
    j = job(pending=5, maps=6.0, reduces=6.0)  # share 0.5 = progress 0.5
    assert j.reduce_urgency(2.0) == pytest.approx(j.map_urgency())


def test_a_job_without_progress_is_not_urgent():
    assert job(pending=10, reduces=6.0).map_urgency() == 0.0
    assert job(pending=10).reduce_urgency(2.0) == 0.0


def test_weighted_size_counts_memory_in_gb():
    assert weighted_size(GB(3, 1), FfdDpConfig()) == 4.0
    assert weighted_size(GB(3, 1), FfdDpConfig(memory_weight=0.5, vcores_weight=2.0)) == 3.5


def _snap(pending, running_maps=0, reduces=0, am=True):
    containers = [running(f"m{i}", "a", "n1", GB(1), 20) for i in range(running_maps)]
    containers += [running(f"r{i}", "a", "n1", GB(2), 10) for i in range(reduces)]
    if am:
        containers.append(running("am", "a", "n1", GB(2), 0, is_am=True))
    requests = [Ask("a", 20, GB(1), pending)] if pending else []
    return snapshot([("n1", GB(64, 64))], [App("a")], requests, containers)


def test_progress_reads_held_resources_by_priority():
    j = Progress(FfdDpConfig()).read(_snap(pending=6, running_maps=3, reduces=2))["a"]
    assert (j.maps_total, j.maps_pending, j.maps_running) == (9, 6, 3)
    assert (j.map_held, j.reduce_held, j.am_held) == (6.0, 6.0, 3.0)


def test_progress_remembers_the_largest_map_count_seen():
    progress = Progress(FfdDpConfig())
    progress.read(_snap(pending=10))
    j = progress.read(_snap(pending=4, running_maps=2))  # four maps have finished meanwhile
    assert (j["a"].maps_total, j["a"].maps_finished(), j["a"].map_progress()) == (10, 4, 0.6)


def test_progress_forgets_apps_that_left():
    progress = Progress(FfdDpConfig())
    progress.read(_snap(pending=10))
    progress.read(snapshot([("n1", GB(8))], [App("b")]))
    assert progress.map_totals == {}
    # the same id coming back is a new job: its total is what it shows now
    assert progress.read(_snap(pending=3))["a"].maps_total == 3


def test_the_map_totals_survive_a_restart():
    before = make_policy("haste")
    before.decide(_snap(pending=10), "n1")
    after = make_policy("haste")
    assert is_stateful(after)
    after.load_state(json.loads(json.dumps(before.save_state())))
    # four maps finished while the server was down: the restored T_i^m still counts them
    assert after.progress.read(_snap(pending=4, running_maps=2))["a"].maps_total == 10


@pytest.mark.parametrize(
    "doc, field",
    [({}, "map_totals"), ({"map_totals": []}, "map_totals"), ({"map_totals": {"a": {"20": -1}}}, "map_totals.a"),
     ({"map_totals": {"a": {"map": 3}}}, "map_totals.a"), ({"map_totals": {"a": {"20": 2.5}}}, "map_totals.a")],
    ids=["missing", "not-an-object", "negative", "priority-not-a-number", "count-not-an-integer"],
)
def test_malformed_state_is_refused_naming_the_field(doc, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        Progress(FfdDpConfig()).load(doc)
