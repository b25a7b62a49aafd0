"""Helpers for tests: build cluster snapshots from short tables."""

from __future__ import annotations

from yarnctl.model import Container, Node, Resources
from yarnctl.state import snapshot_of


def GB(n: float, vcores: int = 1) -> Resources:
    return Resources(int(n * 1024), vcores)


def snapshot(nodes, apps, asks=(), containers=(), min_allocation=Resources(1024, 1)):
    """nodes: [(id, capacity) or (id, capacity, registered)], apps: [App], asks: [Ask], containers: [Container]."""
    return snapshot_of(0.0, [Node(n, "r1", cap, Resources(0, 0), *reg) for n, cap, *reg in nodes], apps, asks,
                       containers, min_allocation)


def running(cid: str, app: str, node: str, resource: Resources, priority: int = 20, is_am: bool = False):
    return Container(cid, app, node, priority, resource, 0.0, is_am=is_am)

