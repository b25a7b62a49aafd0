"""Wire v3's queue tree and app activation (a scheduler with queues: the shim on CapacityScheduler), end to end in Python.

The mirror keeps the tree and which apps the scheduler has not activated; the engine hides an inactive
app's asks from the policy and refuses what it would give one (`am-limit`) or what would take a queue
past its maximum capacity (`queue-max`), as the shim's DecisionApplier does.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from wirefixtures import APP1, APP2, C1, SCHEMA, doc

from yarnctl.bridge.mirror import Mirror
from yarnctl.bridge.wire import WireError, parse_request
from yarnctl.engine import Engine, validate
from yarnctl.model import Assignment, Decision, Kill, Queue, RejectCode, Resources
from yarnctl.policies import make_policy, queue_limit

# root; a (70%, up to 100%); b (30%, up to 40%: 6,144 MB of the fixture's 16 GB in whole GBs)
QUEUES = [["root", "root", "", 0, 1, 1.0, 1.0, 1.0, 1.0, 100, 1.0, 16384, 16],
          ["a", "root.a", "root", 1, 1, 0.7, 1.0, 0.7, 1.0, 50, 2.0, 16384, 16],
          ["default", "root.default", "root", 1, 1, 0.3, 0.4, 0.3, 0.4, 100, 1.0, 6144, 6]]


def _full(active2: int = 1, queues: list[list[Any]] = QUEUES) -> dict[str, Any]:
    req = doc("request-full.json")
    req["queues"] = queues
    for row in req["apps"]:
        row.append(active2 if row[0] == APP2 else 1)
    return req


def _mirror(req: dict[str, Any]) -> Mirror:
    m = Mirror()
    m.apply(parse_request(json.dumps(req)))
    return m


def test_the_tree_and_an_inactive_app_reach_the_snapshot_and_follow_the_deltas() -> None:
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(_full(0))
    m = _mirror(_full(0))
    snap = m.snapshot(0)
    assert list(snap.queues) == ["root", "a", "default"]
    assert snap.queues["default"] == Queue("default", "root.default", "root", True, True, 0.3, 0.4, 0.3, 0.4, 100,
                                           1.0, Resources(6144, 6))
    assert snap.queues["root"].parent is None and snap.queues["a"].user_limit_factor == 2.0
    assert snap.inactive == frozenset({APP2})
    # a delta without `queues` keeps the tree; the app's row again with 1 activates it
    delta = doc("request-delta.json")
    delta["apps"] = [row + [1] for row in delta.get("apps", []) if row[0] == APP2] or \
        [[APP2, "default", "bob", "YARN", "DistributedShell", ["yarnctl.iterations=3"], 1700000001000, 1]]
    m.apply(parse_request(json.dumps(delta)))
    snap = m.snapshot(1)
    assert snap.inactive == frozenset() and list(snap.queues) == ["root", "a", "default"]


def test_a_malformed_queue_row_names_its_index_and_shape() -> None:
    req = _full()
    req["queues"] = [QUEUES[0], ["a", "root.a", "root", 1, 1, 1.7, 1.0, 0.7, 1.0, 50, 2.0, 16384, 16]]
    with pytest.raises(WireError, match=r"^queues\[1\]: expected \[name, path, parent path, leaf 0/1"):
        parse_request(json.dumps(req))


def test_the_engine_hides_an_inactive_app_and_refuses_what_would_reach_it() -> None:
    roomy = [*QUEUES[:2], ["default", "root.default", "root", 1, 1, 0.3, 1.0, 0.3, 1.0, 100, 1.0, 16384, 16]]
    node = "n2:45454"

    def only_app2_asks(active2: int) -> dict[str, Any]:
        req = _full(active2, roomy)
        req["asks"] = [row for row in req["asks"] if row[0] == APP2]  # its AM
        return req

    active = Engine(make_policy("fifo")).decide(_mirror(only_app2_asks(1)).snapshot(0), node)
    assert [a.app_id for a in active.accepted.assignments] == [APP2]  # the control: active, its AM is placed
    snap = _mirror(only_app2_asks(0)).snapshot(0)
    result = Engine(make_policy("fifo")).decide(snap, node)
    assert result.rejected == () and result.accepted.assignments == ()
    refused = validate(snap, Decision((Assignment(APP2, 0, node, 1),)), node)
    assert [r.code for r in refused.rejected] == [RejectCode.AM_LIMIT]
    assert "not yet activated" in refused.rejected[0].reason


def test_past_the_queue_maximum_is_refused_unless_a_kill_in_the_same_decision_makes_room() -> None:
    req = _full()
    req["asks"] = [[APP1, 20, 1024, 1, 8, 1, []]]  # app1 (queue default: 6,144 MB at most) wants eight more maps
    snap = _mirror(req).snapshot(0)
    held = snap.queue_allocated["default"].memory_mb  # 3,072 MB of the fixture's containers
    room = (6144 - held) // 1024
    node = "n2:45454"
    over = validate(snap, Decision((Assignment(APP1, 20, node, room + 1),)), node)
    assert [r.code for r in over.rejected] == [RejectCode.QUEUE_MAX]
    assert "past its maximum 6144 MB" in over.rejected[0].reason
    assert validate(snap, Decision((Assignment(APP1, 20, node, room),)), node).rejected == ()
    freed = snap.containers[C1].resource.memory_mb // 1024  # the AM's 2 GB, killed first, as the shim does
    ok = validate(snap, Decision((Assignment(APP1, 20, node, room + freed),), kills=(Kill(C1),)), node)
    assert ok.rejected == ()


def test_policies_see_asks_capped_at_their_queues_room_so_a_queue_blind_one_is_not_refused() -> None:
    req = _full()
    # app1 (queue default: 6,144 MB at most, 3,072 held) wants eight 1 GB maps and a 4 GB reduce
    req["asks"] = [[APP1, 10, 4096, 1, 1, 1, []], [APP1, 20, 1024, 1, 8, 1, [["n2", 8, 1]]]]
    snap = _mirror(req).snapshot(0)
    seen = queue_limit.within(snap)
    assert [(r.priority, r.resource_name, r.count) for r in seen.asks[APP1]] == [(20, "*", 3), (20, "n2", 8)]
    assert snap.asks[APP1][0].count == 1  # the real snapshot keeps the real asks
    result = Engine(make_policy("fifo")).decide(snap, "n2:45454")
    assert result.rejected == ()
    assert [(a.app_id, a.priority, a.count) for a in result.accepted.assignments] == [(APP1, 20, 3)]
    # without the cap fifo asks for what fits the node, and the validator refuses the whole row
    blind = validate(snap, make_policy("fifo").decide(snap, "n2:45454"), "n2:45454")
    assert {r.code for r in blind.rejected} == {RejectCode.QUEUE_MAX}


def test_the_capacity_policy_takes_its_queues_from_the_tree_unless_its_parameters_name_them() -> None:
    from yarnctl.policies.capacity import Capacity, CapacityConfig, CapacityQueue

    snap = _mirror(_full()).snapshot(0)
    confs = Capacity()._queue_confs(snap)
    assert confs["default"] == CapacityQueue(30.0, 40.0, 1.0, 100.0)
    assert confs["a"] == CapacityQueue(70.0, 100.0, 2.0, 50.0)
    overridden = Capacity(CapacityConfig(queues={"default": CapacityQueue(50.0, 60.0)}))._queue_confs(snap)
    assert overridden["default"] == CapacityQueue(50.0, 60.0) and overridden["a"] == confs["a"]


def test_the_exporter_shows_each_queue_held_and_its_maximum() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from yarnctl.bridge.service import PolicyService
    from yarnctl.metrics import ServeCollector

    service = PolicyService(make_policy("fifo"))
    service.decide(json.dumps(_full()))
    registry = CollectorRegistry()
    registry.register(ServeCollector(service))
    lines = dict(line.rsplit(" ", 1) for line in generate_latest(registry).decode().splitlines()
                 if line.startswith("yarnctl_queue_"))
    # app1's 2 GB AM and 1 GB map, in default: the last decided snapshot, before its own answer lands
    assert float(lines['yarnctl_queue_allocated_bytes{queue="default"}']) == 3 << 30
    assert float(lines['yarnctl_queue_allocated_bytes{queue="a"}']) == 0
    assert float(lines['yarnctl_queue_max_bytes{queue="default"}']) == 6144 << 20
    assert float(lines['yarnctl_queue_max_bytes{queue="a"}']) == 16384 << 20
    assert 'yarnctl_queue_max_bytes{queue="root"}' not in lines  # leaves only


def test_user_limits_capacity_scheduler_does_not_check_are_accepted_and_leaves_win_a_shared_name() -> None:
    req = _full()
    # parent root.x and leaf root.z.x share a name (Hadoop 2.7 keeps only leaf names unique); odd user limits
    req["queues"] = [QUEUES[0], ["x", "root.x", "root", 0, 1, 0.5, 1.0, 0.5, 1.0, 100, 1.0, 16384, 16],
                     ["y", "root.x.y", "root.x", 1, 1, 1.0, 1.0, 0.5, 1.0, 150, 0.0, 16384, 16],
                     ["z", "root.z", "root", 0, 1, 0.5, 1.0, 0.5, 1.0, 100, 1.0, 16384, 16],
                     ["x", "root.z.x", "root.z", 1, 1, 1.0, 1.0, 0.5, 1.0, 100, 1.0, 16384, 16]]
    snap = _mirror(req).snapshot(0)
    assert snap.queues["y"].user_limit_percent == 150 and snap.queues["y"].user_limit_factor == 0.0
    assert snap.queues["x"].path == "root.z.x" and snap.queues["x"].leaf
