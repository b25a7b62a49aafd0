"""The policy contract in one place: what a policy is, the optional hooks it may add, its capability flags.

Every policy subclasses `PolicyBase` and implements `decide`; it says why an application it left
waiting got nothing (`why_waiting`, `policies/waiting.py`: PolicyBase's generic reason unless the
policy has a more specific one). A policy may add hooks, each a
protocol the engine, the simulator and the policy server test for with `isinstance`:
- `Tunable`: `tune(obs)` and `tuning()`, fed by the control loop (DRESS's δ, usage estimates);
- `Stateful`: `save_state()` and `load_state(doc)`, kept across restarts (H-MRF's accounting).
It declares its capabilities as class (or instance) attributes, defaults in `PolicyBase`:
- `time_dependent`: it learns from every heartbeat, so the simulator may not skip idle ones;
- `resizes_nodes`: it manages node capacities, so the engine does not restore rescaled nodes;
- `max_am_share`: the share of cluster memory ApplicationMasters may hold (`policies/am_limit.py`),
  0.5 as FairScheduler's maxAMShare unless the policy follows a scheduler with another default;
- `observes`: a `Tunable` policy's `tune` reads the Observation it is given; False for one that is
  tunable only to report its values (H-MRF's accounting learns from `decide`), whose simulated
  control-loop ticks then build none;
- `reserves_full_nodes`: it may reserve a node with no room left, as FairScheduler does (its
  `attemptScheduling` runs on every heartbeat), so the simulator asks it about full nodes too (live,
  the shim's `yarnctl.shim.call-when-full`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from yarnctl.model import AppId, ClusterSnapshot, Decision, NodeId, Observation
from yarnctl.policies.waiting import Wait, behind


@runtime_checkable
class Policy(Protocol):
    """A scheduling policy: a pure function of the snapshot for one heartbeating node."""

    name: str
    time_dependent: bool
    resizes_nodes: bool
    max_am_share: float
    observes: bool
    reserves_full_nodes: bool

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """The decision for the heartbeat of `node_id`."""
        ...

    def why_waiting(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait:
        """Why `app_id`, asking for room that fits `node_id`, got nothing from `decision` (the snapshot it saw)."""
        ...


class PolicyBase:
    """The capability flags' defaults: a policy that learns only from what it is shown and leaves capacities alone."""

    name: str
    time_dependent: bool = False
    resizes_nodes: bool = False
    max_am_share: float = 0.5
    observes: bool = True
    reserves_full_nodes: bool = False

    def why_waiting(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait:
        """The apps ahead in this policy's order took the node, or it held the room back (`waiting.behind`)."""
        return behind(snap, node_id, app_id, decision, self.name)


@runtime_checkable
class Tunable(Protocol):
    """A policy that adapts to what the control loop observes (DRESS's reserve ratio, usage estimates...)."""

    def tune(self, obs: Observation) -> None:
        """Take in the latest observation of the cluster (live: every control-loop tick)."""
        ...

    def tuning(self) -> Mapping[str, float]:
        """The current tuning values by metric-safe name, e.g. {"dress_reserve_ratio": 0.1}."""
        ...


@runtime_checkable
class Stateful(Protocol):
    """A policy whose history must survive a restart (H-MRF's accumulated resources): plain JSON in and out."""

    def save_state(self) -> dict[str, Any]:
        """The policy's explicit state as JSON-able data."""
        ...

    def load_state(self, doc: Mapping[str, Any]) -> None:
        """Take back what save_state returned (raise ValueError naming the field when it is malformed)."""
        ...


class Estimator(Protocol):
    """Reads history to annotate policy state (DRESS, usage feedback, OPERA); never decides."""

    def observe(self, snap: ClusterSnapshot) -> None:
        """Take in the latest snapshot."""
        ...


def is_tunable(policy: object) -> bool:
    """True when `policy` takes control-loop observations."""
    return isinstance(policy, Tunable)


def is_stateful(policy: object) -> bool:
    """True when `policy` can save and load its state."""
    return isinstance(policy, Stateful)
