"""The Queue Tracker ([H-MRF] Sec. 6): integration over snapshots, β, persistence."""

import json
import math

import pytest

from yarnctl.fairness.accounting import QueueTracker
from yarnctl.fairness.windows import Window
from yarnctl.model import App, Container, Node, Ask, Resources
from yarnctl.state import snapshot_of

GB = 1024
NODE = Node("n1", "/r", Resources(100 * GB, 100))


def snap(now, held, asked=None):
    """A one-node snapshot where queue q's app holds `held[q]` containers of <1 CPU, 2 GB>."""
    asked = asked or {}
    apps = {f"app-{q}": App(f"app-{q}", queue=q, user=f"u{q}") for q in sorted(set(held) | set(asked))}
    task = Resources(2 * GB, 1)
    containers = {f"c-{q}-{i}": Container(f"c-{q}-{i}", f"app-{q}", "n1", 20, task, 0.0)
                  for q, n in held.items() for i in range(n)}
    requests = [Ask(f"app-{q}", 20, task, n) for q, n in asked.items() if n]
    return snapshot_of(now, [NODE], apps.values(), requests, containers.values())


def test_integrates_allocation_and_nonsharing_allocation_over_time():
    t = QueueTracker()
    t.advance(snap(0, {"a": 30, "b": 10}, {"b": 30}))  # b demands 40 tasks, 25 fit its half
    t.advance(snap(10, {"a": 30, "b": 10}))
    beta, used = t.measured(10)["a"]
    assert used == (30 * 2 * GB * 10, 300)
    assert beta == pytest.approx(30 / 25)  # alone, a would fit 25 tasks <1, 2 GB> in its <50, 50>
    assert t.measured(10)["b"][0] == pytest.approx(10 / 25)


def test_grants_count_from_the_moment_they_are_made():
    t = QueueTracker()
    t.advance(snap(0, {}, {"a": 5}))
    t.grant("a", Resources(2 * GB, 1), 0.0)
    t.advance(snap(4, {"a": 1}))
    assert t.measured(4)["a"][1] == (2 * GB * 4, 4)
    assert t.holding_s("a") == pytest.approx(4)  # Little's law: 4 s of one container per grant


def test_waiting_time_counts_from_the_last_grant_or_the_first_pending():
    t = QueueTracker()
    t.advance(snap(0, {}, {"a": 1}))
    assert t.standing("a", 0).waiting_s == 0
    t.advance(snap(7, {}, {"a": 1}))
    assert t.standing("a", 7).waiting_s == 7
    t.grant("a", Resources(2 * GB, 1), 7)
    t.advance(snap(9, {"a": 1}, {"a": 1}))
    assert t.standing("a", 9).waiting_s == 2


def test_user_entity_groups_by_user():
    t = QueueTracker(entity="user")
    t.advance(snap(0, {"a": 1}))
    assert set(t.accounts) == {"ua"}
    with pytest.raises(ValueError):
        QueueTracker(entity="group")


def test_weights_set_the_share():
    t = QueueTracker(weights={"a": 3.0})
    t.advance(snap(0, {"a": 1, "b": 1}))
    assert t.share("a") == pytest.approx((75 * GB, 75))
    assert t.share("b") == pytest.approx((25 * GB, 25))


def test_state_survives_save_and_load(tmp_path):
    t = QueueTracker(Window("sliding", 600), weights={"a": 2.0})
    t.advance(snap(0, {"a": 3}, {"b": 4}))
    t.grant("b", Resources(2 * GB, 1), 0)
    t.advance(snap(30, {"a": 3, "b": 1}, {"b": 3}))
    path = tmp_path / "hmrf.json"
    t.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["hmrf.json"]  # no temporary file left behind
    json.loads(path.read_text())  # plain JSON
    back = QueueTracker.load(path)
    assert back.to_json() == t.to_json()
    for q in ("a", "b"):
        assert back.standing(q, 40) == t.standing(q, 40)


def test_infinite_values_are_stored_as_null():
    d = QueueTracker().to_json()
    assert d["window"]["length_s"] is None
    assert QueueTracker.from_json(d).window.length_s == math.inf


def test_a_share_follows_the_entities_known_the_weights_and_the_capacity():
    t = QueueTracker()
    t.advance(snap(0, {"a": 1}))
    assert t.share("a") == (100 * GB, 100.0)  # alone: the whole cluster (Eq. 1)
    t.advance(snap(1, {"a": 1, "b": 1}))
    assert t.share("a") == t.share("b") == (50 * GB, 50.0)  # b is known now
    t.weights = {"a": 3.0}
    assert t.share("a") == (75 * GB, 75.0) and t.share("b") == (25 * GB, 25.0)
    t.capacity = Resources(200 * GB, 200)
    assert t.share("b") == (50 * GB, 50.0)


def test_a_stored_vector_that_is_not_two_numbers_is_refused_by_name():
    t = QueueTracker(Window("sliding", 600))
    t.advance(snap(0, {"a": 3}))
    t.advance(snap(10, {"a": 3}))
    doc = json.loads(json.dumps(t.to_json()))
    doc["accounts"]["a"]["alloc"] = [1024.0]
    with pytest.raises(ValueError, match="account a alloc"):
        QueueTracker.from_json(doc)
    doc = json.loads(json.dumps(t.to_json()))
    bucket = next(iter(doc["accounts"]["a"]["used"]["buckets"]))
    doc["accounts"]["a"]["used"]["buckets"][bucket] = [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=f"window bucket {bucket}"):
        QueueTracker.from_json(doc)


def test_a_snapshot_of_another_store_at_the_same_version_is_read():
    """The policy server's mirror starts a new store at each full sync: an equal version there is no unchanged state."""
    t = QueueTracker()
    first, second = snap(0, {"a": 30, "b": 10}), snap(10, {"a": 10, "b": 30})
    assert first.version == second.version >= 0 and first.journal is not second.journal
    t.advance(first)
    t.advance(second)
    t.advance(snap(20, {"a": 10, "b": 30}))
    assert t.measured(20)["a"][1] == (30 * 2 * GB * 10 + 10 * 2 * GB * 10, 30 * 10 + 10 * 10)
