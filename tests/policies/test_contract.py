"""The policy contract: every registered policy is a Policy, with its hooks and capability flags as declared."""

from __future__ import annotations

import pytest

from yarnctl.policies import REGISTRY, make_policy
from yarnctl.policies.contract import Policy, PolicyBase, is_stateful, is_tunable

# name: (tunable, stateful, time_dependent, resizes_nodes)
EXPECTED = {
    "fifo": (False, False, False, False),
    "fair": (False, False, False, False),
    "drf": (False, False, False, False),
    "capacity": (False, False, False, False),
    "dress": (True, False, False, False),     # δ retuned by Alg. 3 and phases learnt on control-loop ticks only
    "ffd-dp": (False, False, False, False),
    "haste": (False, True, False, False),     # job progress kept across restarts
    "haste-a": (False, True, False, False),
    "af": (True, True, False, False),         # a zero window: memoryless, so idle heartbeats may be skipped
    "lt-drf": (True, True, True, False),
    "lt-af": (True, True, True, False),
    "hmrf": (True, True, True, False),
    "feedback": (True, False, True, True),    # rescales nodes to their estimated room
    "opera": (True, False, True, True),
}


def test_every_registered_policy_is_listed_here() -> None:
    assert set(EXPECTED) == set(REGISTRY)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hooks_and_flags(name: str) -> None:
    p = make_policy(name)
    assert isinstance(p, Policy) and isinstance(p, PolicyBase) and p.name == name
    assert (is_tunable(p), is_stateful(p), p.time_dependent, p.resizes_nodes) == EXPECTED[name]
    # only the H-MRF family is tunable without reading what it is fed: it reports its accounting
    assert p.observes == (name not in ("af", "lt-drf", "lt-af", "hmrf"))
