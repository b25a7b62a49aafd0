"""Sec. 6 windows [H-MRF]: tumbling, sliding, infinite and zero."""

import math

import pytest

from yarnctl.fairness.windows import SLIDING, TUMBLING, Window, WindowedSum


def test_infinite_window_keeps_everything():
    s = WindowedSum(Window(TUMBLING, math.inf))
    s.add(0, 10, (1.0, 2.0))
    s.add(10, 1e6, (1.0, 0.0))
    assert s.value(1e6) == (1e6, 20.0)


def test_zero_window_is_memoryless():
    s = WindowedSum(Window(SLIDING, 0))
    s.add(0, 10, (1.0, 1.0))
    assert s.value(10) == (0.0, 0.0)


def test_tumbling_window_drops_history_at_each_boundary():
    s = WindowedSum(Window(TUMBLING, 100))
    s.add(0, 90, (1.0, 1.0))
    assert s.value(95) == (90.0, 90.0)
    s.add(90, 110, (1.0, 1.0))  # straddles 100: only [100, 110] belongs to the new window
    assert s.value(110) == (10.0, 10.0)
    assert s.value(250) == (0.0, 0.0)  # a window with nothing in it yet


@pytest.mark.parametrize("now, expected", [(100, 100.0), (150, 50.0), (200, 0.0)])
def test_sliding_window_keeps_only_the_last_length(now, expected):
    s = WindowedSum(Window(SLIDING, 100))
    s.add(0, 100, (1.0, 1.0))
    assert s.value(now)[0] == pytest.approx(expected)


def test_sliding_window_round_trips_through_json():
    s = WindowedSum(Window(SLIDING, 60))
    s.add(0, 45, (2.0, 1.0))
    back = WindowedSum.from_json(s.window, s.to_json())
    assert back.value(50) == pytest.approx(s.value(50))


def test_bad_window_is_refused():
    with pytest.raises(ValueError, match="window kind"):
        Window("hopping", 10)
    with pytest.raises(ValueError, match="length"):
        Window(TUMBLING, -1)
