"""DRESS release functions ([DRESS], Sec. III-B Eq. 1-3): containers expected back by time t.

Eq. 3 ramps a phase's release linearly over [γ, γ + Δps]: (t − γ)/Δps is "the release
progress in this phase" and c_pj its containers. Eq. 3 writes 0 after the window because by
then the phase's containers are back in A_c (Eq. 1 adds A_c); tasks still running then are
trailing tasks that Alg. 2 has moved into the next phase. `phase_release` is that progress as a
count (c_pj × progress, c_pj at and after the window end) and `expected_release` the part of
it not yet observed, min(occupied, c_pj × progress − released so far), so F(t) = A_c + Σ f_i(t)
never counts a container twice. A Δps of 0 (every task started at once) releases at γ.
Eq. 2's bounds need no state: before α an app has no phase and after β it has been forgotten.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from yarnctl.estimation.phases import Phase
from yarnctl.model import AppId


def release_progress(t: float, phase: Phase) -> float:
    """(t − γ)/Δps clipped to [0, 1]: the share of the phase's containers released by `t` (Eq. 3)."""
    gamma = phase.release_start_s
    if gamma is None or t < gamma:
        return 0.0
    span = phase.start_variation_s
    if span <= 0 or t >= gamma + span:
        return 1.0
    return (t - gamma) / span


def phase_release(t: float, phase: Phase) -> float:
    """p_j(t): containers of the phase released by `t` (Eq. 3, as a running count)."""
    return release_progress(t, phase) * phase.containers


def expected_release(t: float, phase: Phase) -> float:
    """Containers the phase still holds that Eq. 3 expects back by `t`."""
    released = phase.containers - phase.occupied
    return min(float(phase.occupied), max(0.0, phase_release(t, phase) - released))


def job_release(t: float, phases: Iterable[Phase], amount: Callable[[Phase], float]) -> float:
    """f_i(t): Σ_j over the job's phases of what each returns by `t`, each container weighed by `amount` (Eq. 2)."""
    return sum(expected_release(t, p) * amount(p) for p in phases)


def category_release(
    t: float, phases: Iterable[Phase], category: Callable[[AppId], str], amount: Callable[[Phase], float]
) -> dict[str, float]:
    """F_1(t), F_2(t): Σ f_i(t) over the jobs of each category (Eq. 1), keyed by category."""
    by_cat: dict[str, list[Phase]] = {}
    for p in phases:
        by_cat.setdefault(category(p.app_id), []).append(p)
    return {c: job_release(t, ps, amount) for c, ps in sorted(by_cat.items())}


def available(t: float, free: float, phases: Iterable[Phase], amount: Callable[[Phase], float]) -> float:
    """F(t) = A_c + Σ_i f_i(t) over the given phases (Eq. 1)."""
    return free + job_release(t, phases, amount)
