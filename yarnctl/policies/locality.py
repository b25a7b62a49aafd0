"""Locality of an ask at a node, and CapacityScheduler's delay scheduling (LeafQueue.canAssign, Hadoop 2.7).

An application that names hosts (a MapReduce map names the DataNodes holding its split, and their rack)
asks at three levels per priority: each host, each rack, and ANY. At a node the assignment is node-local
when the app still wants containers on that host, rack-local when it wants them on the node's rack, and
off-switch otherwise. CapacityScheduler counts the heartbeats an app was offered a node at a priority and
took nothing local there ("scheduling opportunities") and allows:
- node-local at once;
- rack-local once the missed opportunities exceed min(node-locality-delay, cluster nodes) (with the
  default -1, at once), or once the off-switch test below passes: assignContainersOnNode falls through
  to the ANY request and the container, on the app's rack, counts as rack-local (2.7; YARN-4189 later);
- off-switch once they exceed the containers it still needs times the share of the cluster's nodes it
  names (min(named resources / nodes, 1); an app that names nothing, e.g. a SleepJob, at once).
A node-local or rack-local assignment resets the count; an off-switch one does not. A request that does
not relax locality past its level is skipped without counting the opportunity (SKIP_ASSIGNMENT).
"""

from __future__ import annotations

from dataclasses import dataclass

from yarnctl.model import ANY, AppId, ClusterSnapshot, Locality, NodeId


@dataclass(frozen=True, slots=True)
class Place:
    """What an app wants at one priority as seen from one node: its containers there, on its rack, anywhere."""

    on_host: int
    on_rack: int
    anywhere: int
    named: int  # how many host and rack names the app asks at this priority (LeafQueue.getLocalityWaitFactor)
    rack_relaxes: bool = True  # the rack ask lets a container go to another host of the rack
    any_relaxes: bool = True   # the ANY ask lets it go off the named racks

    @property
    def skipped(self) -> bool:
        """Strict locality keeps the app off this node at this priority (SKIP_ASSIGNMENT: not an opportunity)."""
        level = self.level
        return (level is Locality.RACK and not self.rack_relaxes) or (level is Locality.ANY and not self.any_relaxes)

    @property
    def level(self) -> Locality:
        """The best level the node offers: NODE, RACK, else ANY."""
        return Locality.NODE if self.on_host > 0 else Locality.RACK if self.on_rack > 0 else Locality.ANY


def host_of(node_id: NodeId) -> str:
    """The host part of a node id (live ids are host:port; the AM asks by host)."""
    return node_id.rpartition(":")[0] or node_id


def place(snap: ClusterSnapshot, app_id: AppId, priority: int, node_id: NodeId) -> Place:
    """The app's asks at `priority`, by the level `node_id` would serve them at."""
    host, rack = host_of(node_id), snap.nodes[node_id].rack
    on_host = on_rack = anywhere = named = 0
    rack_relaxes = any_relaxes = True
    for r in snap.asks.get(app_id, ()):
        if r.priority != priority:
            continue
        if r.resource_name == ANY:
            anywhere, any_relaxes = r.count, r.relax_locality
            continue
        named += 1
        if r.resource_name in (host, node_id):
            on_host = r.count
        elif r.resource_name == rack:
            on_rack, rack_relaxes = r.count, r.relax_locality
    return Place(on_host, on_rack, anywhere, named, rack_relaxes, any_relaxes)


def may_assign(p: Place, missed: int, locality_delay: int, nodes: int) -> bool:
    """LeafQueue.canAssign: whether the node may serve the app at this priority after `missed` opportunities."""
    if p.level is Locality.NODE:
        return True
    off_switch = p.anywhere * min(p.named / max(nodes, 1), 1.0) < missed
    if p.level is Locality.RACK:
        return min(locality_delay, nodes) < missed or off_switch
    return off_switch
