"""DRESS phases ([DRESS], Sec. IV-A Alg. 1 and Sec. IV-B Alg. 2) from the container stream.

A task is a non-AM container: it starts when it first appears in a snapshot (its `start_s`) and
finishes at the `now_s` of the first snapshot without it (DRESS feeds one snapshot per
control-loop tick, so a finish is known to within a tick). Tasks are grouped per (app, priority),
a MapReduce phase being a priority, and Alg. 1 splits each priority's starts into successive
phases (iterations, chained stages): a phase opens when more than `t_s` tasks started within
the phase window `pw` (ps_f = the earliest start among them) and closes once a whole window
passes without a start (ps_l = the latest start, Δps = ps_l − ps_f). Alg. 2 then marks the
start of release γ when more than `t_e` of the phase's tasks finished within one window, and
moves the tasks still running after a window without finishes (trailing tasks) to the app's
next phase.

Readings of the paper: t_s and t_e are given as "5 s" (Sec. V-A1) but Alg. 1 line 11 and Alg. 2
line 8 compare them with task counts, so they are counts here. RT(t) − RT(t − pw) counts tasks
*started* in the window (finishes are Alg. 2's), so a phase that starts while an earlier one
releases is still seen. γ is the earliest finish inside the window that crossed t_e, not over
the phase's whole history: t_e exists to filter heading tasks (Fig. 3, Fig. 5), and a heading
task that finished long before would otherwise pull γ back. Starts that never reach t_s within
a window form no phase (like heading tasks) and are dropped from phase detection after a quiet
window. Finished tasks, emptied closed phases and departed apps are forgotten, so the state is
bounded by the running containers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from yarnctl.model import AppId, ClusterSnapshot, ContainerId, Resources


@dataclass(frozen=True, slots=True)
class PhaseParams:
    """Alg. 1/2 parameters with the paper's defaults (Sec. V-A1)."""

    window_s: float = 10.0  # pw
    start_threshold: int = 5  # t_s
    end_threshold: int = 5  # t_e


@dataclass(frozen=True, slots=True)
class Phase:
    """One phase as estimated now: its starts, its release start γ and what it still occupies."""

    app_id: AppId
    priority: int
    resource: Resources  # one task's container
    first_start_s: float  # ps_f
    last_start_s: float  # ps_l (so far, while the phase is open)
    closed: bool  # Alg. 1 saw a window without starts
    release_start_s: float | None  # γ, None until Alg. 2 sees it
    containers: int  # c_pj: tasks counted in the phase (trailing tasks moved out, carried ones in)
    occupied: int  # of those, still running now

    @property
    def start_variation_s(self) -> float:
        """Δps = ps_l − ps_f."""
        return self.last_start_s - self.first_start_s


@dataclass(slots=True)
class _Phase:
    priority: int
    resource: Resources
    first_start: float
    last_start: float
    members: set[ContainerId]
    containers: int
    closed: bool = False
    gamma: float | None = None
    finishes: deque[float] = field(default_factory=deque)  # finish times inside the last window


@dataclass(slots=True)
class _App:
    tasks: dict[ContainerId, tuple[int, float, Resources]] = field(default_factory=dict)  # running: priority, start, size
    starts: dict[int, deque[float]] = field(default_factory=dict)  # per priority, starts inside the window
    unphased: dict[int, list[ContainerId]] = field(default_factory=dict)  # started, no phase yet
    open: dict[int, _Phase] = field(default_factory=dict)  # per priority, the phase Alg. 1 has open
    phases: list[_Phase] = field(default_factory=list)  # in opening order
    carry: list[ContainerId] = field(default_factory=list)  # trailing tasks waiting for the next phase


