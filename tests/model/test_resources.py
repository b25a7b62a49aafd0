"""Resources: the vector arithmetic every capacity check relies on."""

import pytest

from yarnctl.model import ZERO, Resources


@pytest.mark.parametrize(
    "request_, available, expected",
    [
        (Resources(1024, 1), Resources(4096, 8), 4),
        (Resources(1024, 4), Resources(4096, 8), 2),  # vcores bind
        (Resources(3072, 1), Resources(4096, 8), 1),
        (Resources(4096, 1), Resources(4095, 8), 0),
        (Resources(1024, 1), Resources(-1024, 8), 0),  # over-allocated node
        (Resources(0, 1), Resources(4096, 3), 3),
    ],
    ids=["memory-binds", "vcores-bind", "one-fits", "none-fits", "negative-available", "zero-memory"],
)
def test_times_fit_counts_every_resource(request_, available, expected):
    assert request_.times_fit(available) == expected


def test_arithmetic_and_comparisons():
    a, b = Resources(2048, 2), Resources(1024, 3)
    assert a + b == Resources(3072, 5)
    assert a - b == Resources(1024, -1)
    assert (a - b).any_negative()
    assert a * 3 == Resources(6144, 6) == 3 * a
    assert b.fits_in(Resources(1024, 3)) and not b.fits_in(Resources(1024, 2))
    assert ZERO.is_zero() and not a.is_zero()


def test_shares_and_dominant_share():
    # [H-MRF] Example 1: <1 CPU, 2 GB> of <100 CPU, 100 GB>
    total = Resources(100 * 1024, 100)
    task = Resources(2048, 1)
    assert task.shares(total) == pytest.approx((0.02, 0.01))
    assert task.dominant_share(total) == pytest.approx(0.02)
    assert Resources(1, 1).shares(ZERO) == (0.0, 0.0)
