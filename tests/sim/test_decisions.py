"""Decisions unchanged: every built-in workload under every policy makes the decisions recorded in decisions.json.

A speed-up (an incremental ordering, a cached sum, a skipped heartbeat) must not change what any policy
decides. Each case runs the workload's first `HORIZON_S` simulated seconds (the whole of the small ones)
and hashes every container's and job's record (`SimRun.fingerprint`). A change that is meant to alter
decisions (a model fix) rewrites the file, and its commit says why:

    .venv/bin/python tests/sim/test_decisions.py --write
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from yarnctl.engine import Engine
from yarnctl.policies import REGISTRY, make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.workload import builtin_names, load_workload

GOLDEN = Path(__file__).with_name("decisions.json")
HORIZON_S = 1800.0  # long enough for every small workload to finish and a big one to fill and drain nodes
CASES = [(w, p) for w in builtin_names() for p in sorted(REGISTRY)]
# the workloads whose cases take seconds each: `make test` runs them, `make check` leaves them out
HEAVY = {"hmrf-macro", "opera-mr-spark", "opera-mr6", "dress-spark20-tasks"}


def fingerprint(workload: str, policy: str) -> str:
    """The hash of one capped run's records."""
    run = SimCluster(load_workload(workload), Engine(make_policy(policy)), max_time_s=HORIZON_S).run()
    return run.fingerprint()


@pytest.fixture(scope="module")
def golden() -> dict[str, str]:
    return json.loads(GOLDEN.read_text())


def test_every_builtin_workload_and_policy_is_recorded(golden: dict[str, str]) -> None:
    assert sorted(golden) == sorted(f"{w}/{p}" for w, p in CASES)


@pytest.mark.parametrize(("workload", "policy"), [
    pytest.param(w, p, id=f"{w}/{p}", marks=[pytest.mark.slow] if w in HEAVY else []) for w, p in CASES])
def test_decisions_unchanged(workload: str, policy: str, golden: dict[str, str]) -> None:
    assert fingerprint(workload, policy) == golden[f"{workload}/{policy}"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/sim/test_decisions.py --write")
    GOLDEN.write_text(json.dumps({f"{w}/{p}": fingerprint(w, p) for w, p in CASES}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(CASES)} fingerprints into {GOLDEN}")