class PhaseTracker:
    """Alg. 1 and Alg. 2 over the snapshots a policy sees, per app; deterministic and bounded."""

    def __init__(self, params: PhaseParams = PhaseParams()) -> None:
        self.params = params
        self.now_s = 0.0
        self._apps: dict[AppId, _App] = {}

    def observe(self, snap: ClusterSnapshot) -> None:
        """Take in one snapshot: new tasks, finished tasks, and the window tests at `snap.now_s`."""
        t = snap.now_s
        self.now_s = t
        live: dict[AppId, dict[ContainerId, tuple[int, float, Resources]]] = {}
        for cs in snap.node_containers.values():
            for c in cs:
                if not c.is_am:
                    live.setdefault(c.app_id, {})[c.id] = (c.priority, c.start_s, c.resource)
        for app_id in sorted(set(self._apps) | set(live)):
            if app_id not in live and app_id not in snap.apps:
                del self._apps[app_id]  # the app has left: β passed, f_i(t) = 0 (Eq. 2)
                continue
            app = self._apps.setdefault(app_id, _App())
            self._finish(app, live.get(app_id, {}), t)
            self._start(app, live.get(app_id, {}))
            self._windows(app, t)

    def phases(self, app_id: AppId | None = None) -> tuple[Phase, ...]:
        """The live phases of one app (or of every app, by app id), oldest first."""
        ids = [app_id] if app_id is not None else sorted(self._apps)
        return tuple(_view(a, p) for a in ids if a in self._apps for p in self._apps[a].phases)

    def _start(self, app: _App, live: Mapping[ContainerId, tuple[int, float, Resources]]) -> None:
        # Alg. 1 lines 4-8: a task reaching Running joins the open phase of its priority, if any
        for cid in sorted(live, key=lambda c: (live[c][1], c)):
            if cid in app.tasks:
                continue
            prio, start, resource = live[cid]
            app.tasks[cid] = live[cid]
            app.starts.setdefault(prio, deque()).append(start)
            ph = app.open.get(prio)
            if ph is None:
                app.unphased.setdefault(prio, []).append(cid)
                continue
            ph.members.add(cid)
            ph.containers += 1
            ph.last_start = max(ph.last_start, start)
            ph.resource = ph.resource.componentwise_max(resource)

    def _finish(self, app: _App, live: Mapping[ContainerId, tuple[int, float, Resources]], t: float) -> None:
        # Alg. 2 lines 4-7: a task gone from the snapshot completed at this snapshot's time
        gone = [cid for cid in app.tasks if cid not in live]
        for cid in gone:
            del app.tasks[cid]
            for ph in app.phases:
                if cid in ph.members:
                    ph.members.discard(cid)
                    ph.finishes.append(t)
                    break
        if gone:
            dropped = set(gone)
            app.carry = [c for c in app.carry if c not in dropped]
            for prio, cids in app.unphased.items():
                app.unphased[prio] = [c for c in cids if c not in dropped]

    def _windows(self, app: _App, t: float) -> None:
        p = self.params
        for prio in sorted(app.starts):
            starts = app.starts[prio]
            while starts and starts[0] <= t - p.window_s:
                starts.popleft()
            ph = app.open.get(prio)
            if ph is None and len(starts) > p.start_threshold:
                self._open(app, prio)  # Alg. 1 lines 11-13
            elif ph is not None and not starts:
                ph.closed = True  # Alg. 1 lines 14-16: ps_l and Δps are now final
                del app.open[prio]
            elif ph is None and not starts:
                app.unphased.pop(prio, None)  # too few starts for a phase (heading/straggling tasks)
        for ph in app.phases:
            while ph.finishes and ph.finishes[0] <= t - p.window_s:
                ph.finishes.popleft()
            if ph.gamma is None and len(ph.finishes) > p.end_threshold:
                ph.gamma = ph.finishes[0]  # Alg. 2 lines 8-10
            elif ph.gamma is not None and not ph.finishes and ph.members and ph.closed:
                # Alg. 2 lines 11-13: still running a window after the last finish: trailing tasks
                # are counted in the app's next phase
                app.carry.extend(sorted(ph.members))
                ph.containers -= len(ph.members)
                ph.members.clear()
        # a closed phase with nothing left running has released everything (Eq. 3 is 0 after it)
        app.phases = [ph for ph in app.phases if ph.members or not ph.closed]

    def _open(self, app: _App, prio: int) -> None:
        members = app.unphased.pop(prio, [])
        if not members:
            return
        starts = [app.tasks[c][1] for c in members]
        resource = Resources()
        for c in members + app.carry:
            resource = resource.componentwise_max(app.tasks[c][2])
        ph = _Phase(prio, resource, min(starts), max(starts), set(members) | set(app.carry),
                    len(members) + len(app.carry))
        app.carry = []
        app.open[prio] = ph
        app.phases.append(ph)


def _view(app_id: AppId, ph: _Phase) -> Phase:
    return Phase(app_id, ph.priority, ph.resource, ph.first_start, ph.last_start, ph.closed,
                 ph.gamma, ph.containers, len(ph.members))
