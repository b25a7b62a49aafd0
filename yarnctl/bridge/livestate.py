"""The cluster as the policy server's mirror last saw it, as plain JSON: the control socket's `state` (`yarnctl whatif`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yarnctl.model import ClusterSnapshot, Locality


def state_doc(snap: ClusterSnapshot, policy: str, params: Mapping[str, Any], at: float | None) -> dict[str, Any]:
    """Nodes, apps, live containers (with start times) and outstanding asks of `snap`, the policy serving, and
    `at`: when (epoch s) the call that brought `snap` ended (the shim calls only for nodes with room)."""
    return {
        "now_s": snap.now_s, "at": at, "policy": policy, "params": dict(params),
        "min_allocation": [snap.min_allocation.memory_mb, snap.min_allocation.vcores],
        "nodes": [[n.id, n.rack, (n.registered or n.capacity).memory_mb, (n.registered or n.capacity).vcores]
                  for n in snap.nodes.values()],
        "apps": [[a.id, a.queue, a.user, a.type, a.name, a.submit_s] for a in snap.apps.values()],
        "containers": [[c.id, c.app_id, c.node_id, c.priority, c.resource.memory_mb, c.resource.vcores, c.start_s,
                        c.is_am] for cs in snap.node_containers.values() for c in cs],
        "asks": [[a.app_id, a.priority, a.capability.memory_mb, a.capability.vcores, a.count]
                 for asks in snap.asks.values() for a in asks if a.locality is Locality.ANY],
    }
