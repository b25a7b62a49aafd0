"""Workload variants: `NAME+efr` is the workload with every request at its peak use ([FEEDBACK] Sec. V-B)."""

from __future__ import annotations

import pytest

from yarnctl.errors import WorkloadError
from yarnctl.model import Resources
from yarnctl.sim.workload import load_workload
from yarnctl.sim.workload.variants import extreme_fit


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
    with pytest.raises(WorkloadError, match="unknown variant 'nope'; variants: efr"):
        load_workload("feedback-day+nope")
