"""Workload variants: `NAME+efr` requests peak use ([FEEDBACK] Sec. V-B); `NAME+jitter` is one seeded draw of a fixed workload."""

from __future__ import annotations

import statistics

import pytest

from yarnctl.errors import WorkloadError
from yarnctl.model import Resources
from yarnctl.sim.workload import load_workload
from yarnctl.sim.workload.variants import JITTER_CV, JITTER_SUBMIT_S, extreme_fit, jitter


def test_extreme_fit_requests_the_peak_and_keeps_the_use() -> None:
    w = load_workload("feedback-day")
    efr = extreme_fit(w)
    assert efr.tasks == w.tasks and efr.name == "feedback-day-efr"
    assert {n.capacity for n in efr.cluster.nodes} == {Resources(28 * 1024, 58)}  # Sec. V-B
    assert {n.physical for n in efr.cluster.nodes} == {Resources(32 * 1024, 64)}
    assert efr.cluster.min_allocation == Resources(1, 1)
    for job, fit in zip(w.jobs, efr.jobs):
        for s, f in zip(job.stages, fit.stages):
            peak_mb = max(m for _, _, m in s.usage.steps) * s.resource.memory_mb
            assert f.resource.memory_mb == pytest.approx(peak_mb, abs=1)  # whole MB, rounded up
            assert max(m for _, _, m in f.usage.steps) <= 1.0
            for (at, cpu, mem), (at2, cpu2, mem2) in zip(s.usage.steps, f.usage.steps):
                # the same absolute use: only the request it is a fraction of changed
                assert at2 == at
                assert mem2 * f.resource.memory_mb == pytest.approx(mem * s.resource.memory_mb)
                assert cpu2 * f.resource.vcores == pytest.approx(cpu * s.resource.vcores)
    # etl-large reduces (3 GB, peak 90%) ask for 2765 MB instead of 3072
    assert any(st.resource.memory_mb == 2765 for j in efr.jobs for st in j.stages)


def test_a_variant_is_named_after_a_plus() -> None:
    assert load_workload("feedback-day+efr", seed=1) == extreme_fit(load_workload("feedback-day", seed=1))
    with pytest.raises(WorkloadError, match="unknown variant 'nope'; variants: efr, jitter"):
        load_workload("feedback-day+nope")


def test_jitter_draws_durations_and_submissions_from_the_seed() -> None:
    w = load_workload("dress-mr20")  # fixed durations: every seed is the same workload
    assert load_workload("dress-mr20", seed=3).jobs == w.jobs
    a, b = load_workload("dress-mr20+jitter", seed=3), load_workload("dress-mr20+jitter", seed=4)
    assert a == jitter(load_workload("dress-mr20", seed=3)) and a.name == "dress-mr20-jitter"
    assert a != b and a.tasks == w.tasks
    ratios = [d2 / d for j, ja in zip(w.jobs, a.jobs) for s, sa in zip(j.stages, ja.stages)
              for d, d2 in zip(s.durations, sa.durations)]
    assert statistics.fmean(ratios) == pytest.approx(1.0, abs=0.02)  # log-normal of mean 1 ...
    assert statistics.stdev(ratios) == pytest.approx(JITTER_CV, rel=0.2)  # ... and CV 10%
    shifts = [ja.submit_s - j.submit_s for j, ja in zip(w.jobs, a.jobs)]
    assert all(0 <= s <= JITTER_SUBMIT_S for s in shifts) and len(set(shifts)) == len(shifts)
    assert [j.id for j in sorted(a.jobs, key=lambda j: j.submit_s)] == [j.id for j in w.jobs]  # order kept
