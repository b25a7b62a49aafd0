"""`yarnctl serve` without --rm: a tunable policy ticks on the shim's own reports (MirrorSource)."""

from __future__ import annotations

import json

import pytest

from snapshots import GB, running, snapshot

from yarnctl.bridge.mirrorsource import MirrorSource
from yarnctl.bridge.service import PolicyService
from yarnctl.bridge.wire import VERSION
from yarnctl.errors import ConfigError
from yarnctl.model import ANY, App, ClusterSnapshot, Observation, Ask
from yarnctl.policies import make_policy
from yarnctl.rm.observe import ControlLoop

NODES = [("n1", GB(8, 8)), ("n2", GB(8, 8))]
APPS = [App("big", submit_s=0.0), App("small", submit_s=1.0)]
HELD = [running("c1", "big", "n1", GB(1), is_am=True), running("c2", "big", "n1", GB(7, 7)),
        running("c3", "big", "n2", GB(6, 6)), running("c4", "small", "n2", GB(1), is_am=True)]
ASKS = [Ask("big", 20, GB(1), 10), Ask("small", 20, GB(1), 1)]


def _sync(service: PolicyService, snap: ClusterSnapshot, node: str = "n1", seq: int = 1) -> None:
    """Send `snap` to the service as the shim's full sync from `node`: its mirror then holds that cluster."""
    held = snap.nodes[node].allocated
    doc = {"v": VERSION, "seq": seq, "full": True, "t": 1000, "node": node, "min": [1024, 1],
           "used": [held.memory_mb, held.vcores, len(snap.node_containers[node])],
           "nodes": [[n.id, n.rack, n.capacity.memory_mb, n.capacity.vcores] for n in snap.nodes.values()],
           "apps": [[a.id, a.queue, a.user, a.type, a.name, list(a.tags), int(a.submit_s * 1000)]
                    for a in snap.apps.values()],
           "asks": [[r.app_id, r.priority, r.capability.memory_mb, r.capability.vcores, r.count, 1, []]
                    for rows in snap.asks.values() for r in rows if r.resource_name == ANY],
           "alloc": [[c.id, c.app_id, c.node_id, c.priority, c.resource.memory_mb, c.resource.vcores, 0, int(c.is_am), 0]
                     for c in snap.containers.values()]}
    synced = service.stats.full_syncs
    service.decide(json.dumps(doc))
    assert service.stats.full_syncs == synced + 1 and service.mirror.seq == seq


def test_observation_from_snapshot_carries_allocations_and_asks_but_no_usage() -> None:
    snap = snapshot(NODES, APPS, ASKS, HELD)
    obs = Observation.from_snapshot(snap)
    assert obs.snapshot is snap and not obs.usage_measured and obs.containers == {}
    assert obs.apps["big"].allocated == GB(14, 14) and obs.apps["big"].pending_containers == 10
    assert obs.apps["small"].pending == GB(1) and obs.apps["small"].memory_seconds == 0
    assert obs.nodes["n2"].allocated == GB(7, 7)


def test_dress_moves_delta_from_the_mirror_alone() -> None:
    service = PolicyService(make_policy("dress"))
    loop = ControlLoop(MirrorSource(service), service.tune, 1.0)
    assert loop.poll().reading is not None  # before any heartbeat: an empty observation, nothing changes
    assert service.tuning["dress_reserve_ratio"] == 0.1
    _sync(service, snapshot(NODES, APPS, ASKS, HELD))
    state = loop.poll()
    assert not state.stale and state.feed_errors == 0
    # "small" asks for one slot (SD), the cluster is nearly full (A_c = 2 of 16 vcores) and big waits for 10:
    # Alg. 3 moves δ; with the mirror alone it did not tick at all before
    assert service.tuning["dress_reserve_ratio"] != 0.1
    assert "small" in service.engine.policy.categories  # type: ignore[attr-defined]


def test_feedback_is_told_usage_is_unknown_and_does_not_resize() -> None:
    service = PolicyService(make_policy("feedback"))
    _sync(service, snapshot(NODES, APPS, ASKS, HELD))
    ControlLoop(MirrorSource(service), service.tune, 1.0).poll()
    policy = service.engine.policy
    snap = service.last_snapshot
    # no measurement: every container is estimated at its allocation (Eq. 2), so no node is offered more than
    # it is configured with; a mirror tick must never read as "idle"
    assert policy.estimator.total().memory_mb == 15 * 1024  # type: ignore[attr-defined]
    for nid in ("n1", "n2"):
        assert policy.capacity_for(snap, snap.nodes[nid]).memory_mb <= 8 * 1024  # type: ignore[attr-defined]


def test_a_tick_while_the_mirror_awaits_a_full_sync_is_stale_not_an_empty_cluster() -> None:
    """After a failed call the mirror awaits the shim's full sync: ticks then are stale and the policy keeps its estimates
    (an empty observation would tell usage feedback every node had gone); the last good cluster is still shown if the
    failed call did not change the mirror, else nothing."""
    service = PolicyService(make_policy("feedback"))
    loop = ControlLoop(MirrorSource(service), service.tune, 1.0)
    _sync(service, snapshot(NODES, APPS, ASKS, HELD))
    assert not loop.poll().stale
    estimated = service.engine.policy.estimator.total()  # type: ignore[attr-defined]
    assert '"err"' in service.decide("not json") and service.awaiting_full_sync  # the mirror was not touched
    state = loop.poll()
    assert state.stale and "awaits its full sync" in state.error and state.feed_errors == 0
    assert service.engine.policy.estimator.total() == estimated  # type: ignore[attr-defined]
    shown = service.last_snapshot
    assert shown is not None and set(shown.nodes) == {"n1", "n2"} and len(shown.containers) == len(HELD)
    assert [n[0] for n in service.control({"command": "state"})["state"]["nodes"]] == ["n1", "n2"]
    _sync(service, snapshot(NODES, APPS, ASKS, HELD), seq=2)
    assert not service.awaiting_full_sync and not loop.poll().stale
    # a delta that fails part-way: its app was added before its container named an unknown node
    held = service.mirror.state.node_allocated("n1")
    bad = {"v": VERSION, "seq": 3, "base": 2, "full": False, "t": 3000, "node": "n1",
           "used": [held.memory_mb, held.vcores, 2], "apps": [["late", "default", "u", "MAPREDUCE", "j", [], 3000]],
           "alloc": [["c9", "late", "nowhere", 20, 1024, 1, 3000, 0, 0]]}
    assert '"resync"' in service.decide(json.dumps(bad)).replace(" ", "") and service.awaiting_full_sync
    assert service.last_snapshot is None and loop.poll().stale
    with pytest.raises(ConfigError, match="awaits the shim's full sync after a failed call that changed it"):
        service.control({"command": "state"})
    _sync(service, snapshot(NODES, APPS, ASKS, HELD), seq=4)
    assert not service.awaiting_full_sync and not loop.poll().stale and service.last_snapshot is not None
