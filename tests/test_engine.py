"""The validator: every way a decision can be unsafe is refused, with a reason."""

import logging

import pytest
from snapshots import GB, running, snapshot

from yarnctl.engine import Engine, validate
from yarnctl.model import App, Assignment, Decision, Kill, Locality, Node, NodeResize, Ask, Resources
from yarnctl.state import snapshot_of
from yarnctl.policies.contract import PolicyBase

APPS = [App("a1", submit_s=0), App("a2", submit_s=1)]
REQS = [Ask("a1", 20, GB(1), 3), Ask("a2", 10, GB(3), 2)]
SNAP = snapshot([("n1", GB(4, 8)), ("n2", GB(8, 8))], APPS, REQS,
                [running("c1", "a2", "n2", GB(3))])


@pytest.mark.parametrize(
    "decision, node, reason",
    [
        (Decision((Assignment("a1", 20, "n9", 1),)), None, "unknown node n9"),
        (Decision((Assignment("zz", 20, "n1", 1),)), None, "unknown app zz"),
        (Decision((Assignment("a1", 10, "n1", 1),)), None, "no outstanding request at priority 10"),
        (Decision((Assignment("a1", 20, "n1", 4),)), None, "only 3 requested"),
        (Decision((Assignment("a1", 20, "n1", 2), Assignment("a1", 20, "n2", 2))), None, "only 3 requested"),
        (Decision((Assignment("a2", 10, "n1", 2),)), None, "would exceed node n1"),
        (Decision((Assignment("a1", 20, "n1", 0),)), None, "non-positive count"),
        (Decision((Assignment("a1", 20, "n2", 1),)), "n1", "while n1 is heartbeating"),
        (Decision(kills=(Kill("nope"),)), None, "unknown container nope"),
        (Decision(kills=(Kill("c1"), Kill("c1"))), None, "killed twice"),
        (Decision(resizes=(NodeResize("n1", Resources(-1, 0)),)), None, "negative capacity"),
    ],
    ids=["unknown-node", "unknown-app", "unknown-priority", "more-than-requested",
         "more-than-requested-across-nodes", "over-capacity", "zero-count", "other-node",
         "unknown-container", "double-kill", "negative-resize"],
)
def test_unsafe_parts_are_rejected_with_a_reason(decision, node, reason):
    result = validate(SNAP, decision, node)
    assert result.rejected, "expected a rejection"
    assert reason in result.rejected[-1].reason


def test_capacity_is_counted_cumulatively_and_safe_parts_survive():
    d = Decision((Assignment("a2", 10, "n2", 1), Assignment("a1", 20, "n2", 2), Assignment("a1", 20, "n2", 1)))
    result = validate(SNAP, d, "n2")
    # n2 has 8 GB with 3 GB used: 3 GB + 2 x 1 GB fit, the last 1 GB does not
    assert result.accepted.assignments == d.assignments[:2]
    assert len(result.rejected) == 1 and "would exceed" in result.rejected[0].reason


def test_kills_and_resizes_change_the_room_assignments_see():
    # killing c1 frees 3 GB on n2 so two 3 GB containers fit; shrinking n1 to 1 GB leaves room for one
    d = Decision((Assignment("a2", 10, "n2", 2), Assignment("a1", 20, "n1", 2)),
                 kills=(Kill("c1"),), resizes=(NodeResize("n1", GB(1, 8)),))
    result = validate(SNAP, d)
    assert [a.count for a in result.accepted.assignments] == [2]
    assert result.accepted.kills == d.kills and result.accepted.resizes == d.resizes
    assert "would exceed node n1" in result.rejected[0].reason


def test_strict_locality_is_enforced():
    snap = snapshot([("n1", GB(8)), ("n2", GB(8))], [App("a1")],
                    [Ask("a1", 20, GB(1), 2, relax_locality=False),
                     Ask("a1", 20, GB(1), 2, resource_name="n2")])
    assert validate(snap, Decision((Assignment("a1", 20, "n1", 1),))).rejected
    assert not validate(snap, Decision((Assignment("a1", 20, "n2", 1),))).rejected


@pytest.mark.parametrize(
    "local, node, allowed",
    [
        ("h2", "h2:45454", True),          # live ids are host:port, AMs ask by bare host name
        ("h2:45454", "h2:45454", True),
        ("h2", "h1:45454", False),
        ("h", "h2:45454", False),          # a prefix of the host is not the host
        ("/r2", "h2:45454", True),
    ],
    ids=["bare-host", "host-port", "other-host", "host-prefix", "rack"],
)
def test_strict_locality_accepts_the_host_part_of_host_port(local, node, allowed):
    snap = snapshot_of(
        0.0, [Node("h1:45454", "/r1", GB(8)), Node("h2:45454", "/r2", GB(8))], [App("a1")],
        [Ask("a1", 20, GB(1), 2, relax_locality=False),
         Ask("a1", 20, GB(1), 2, resource_name=local,
                 locality=Locality.RACK if local.startswith("/") else Locality.NODE)])
    rejected = validate(snap, Decision((Assignment("a1", 20, node, 1),)), node).rejected
    assert not rejected if allowed else rejected


class _Broken(PolicyBase):
    name = "broken"

    def decide(self, snap, node_id):
        raise RuntimeError("boom")


class _Garbage(PolicyBase):
    name = "garbage"

    def decide(self, snap, node_id):
        return {"assign": "everything"}


class _Greedy(PolicyBase):
    name = "greedy"

    def decide(self, snap, node_id):
        return Decision((Assignment("a1", 20, node_id, 99),))


@pytest.mark.parametrize("policy, counter", [(_Broken(), "policy_errors"), (_Garbage(), "policy_errors"),
                                             (_Greedy(), "rejections")],
                         ids=["raises", "returns-garbage", "over-asks"])
def test_engine_survives_bad_policies_and_counts_them(policy, counter, caplog):
    engine = Engine(policy)
    with caplog.at_level(logging.WARNING):
        result = engine.decide(SNAP, "n1")
    assert result.accepted.is_empty()
    assert engine.stats[counter] == 1
    assert caplog.records, "the failure is logged"


def test_a_node_left_rescaled_is_restored_for_a_policy_that_does_not_resize():
    """A node an earlier policy grew (registered 4 GB, capacity 9 GB) gets its registered size back before fifo
    places anything on it; a policy that rescales nodes itself (feedback) is left to decide on the grown node."""
    from yarnctl.policies import make_policy

    grown = snapshot([("n1", GB(9, 8), GB(4, 8)), ("n2", GB(8, 8))], APPS, REQS)
    fifo = Engine(make_policy("fifo"))
    first = fifo.decide(grown, "n1").accepted
    assert first == Decision(resizes=(NodeResize("n1", GB(4, 8)),)) and fifo.stats["restores"] == 1
    assert fifo.decide(grown, "n2").accepted.containers() > 0  # a node at its registered size: decided as ever
    restored = snapshot([("n1", GB(4, 8), GB(4, 8)), ("n2", GB(8, 8))], APPS, REQS)
    assert fifo.decide(restored, "n1").accepted.containers() > 0 and fifo.stats["restores"] == 1
    feedback = Engine(make_policy("feedback"))
    assert feedback.decide(grown, "n1").accepted.containers() > 0 and feedback.stats["restores"] == 0
