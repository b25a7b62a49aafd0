"""FIFO: FifoScheduler's app order and its stop-at-the-first-unservable-priority rule."""

import pytest
from snapshots import GB, running, snapshot

from yarnctl.model import App, Assignment, Ask
from yarnctl.policies import make_policy


def decide(snap, node="n1"):
    return make_policy("fifo").decide(snap, node).assignments


@pytest.mark.parametrize(
    "apps, requests, node_gb, expected",
    [
        # the older app takes what fits, the younger the rest
        ([App("b", submit_s=0), App("a", submit_s=5)],
         [Ask("a", 20, GB(1), 4), Ask("b", 20, GB(1), 2)], 4,
         [Assignment("b", 20, "n1", 2), Assignment("a", 20, "n1", 2)]),
        # equal submit times tie-break on id
        ([App("b"), App("a")], [Ask("a", 20, GB(2), 2), Ask("b", 20, GB(2), 2)], 2,
         [Assignment("a", 20, "n1", 1)]),
        # priorities ascending within an app: reduce (10) before map (20)
        ([App("a")], [Ask("a", 20, GB(1), 4), Ask("a", 10, GB(2), 1)], 4,
         [Assignment("a", 10, "n1", 1), Assignment("a", 20, "n1", 2)]),
        # FifoScheduler:504 - a priority that gets nothing stops the app; the next app is served
        ([App("a", submit_s=0), App("b", submit_s=1)],
         [Ask("a", 10, GB(6), 1), Ask("a", 20, GB(1), 4), Ask("b", 20, GB(1), 1)], 4,
         [Assignment("b", 20, "n1", 1)]),
        # a priority with nothing left to give (a table keeps its zero rows) neither serves nor stops the app
        ([App("a", submit_s=0), App("b", submit_s=1)],
         [Ask("a", 10, GB(6), 0), Ask("a", 20, GB(1), 3), Ask("b", 20, GB(1), 2)], 4,
         [Assignment("a", 20, "n1", 3), Assignment("b", 20, "n1", 1)]),
    ],
    ids=["submit-order", "tie-on-id", "priority-order", "stop-at-first-unservable-priority", "zero-row-passed"],
)
def test_fifo_order(apps, requests, node_gb, expected):
    snap = snapshot([("n1", GB(node_gb, 8))], apps, requests)
    assert list(decide(snap)) == expected


def test_fifo_counts_vcores_and_existing_allocation():
    snap = snapshot([("n1", GB(8, 4))], [App("a")], [Ask("a", 20, GB(1, 2), 5)],
                    [running("c0", "a", "n1", GB(1, 2))])
    # 4 vcores with 2 used leave room for one 2-vcore container, though memory would take 7
    assert decide(snap) == (Assignment("a", 20, "n1", 1),)


def test_fifo_gives_nothing_to_a_full_node():
    snap = snapshot([("n1", GB(2, 8))], [App("a")], [Ask("a", 20, GB(1), 5)],
                    [running("c0", "a", "n1", GB(2))])
    assert decide(snap) == ()
