"""Allocation efficiency E ([FEEDBACK] Sec. III-B): per container, and per job and user as sums."""

from __future__ import annotations

import pytest

from yarnctl.trace.efficiency import cdf, distribution, efficiencies
from yarnctl.trace.usage import ContainerUsage

# alice's job j1: c1 uses 1/4 of 4 GB for 100 s, c2 all of 1 GB for 300 s; bob's j2: c3 half of 2 GB for 100 s
TRACE = [
    ContainerUsage("c1", "j1", "alice", 4096, 2, 0, 100, 1024, 3.0),
    ContainerUsage("c2", "j1", "alice", 1024, 1, 0, 300, 1024, 0.5),
    ContainerUsage("c3", "j2", "bob", 2048, 1, 50, 150, 1024, 1.0),
    ContainerUsage("c4", "j2", "bob", 2048, 1, 70, 70, 0, 0.0),  # no time: no E, adds nothing
]


@pytest.mark.parametrize("level, want", [
    ("container", {"c1": (0.25, 1.5), "c2": (1.0, 0.5), "c3": (0.5, 1.0)}),
    # j1 memory: (1024 * 100 + 1024 * 300) / (4096 * 100 + 1024 * 300) = 409600 / 716800 = 4/7, not the mean 5/8;
    # cpu: (3 * 100 + 0.5 * 300) / (2 * 100 + 1 * 300) = 450 / 500 = 0.9
    ("job", {"j1": (4 / 7, 0.9), "j2": (0.5, 1.0)}),
    ("user", {"alice": (4 / 7, 0.9), "bob": (0.5, 1.0)}),
], ids=["Sec.III-B-container", "Sec.III-B-job-weighs-resource-seconds", "Sec.III-B-user"])
def test_efficiency_per_level(level: str, want: dict[str, tuple[float, float]]) -> None:
    effs = efficiencies(TRACE, level)
    assert [e.name for e in effs] == sorted(want)
    assert {e.name: (e.memory, e.cpu) for e in effs} == {k: pytest.approx(v) for k, v in want.items()}
    assert all(e.level == level for e in effs)


def test_zero_duration_containers_are_left_out_and_counted_nowhere() -> None:
    assert [e.containers for e in efficiencies(TRACE, "job")] == [2, 1]


def test_distribution_percentiles_and_shares() -> None:
    effs = efficiencies(TRACE, "container")  # memory E: 0.25, 1.0, 0.5
    d = distribution(effs, "memory", (10, 50, 90))
    assert (d.level, d.resource, d.count) == ("container", "memory", 3)
    assert dict(d.percentiles) == pytest.approx({10: 0.3, 50: 0.5, 90: 0.9})  # linear interpolation
    assert d.mean == pytest.approx(1.75 / 3) and d.max == 1.0
    assert d.share_below(0.5) == pytest.approx(1 / 3)  # only 0.25 is strictly below 0.5
    assert d.share_below(1.0) == pytest.approx(2 / 3)
    assert distribution(effs, "cpu").share_below(1.0) == pytest.approx(1 / 3)  # 0.5 only; 1.5 and 1.0 are not below
    assert dict(distribution(effs, "memory", thresholds=(0.3, 2.0)).below) == pytest.approx({0.3: 1 / 3, 2.0: 1.0})


def test_cdf_is_sorted_and_ends_at_one() -> None:
    xs, ys = cdf(efficiencies(TRACE, "container"), "cpu")
    assert xs == [0.5, 1.0, 1.5] and ys == pytest.approx([1 / 3, 2 / 3, 1.0])


def test_empty_and_bad_arguments() -> None:
    assert distribution([], "cpu").count == 0
    with pytest.raises(ValueError, match="level"):
        efficiencies(TRACE, "queue")
    with pytest.raises(ValueError, match="resource"):
        distribution(efficiencies(TRACE, "job"), "disk")
