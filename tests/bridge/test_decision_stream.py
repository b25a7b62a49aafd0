"""Decisions unchanged through the bridge: every policy answers the same heartbeats with the same responses.

The live path (wire parse, mirror, store, snapshot, engine, encode) is tuned for speed; none of that may
change an answer. `yarnctl.bridge.bench`'s stand-in RM (the ground truth of the decide benchmark) drives
`PolicyService.decide` through a full sync and a few hundred deltas per policy on a small cluster, and
the SHA-256 of every response, in order, is compared with `decision_stream.json`, written by the code
before a change. A change meant to alter decisions rewrites it, and its commit says why:

    .venv/bin/python tests/bridge/test_decision_stream.py --write
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

from yarnctl.bridge.bench import _FakeRM
from yarnctl.bridge.service import PolicyService
from yarnctl.policies import REGISTRY, make_policy

GOLDEN = Path(__file__).with_name("decision_stream.json")
NODES, APPS, CALLS = 40, 30, 400


def stream_hash(policy: str) -> tuple[str, int]:
    """The hash of `policy`'s responses to the stand-in RM's heartbeats, and the containers they assigned."""
    rm = _FakeRM(NODES, APPS, random.Random(7))
    service = PolicyService(make_policy(policy))
    digest = hashlib.sha256()
    resp = service.decide(rm.full(0))
    digest.update(resp.encode())
    rm.apply(0, resp)
    for k in range(CALLS):
        node = (k * 7 + 1) % NODES  # not round-robin: some nodes come back before others
        resp = service.decide(rm.delta(node, 1 + k % 3))
        digest.update(resp.encode())
        rm.apply(node, resp)
    st = service.stats
    assert (st.resync, st.errors) == (0, 0), st.as_dict()  # the stand-in RM and the mirror agree throughout
    return digest.hexdigest(), st.assigned


@pytest.mark.parametrize("policy", sorted(REGISTRY))
def test_the_bridge_decides_as_before(policy: str) -> None:
    golden = json.loads(GOLDEN.read_text())
    assert list(stream_hash(policy)) == golden[policy]


def test_every_policy_has_a_recorded_stream() -> None:
    assert sorted(json.loads(GOLDEN.read_text())) == sorted(REGISTRY)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    GOLDEN.write_text(json.dumps({p: list(stream_hash(p)) for p in sorted(REGISTRY)}, indent=1) + "\n")
    print(f"wrote {GOLDEN}")
