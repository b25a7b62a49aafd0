"""DRESS phases: Alg. 1 (phase starts, Δps) and Alg. 2 (γ, trailing tasks) on hand-built task timelines."""

from __future__ import annotations

import dataclasses

from snapshots import GB, snapshot

from yarnctl.estimation.phases import PhaseParams, PhaseTracker
from yarnctl.model import App, ClusterSnapshot, Container

SLOT = GB(8)


class Timeline:
    """Feeds a tracker one snapshot per second from (id, priority, start, finish) tasks of app "a"."""

    def __init__(self, tasks: list[tuple[str, int, float, float]], params: PhaseParams = PhaseParams()) -> None:
        self.tasks = tasks
        self.tracker = PhaseTracker(params)
        self.t = 0.0

    def snap(self, t: float, apps: tuple[str, ...] = ("a",)) -> ClusterSnapshot:
        live = [Container(cid, "a", "n1", prio, SLOT, start) for cid, prio, start, end in self.tasks if start <= t < end]
        base = snapshot([("n1", GB(1000, 1000))], [App(a) for a in apps], (), live)
        return dataclasses.replace(base, now_s=t)

    def run(self, until: float, apps: tuple[str, ...] = ("a",)) -> None:
        while self.t <= until:
            self.tracker.observe(self.snap(self.t, apps))
            self.t += 1.0


def test_fig2_map_phase_start_variation_and_release_start():
    # Fig. 2: 20 maps starting 4 a second over 0-4 s (Δps = 4 s), 30 s each
    maps = [(f"m{i:02d}", 20, i // 4, i // 4 + 30) for i in range(20)]
    tl = Timeline(maps)
    tl.run(20)
    (ph,) = tl.tracker.phases("a")
    assert (ph.first_start_s, ph.last_start_s, ph.closed) == (0, 4, True)
    assert ph.start_variation_s == 4 and ph.containers == 20 and ph.release_start_s is None
    tl.run(33)
    (ph,) = tl.tracker.phases("a")
    # 4 finishes a second from 30 s: more than t_e = 5 in one window first at t = 31
    assert ph.release_start_s == 30 and ph.occupied == 4


def test_sec_iii_a2_heading_task_does_not_set_release_start():
    # Fig. 3/5: one heading task of a phase ends at 2 s, the 8 others at 18-20 s
    tasks = [("h", 10, 0, 2)] + [(f"r{i}", 10, 0, 18 + i % 3) for i in range(8)]
    tl = Timeline(tasks)
    tl.run(16)
    (ph,) = tl.tracker.phases("a")
    assert ph.release_start_s is None  # 1 finish in a window is not > t_e
    tl.run(19)
    (ph,) = tl.tracker.phases("a")
    assert ph.release_start_s == 18  # the window's earliest finish, not the heading task's 2 s
    assert ph.occupied == 2


def test_too_few_starts_form_no_phase():
    tl = Timeline([(f"m{i}", 20, 0, 50) for i in range(5)])  # 5 starts are not > t_s = 5
    tl.run(20)
    assert tl.tracker.phases("a") == ()


def test_same_priority_splits_into_successive_phases():
    # an iterative job: two map rounds at priority 20, 40 s apart
    first = [(f"a{i}", 20, 0, 20) for i in range(6)]
    second = [(f"b{i}", 20, 40 + i % 2, 70) for i in range(6)]
    tl = Timeline(first + second)
    tl.run(45)
    phases = tl.tracker.phases("a")
    assert [(p.first_start_s, p.last_start_s) for p in phases] == [(40, 41)]  # the first fully released


def test_fig4_trailing_task_moves_to_next_phase():
    # Fig. 4: 7 tasks end at 20 s, one trailing task runs to 60 s; a second phase starts at 35 s
    first = [(f"a{i}", 20, 0, 20) for i in range(7)] + [("trail", 20, 0, 60)]
    second = [(f"b{i}", 10, 35, 80) for i in range(6)]
    tl = Timeline(first + second)
    tl.run(29)
    (ph,) = tl.tracker.phases("a")
    assert (ph.release_start_s, ph.occupied) == (20, 1)
    tl.run(31)
    # a whole window (21-30) without finishes while "trail" runs: it is trailing and leaves the phase
    assert tl.tracker.phases("a") == ()
    tl.run(40)
    (ph,) = tl.tracker.phases("a")
    assert (ph.priority, ph.containers, ph.occupied, ph.first_start_s) == (10, 7, 7, 35)


def test_departed_app_is_forgotten():
    tl = Timeline([(f"m{i}", 20, 0, 50) for i in range(8)])
    tl.run(12)
    assert len(tl.tracker.phases()) == 1
    tl.tracker.observe(tl.snap(60, apps=()))
    assert tl.tracker.phases() == ()
    assert tl.tracker._apps == {}
