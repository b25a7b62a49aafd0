"""Why an application waits: a reason code and its values, given by the policy that decided (`yarnctl explain`).

After a heartbeat's decision, an application that still asks and got nothing on the node has one
reason. The engine checks what holds for every policy first: the AM-share limit (or its queue has
not activated it), its queue at maximum capacity, an ask larger than any node, locality (an ask for
named nodes only), no node with room now, no room on this node. Otherwise the policy
says (`PolicyBase.why_waiting`, which the fair-share, capacity, DRESS, H-MRF and OPERA policies
refine): apps ahead in its order took the node, or it held the room back for its own reason.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from yarnctl.model import ANY, Ask, AppId, ClusterSnapshot, Decision, NodeId, Resources
from yarnctl.policies.locality import host_of


class WaitCode(str, enum.Enum):
    """The reasons an application waits, one vocabulary for every policy (the metric's `reason` label)."""

    AM_LIMIT = "am-limit"  # its AM would take the AMs past their share, or its queue has not activated it
    QUEUE_MAX = "queue-max"  # its queue, or one above it, is at its maximum capacity
    TOO_LARGE = "too-large"  # its ask is larger than any node
    NO_ROOM = "no-room"  # no node has room for its ask now
    NODE_FULL = "node-full"  # this node has no room for its ask; another has
    LOCALITY = "locality"  # its ask does not relax locality to this node, or waits for a local one (delay scheduling)
    RESERVED = "reserved"  # the node is reserved for another app's request
    USER_LIMIT = "user-limit"  # its user holds the user limit of its queue
    FAIR_SHARE = "fair-share"  # it holds more than the apps served first, against its weight
    DRESS_RESERVE = "dress-reserve"  # its DRESS category's pool (δ or 1 − δ of the cluster) is full
    HMRF_WINDOW = "hmrf-window"  # its entity ranks behind on use accumulated over the window, or borrowed its cap
    OPERA_RELIEF = "opera-relief"  # OPERA holds the node's room while it relieves an over-committed node
    BEHIND = "behind"  # apps ahead of it in the policy's order took the node's room
    HELD = "held"  # the policy placed nothing it could have and gave no more specific reason


@dataclass(frozen=True, slots=True)
class Wait:
    """One reason an application got nothing at one heartbeat: the code, its values, and the same in words."""

    code: WaitCode
    text: str
    values: Mapping[str, float | int | str] = field(default_factory=lambda: MappingProxyType({}))

    def as_dict(self) -> dict[str, object]:
        """JSON-able: code, text and values."""
        return {"code": self.code.value, "text": self.text, "values": dict(self.values)}


def wait(code: WaitCode, text: str, **values: float | int | str) -> Wait:
    """A Wait with its values as keyword arguments."""
    return Wait(code, text, MappingProxyType(values))


def head_ask(snap: ClusterSnapshot, app_id: AppId) -> Ask | None:
    """The app's first outstanding off-switch ask: what it waits for."""
    for r in snap.asks.get(app_id, ()):
        if r.resource_name == ANY and r.count > 0:
            return r
    return None


def size(r: Resources) -> str:
    """`r` as people read it: 2048 MB / 1 vcore."""
    return f"{r.memory_mb} MB / {r.vcores} vcore{'s' if r.vcores != 1 else ''}"


def placement(snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, ask: Ask) -> Wait | None:
    """Too large for any node, no room anywhere, no room here, or locality: the reasons that hold for every policy."""
    need = ask.capability
    if not any(need.fits_in(n.capacity) for n in snap.nodes.values()):
        big = max((n.capacity for n in snap.nodes.values()), key=lambda r: (r.memory_mb, r.vcores), default=None)
        return wait(WaitCode.TOO_LARGE, f"its ask of {size(need)} is larger than any node (largest "
                    f"{size(big) if big else 'none'})", ask_mb=need.memory_mb, ask_vcores=need.vcores,
                    largest_mb=big.memory_mb if big else 0, largest_vcores=big.vcores if big else 0)
    if node_id in snap.nodes and not ask.relax_locality and not named(snap, app_id, ask.priority, node_id):
        return wait(WaitCode.LOCALITY, f"priority {ask.priority} asks for named nodes only and {node_id} is "
                    f"not one of them", priority=ask.priority, node=node_id)
    node = snap.nodes.get(node_id)
    if node is not None and need.fits_in(node.available):
        return None
    free = [n.available for n in snap.nodes.values()]
    if not any(need.fits_in(f) for f in free):
        # the roomiest node for this ask: the one that holds the largest part of it in its scarcer resource
        most = max(free, key=lambda r: (min(r.memory_mb / max(need.memory_mb, 1), r.vcores / max(need.vcores, 1)),
                                        r.memory_mb, r.vcores))
        return wait(WaitCode.NO_ROOM, f"no node has room for its ask of {size(need)} (the roomiest has {size(most)} "
                    f"free)",
                    ask_mb=need.memory_mb, ask_vcores=need.vcores, largest_free_mb=most.memory_mb,
                    largest_free_vcores=most.vcores)
    here = node.available if node is not None else Resources(0, 0)
    return wait(WaitCode.NODE_FULL, f"{node_id} has {size(here)} free, its ask is {size(need)} (another node has "
                f"room)", ask_mb=need.memory_mb, free_mb=here.memory_mb, node=node_id)


def named(snap: ClusterSnapshot, app_id: AppId, priority: int, node_id: NodeId) -> bool:
    """True when the app's asks at `priority` name `node_id`, its host or its rack (strict locality allows it)."""
    node = snap.nodes[node_id]
    names = {r.resource_name for r in snap.asks.get(app_id, ()) if r.priority == priority}
    return node_id in names or host_of(node_id) in names or node.rack in names


def behind(snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision, policy: str) -> Wait:
    """The default reason: the apps ahead in `policy`'s order took the node, or it held the room back."""
    served = [a for a in decision.assignments if a.app_id != app_id]
    if served:
        first = served[0].app_id
        n = sum(a.count for a in served)
        others = f" and {len({a.app_id for a in served}) - 1} more" if len({a.app_id for a in served}) > 1 else ""
        return wait(WaitCode.BEHIND, f"{policy} served {first}{others} first on {node_id} ({n} container"
                    f"{'s' if n != 1 else ''})", served=first, containers=n, node=node_id)
    return wait(WaitCode.HELD, f"{policy} placed nothing on {node_id} although its ask fits there", node=node_id)
