"""HaSTE-A ([HaSTE] Sec. 4): alignment (Eq. 5, R4-R6), the Eq. 6 preference, iteration tags."""

import pytest
import yaml
from snapshots import GB, running, snapshot

from yarnctl.engine import Engine
from yarnctl.model import App, Ask
from yarnctl.policies import make_policy
from yarnctl.policies.alignment import HasteAConfig, alignments, iterations
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import parse_workload
from yarnctl.policies.contract import PolicyBase


def tagged(app_id, total=None, stage=None, submit=0.0):
    tags = ([f"yarnctl.iterations={total}"] if total else []) + ([f"yarnctl.stage={stage}"] if stage else [])
    return App(app_id, submit_s=submit, tags=tuple(tags))


@pytest.mark.parametrize(
    "tags, expected",
    [
        ((), (1, 0)),
        (("yarnctl.iterations=6", "yarnctl.stage=3"), (6, 2)),
        (("yarnctl.iterations=6",), (6, 0)),
        (("etl", "yarnctl.stage=2", "yarnctl.iterations=4"), (4, 1)),
        (("yarnctl.iterations=3", "yarnctl.stage=9"), (3, 2)),  # a stage past the last is the last
        (("yarnctl.iterations=zero", "yarnctl.stage=-1"), (1, 0)),
        (("yarnctl.iterations=0",), (1, 0)),
    ],
    ids=["plain", "iteration-3-of-6", "no-stage-tag", "other-tags-and-order", "stage-clamped",
         "malformed", "zero-iterations"],
)
def test_iterations_from_tags(tags, expected):
    assert iterations(App("a", tags=tags)) == expected


def test_eq_5_values():
    snap = snapshot([("n1", GB(8))], [App("plain"), tagged("kmeans", 6, 3), tagged("pagerank", 2, 1)])
    # sum of I_j = 1 + 6 + 2 = 9
    assert alignments(snap) == pytest.approx({"plain": 1 / 9, "kmeans": 8 / 9, "pagerank": 2 / 9})


@pytest.mark.parametrize(
    "higher, lower",
    [
        (tagged("it", 2, 1), App("plain")),
        (tagged("long", 6, 1), tagged("short", 2, 1)),
        (tagged("late", 4, 4), tagged("early", 4, 2)),
        (tagged("long-early", 6, 1), tagged("short-late", 2, 2)),  # 6 + 0 against 2 + 1
    ],
    ids=["R4-iterative-over-plain", "R5-more-iterations", "R6-further-along", "R5-outweighs-R6"],
)
def test_eq_5_ordering(higher, lower):
    a = alignments(snapshot([("n1", GB(8))], [higher, lower]))
    assert a[higher.id] > a[lower.id]


def test_sec_5_2_3_beta_defaults():
    assert (HasteAConfig().beta_fitness, HasteAConfig().beta_urgency, HasteAConfig().beta_alignment) == (0.2, 0.2, 0.6)


def _contest():
    # on n1's <3 GB, 7 cores> "plain" fits better (<3 GB, 1 core>: 16 against 10) and is more
    # urgent (two of its seven maps run); "iter" runs the 2nd of 6 iterations
    apps = [App("plain", submit_s=0), tagged("iter", 6, 2, submit=1)]
    requests = [Ask("plain", 20, GB(3), 5), Ask("iter", 20, GB(1), 20)]
    containers = [running(f"p{i}", "plain", "n2", GB(3)) for i in range(2)]
    containers += [running("am-p", "plain", "n2", GB(2), 0, is_am=True),
                   running("am-i", "iter", "n1", GB(2), 0, is_am=True)]
    return snapshot([("n1", GB(5, 8)), ("n2", GB(9, 8))], apps, requests, containers)


def test_eq_6_alignment_moves_the_iterative_job_first():
    first = lambda policy, **p: make_policy(policy, p).decide(_contest(), "n1").assignments[0].app_id  # noqa: E731
    assert first("haste") == "plain"
    assert first("haste-a") == "iter"
    # with beta_3 = 0 HaSTE-A ranks as HaSTE does
    assert first("haste-a", beta_alignment=0.0) == "plain"


def test_the_simulator_tags_each_iteration():
    doc = {
        "cluster": {"nodes": 1, "node": {"memory_mb": 4096, "vcores": 4}},
        "jobs": [{"id": "km", "type": "generic", "iterations": 3, "am": False, "tags": ["ml"],
                  "stages": [{"name": "map", "tasks": 2, "resource": {"memory_mb": 1024, "vcores": 1},
                              "duration": 5}]}],
    }
    seen = []

    class Recorder(PolicyBase):
        name = "recorder"

        def __init__(self):
            self.inner = make_policy("haste-a")

        def decide(self, snap, node_id):
            seen.extend(a.tags for a in snap.apps.values())
            return self.inner.decide(snap, node_id)

    SimCluster(parse_workload(yaml.safe_dump(doc), "it.yaml"), Engine(Recorder())).run()
    assert list(dict.fromkeys(seen)) == [("ml", "yarnctl.iterations=3", f"yarnctl.stage={k}") for k in (1, 2, 3)]
