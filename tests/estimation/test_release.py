"""DRESS release functions: Eq. 3 ramps, Eq. 2 per job, Eq. 1 per category."""

from __future__ import annotations

import pytest

from yarnctl.estimation import release
from yarnctl.estimation.phases import Phase
from yarnctl.model import Resources


def phase(app: str = "a", gamma: float | None = 100.0, first: float = 0.0, last: float = 10.0,
          containers: int = 20, occupied: int = 20) -> Phase:
    return Phase(app, 20, Resources(8192, 1), first, last, True, gamma, containers, occupied)


@pytest.mark.parametrize("t, progress", [
    (50.0, 0.0),     # before γ: nothing released
    (100.0, 0.0),    # at γ
    (102.5, 0.25),   # (t − γ)/Δps with Δps = 10
    (105.0, 0.5),
    (110.0, 1.0),    # window end
    (200.0, 1.0),    # after: all back in A_c
], ids=["before", "gamma", "quarter", "half", "end", "after"])
def test_eq3_release_progress_ramps_over_start_variation(t, progress):
    assert release.release_progress(t, phase()) == pytest.approx(progress)
    assert release.phase_release(t, phase()) == pytest.approx(20 * progress)


def test_eq3_unknown_gamma_releases_nothing():
    assert release.phase_release(1e9, phase(gamma=None)) == 0.0


def test_eq3_zero_variation_is_a_step_at_gamma():
    p = phase(first=5.0, last=5.0)
    assert (release.release_progress(99.9, p), release.release_progress(100.0, p)) == (0.0, 1.0)


def test_expected_release_does_not_count_what_was_already_released():
    # at 105 s half the ramp (10 of 20) is expected released; 6 already were, so 4 more remain expected
    p = phase(occupied=14)
    assert release.expected_release(105.0, p) == pytest.approx(4.0)
    # never more than the phase still holds
    assert release.expected_release(500.0, p) == pytest.approx(14.0)
    # already ahead of the ramp: nothing more expected yet
    assert release.expected_release(101.0, phase(occupied=5)) == 0.0


def test_eq1_eq2_sum_per_job_and_category_weighted_by_container_size():
    phases = [phase("a", occupied=20), phase("a", gamma=None), phase("b", occupied=20)]
    size = lambda p: 0.01  # each container 1% of the cluster
    assert release.job_release(105.0, phases[:2], size) == pytest.approx(0.10)  # f_a = 10 containers
    cats = {"a": "ld", "b": "sd"}
    got = release.category_release(105.0, phases, cats.__getitem__, size)
    assert got == pytest.approx({"ld": 0.10, "sd": 0.10})
    assert release.available(105.0, 0.3, phases, size) == pytest.approx(0.5)  # F = A_c + Σ f_i
