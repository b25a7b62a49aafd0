"""The live cluster `yarnctl whatif` starts from: the policy server's mirror, and each MapReduce job's tasks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yarnctl.errors import ConfigError
from yarnctl.model import Resources
from yarnctl.rm.models import TaskReport


@dataclass(frozen=True, slots=True)
class LiveNode:
    """A NodeManager and the size it registered with."""

    id: str
    rack: str
    capacity: Resources


@dataclass(frozen=True, slots=True)
class LiveApp:
    """An application the RM scheduler knows."""

    id: str
    queue: str
    user: str
    type: str
    name: str


@dataclass(frozen=True, slots=True)
class LiveContainer:
    """A running container: whose, where, at which priority, how big, for how long already."""

    app: str
    node: str
    priority: int
    resource: Resources
    elapsed_s: float
    is_am: bool


@dataclass(frozen=True, slots=True)
class LiveAsk:
    """An application's outstanding containers at one priority."""

    app: str
    priority: int
    resource: Resources
    count: int


@dataclass(frozen=True, slots=True)
class LiveState:
    """The cluster as the policy server last saw it (`state` on its control socket)."""

    policy: str
    params: Mapping[str, Any]
    age_s: float  # how old the server's view was when read: its last call with the cluster
    min_allocation: Resources
    nodes: tuple[LiveNode, ...]
    apps: tuple[LiveApp, ...]
    containers: tuple[LiveContainer, ...]
    asks: tuple[LiveAsk, ...]

    def of(self, app: str) -> tuple[tuple[LiveContainer, ...], tuple[LiveAsk, ...]]:
        """The app's running containers and outstanding asks."""
        return (tuple(c for c in self.containers if c.app == app), tuple(a for a in self.asks if a.app == app))


def parse_state(doc: Any, wall_now: float) -> LiveState:
    """The control socket's `state` document as a LiveState, its containers aged to `wall_now` (epoch s).

    ConfigError naming what a server got wrong.
    """
    try:
        # the server's view is as of its last call; the containers have run on since
        age = max(0.0, wall_now - float(doc["at"])) if doc.get("at") is not None else 0.0
        now = float(doc["now_s"]) + age
        mb, vc = doc["min_allocation"]
        return LiveState(
            str(doc["policy"]), dict(doc.get("params") or {}), age, Resources(int(mb), int(vc)),
            tuple(LiveNode(str(i), str(r), Resources(int(m), int(v))) for i, r, m, v in doc["nodes"]),
            tuple(LiveApp(str(i), str(q), str(u), str(t), str(n)) for i, q, u, t, n, _ in doc["apps"]),
            tuple(LiveContainer(str(a), str(n), int(p), Resources(int(m), int(v)), max(0.0, now - float(s)), bool(am))
                  for _, a, n, p, m, v, s, am in doc["containers"]),
            tuple(LiveAsk(str(a), int(p), Resources(int(m), int(v)), int(c)) for a, p, m, v, c in doc["asks"]))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ConfigError(f"the policy server's state is not what this yarnctl reads ({type(e).__name__}: {e}); "
                          f"are both the same version?") from None


@dataclass(frozen=True, slots=True)
class TaskTimes:
    """What a running MapReduce job's AM says of one task type: finished tasks' run times, running tasks, the rest."""

    done_s: tuple[float, ...]
    running: tuple[tuple[float, float], ...]  # (elapsed s, progress 0-1) of each running task
    waiting: int  # not started yet

    @classmethod
    def of(cls, tasks: tuple[TaskReport, ...], kind: str) -> TaskTimes:
        """The MAP or REDUCE tasks of `tasks`."""
        mine = [t for t in tasks if t.type == kind]
        return cls(tuple(t.elapsed_ms / 1000 for t in mine if t.state == "SUCCEEDED"),
                   tuple((t.elapsed_ms / 1000, t.progress / 100) for t in mine if t.state == "RUNNING"),
                   sum(1 for t in mine if t.state in ("NEW", "SCHEDULED")))
