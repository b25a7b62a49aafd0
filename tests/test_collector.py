"""The simulator's collector setting holds for its block only, and yields to a higher or disabled one."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from yarnctl.collector import YOUNG_COLLECTION_THRESHOLD, fewer_collections


@pytest.fixture
def default_threshold() -> Iterator[None]:
    """CPython's default threshold for the test, and whatever was set before it afterwards."""
    old = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def test_fewer_collections_restores_the_threshold_and_leaves_a_higher_or_disabled_one(default_threshold: None) -> None:
    with fewer_collections():
        assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("a failing run")
    assert gc.get_threshold() == (700, 10, 10)
    for mine in (0, 10 * YOUNG_COLLECTION_THRESHOLD):
        gc.set_threshold(mine, 10, 10)
        with fewer_collections():
            assert gc.get_threshold() == (mine, 10, 10)
