"""JournalCursor: a reader of the store's journal gets exactly the apps touched since it last read, or None to rebuild."""

from types import MappingProxyType

import pytest

from yarnctl.model import ClusterSnapshot, Journal, JournalCursor, Resources


def at(journal, apps=MappingProxyType({}), capacity=Resources(4096, 4)):
    """A snapshot taken at the journal's current end."""
    return ClusterSnapshot(now_s=0.0, nodes={}, apps=apps, asks={}, node_containers={}, app_allocated={},
                           capacity=capacity, journal=journal, journal_end=journal.end)


def read(cursor, snap, *same, equal=None):
    with cursor.read(snap, *same, equal=equal) as touched:
        return touched


def test_first_read_rebuilds_then_catch_up_gives_exactly_the_touched_apps():
    journal, cursor = Journal(), JournalCursor()
    journal.note("a")
    assert read(cursor, at(journal)) is None
    assert read(cursor, at(journal)) == []
    for app in ("b", "c", "b"):
        journal.note(app)
    assert read(cursor, at(journal)) == ["b", "c", "b"]  # in order, repeats included
    journal.note("d")
    assert read(cursor, at(journal)) == ["d"]


def test_a_snapshot_of_another_journal_or_of_none_rebuilds():
    journal, other, cursor = Journal(), Journal(), JournalCursor()
    read(cursor, at(journal))
    assert read(cursor, at(other)) is None
    assert read(cursor, at(other)) == []
    assert read(cursor, ClusterSnapshot(0.0, {}, {}, {}, {}, {})) is None  # built without a store
    assert read(cursor, ClusterSnapshot(0.0, {}, {}, {}, {}, {})) is None


def test_a_reader_the_journal_left_behind_rebuilds():
    journal, cursor = Journal(keep=2), JournalCursor()
    read(cursor, at(journal))
    for app in ("a", "b", "c", "d", "e"):  # past 2 * keep: the oldest entries are dropped
        journal.note(app)
    assert read(cursor, at(journal)) is None
    journal.note("f")
    assert read(cursor, at(journal)) == ["f"]


def test_an_input_that_is_not_the_same_object_rebuilds():
    journal, cursor = Journal(), JournalCursor()
    apps, conf = {"a": 1}, {"q": 1}
    read(cursor, at(journal), apps, conf)
    journal.note("a")
    assert read(cursor, at(journal), apps, conf) == ["a"]
    copy = dict(apps)
    assert read(cursor, at(journal), copy, conf) is None  # equal, but another object
    assert read(cursor, at(journal), copy, conf) == []  # the new one is what it compares with from now on


def test_an_input_compared_by_value_rebuilds_only_when_it_differs():
    journal, cursor = Journal(), JournalCursor()
    read(cursor, at(journal), equal=Resources(4096, 4))
    journal.note("a")
    assert read(cursor, at(journal), equal=Resources(4096, 4)) == ["a"]  # another object, the same value
    assert read(cursor, at(journal), equal=Resources(8192, 4)) is None


def test_a_block_that_raises_makes_the_next_read_rebuild():
    journal, cursor = Journal(), JournalCursor()
    read(cursor, at(journal))
    journal.note("a")
    with pytest.raises(RuntimeError):
        with cursor.read(at(journal)):
            raise RuntimeError("the reader failed half way")
    journal.note("b")
    assert read(cursor, at(journal)) is None  # its cache may be half-updated: rebuild
    assert read(cursor, at(journal)) == []
    with pytest.raises(RuntimeError):
        with cursor.read(at(Journal())):  # a rebuild that failed (the cache emptied, half refilled)
            raise RuntimeError
    assert read(cursor, at(journal)) is None
