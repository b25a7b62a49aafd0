"""Helpers for tests: build cluster snapshots from short tables."""

from __future__ import annotations

from yarnctl.model import App, ClusterSnapshot, Container, Node, Request, Resources


def GB(n: float, vcores: int = 1) -> Resources:
    return Resources(int(n * 1024), vcores)


def snapshot(nodes, apps, requests=(), containers=(), min_allocation=Resources(1024, 1)):
    """nodes: [(id, capacity) or (id, capacity, registered)], apps: [App], requests: [Request], containers: [Container]."""
    node_alloc: dict[str, Resources] = {}
    app_alloc: dict[str, Resources] = {a.id: Resources(0, 0) for a in apps}
    for c in containers:
        node_alloc[c.node_id] = node_alloc.get(c.node_id, Resources(0, 0)) + c.resource
        app_alloc[c.app_id] = app_alloc[c.app_id] + c.resource
    by_app: dict[str, list[Request]] = {}
    for r in requests:
        by_app.setdefault(r.app_id, []).append(r)
    return ClusterSnapshot.build(
        0.0,
        {n: Node(n, "r1", cap, node_alloc.get(n, Resources(0, 0)), *reg) for n, cap, *reg in nodes},
        {a.id: a for a in apps},
        {a: tuple(rs) for a, rs in by_app.items()},
        {c.id: c for c in containers},
        app_alloc,
        min_allocation,
    )


def running(cid: str, app: str, node: str, resource: Resources, priority: int = 20, is_am: bool = False):
    return Container(cid, app, node, priority, resource, 0.0, is_am=is_am)

