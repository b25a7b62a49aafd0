"""OPERA's task classifier ([OPERA] Sec. III-B): Eq. 1 features, Eq. 2-3 naive Bayes, Table III metrics."""

from __future__ import annotations

import math

import pytest

from yarnctl.estimation.classifier import (
    LONG, SHORT, Confusion, FinishedTask, TaskClassifier, TaskFeatures, app_name, category, replay,
)

MAP = TaskFeatures("mapreduce", "terasort", "20", "alone", "1024x4")
REDUCE = TaskFeatures("mapreduce", "terasort", "10", "overlap", "1024x2")


def test_eq1_hierarchy_goes_from_framework_to_every_property():
    assert MAP.hierarchy() == ("mapreduce", "mapreduce/terasort", "mapreduce/terasort/20",
                               "mapreduce/terasort/20/alone/1024x4")


@pytest.mark.parametrize("duration, want", [(59.9, SHORT), (60.0, LONG), (600, LONG), (0.0, SHORT)],
                         ids=["just-under", "threshold-is-long", "long", "zero"])
def test_category_threshold_one_minute(duration, want):
    assert category(duration, 60.0) == want


def test_unknown_task_is_long_sec3b():
    clf = TaskClassifier()
    assert clf.classify(MAP) == LONG  # nothing learned at all
    clf.learn(MAP, 10)
    assert clf.classify(TaskFeatures("spark", "pathsim", "20", "alone", "10240x4")) == LONG  # all features new
    assert clf.classify(MAP) == SHORT


def test_eq2_eq3_posterior_by_hand():
    clf = TaskClassifier()
    for _ in range(3):
        clf.learn(MAP, 20)
    clf.learn(REDUCE, 100)
    # P(C) add-one: short 4/6, long 2/6; levels 0-1 hold one value (denominator n_C + 2), levels 2-3
    # two values (n_C + 3): short 4/5, 4/5, 4/6, 4/6; long 2/3, 2/3, 1/4, 1/4
    short = math.log(4 / 6 * 4 / 5 * 4 / 5 * 4 / 6 * 4 / 6)
    long_ = math.log(2 / 6 * 2 / 3 * 2 / 3 * 1 / 4 * 1 / 4)
    assert clf.log_posterior(MAP, SHORT) == pytest.approx(short)
    assert clf.log_posterior(MAP, LONG) == pytest.approx(long_)
    assert clf.classify(MAP) == SHORT and clf.classify(REDUCE) == LONG


def test_hierarchy_generalises_to_a_new_app_of_a_known_framework():
    clf = TaskClassifier()
    for _ in range(5):
        clf.learn(MAP, 20)
    clf.learn(TaskFeatures("spark", "pathsim", "20", "alone", "10240x4"), 600)
    # a wordcount map was never seen, but MapReduce tasks have been short
    assert clf.classify(TaskFeatures("mapreduce", "wordcount", "20", "alone", "1024x4")) == SHORT
    assert clf.classify(TaskFeatures("spark", "kmeans", "20", "alone", "4096x2")) == LONG


def test_tie_is_long():
    clf = TaskClassifier()
    clf.learn(MAP, 10)
    clf.learn(MAP, 100)
    assert clf.log_posterior(MAP, SHORT) == pytest.approx(clf.log_posterior(MAP, LONG))
    assert clf.classify(MAP) == LONG


def test_table3_metrics():
    """Table III: 2777 short tasks (2417 as short, 360 as long), 107 long (2 as short, 105 as long)."""
    m = Confusion(short_as_short=2417, short_as_long=360, long_as_short=2, long_as_long=105)
    assert (m.actual(SHORT), m.actual(LONG)) == (2777, 107)
    assert round(m.recall(SHORT), 3) == 0.870 and round(m.recall(LONG), 3) == 0.981
    assert m.precision(SHORT) == pytest.approx(2417 / 2419)
    assert m.accuracy() == pytest.approx(2522 / 2884)
    assert "87.0%" in m.table() and "98.1%" in m.table()


def test_replay_predicts_with_what_ended_before_each_start():
    tasks = [
        FinishedTask("t1", MAP, 0.0, 10.0),   # unknown at its start: predicted long, was short
        FinishedTask("t2", MAP, 5.0, 20.0),   # starts before t1 ends: still unknown, predicted long
        FinishedTask("t3", MAP, 10.0, 25.0),  # starts as t1 ends: t1 is known, predicted short
        FinishedTask("t4", REDUCE, 30.0, 200.0),  # only shares the framework with short tasks: predicted short
    ]
    m = replay(tasks)
    assert m == Confusion(short_as_short=1, short_as_long=2, long_as_short=1, long_as_long=0)


def test_replay_zero_length_task():
    assert replay([FinishedTask("t", MAP, 3.0, 3.0)]) == Confusion(short_as_long=1)


@pytest.mark.parametrize("name, app_id, want", [("terasort", "x1", "terasort"), ("", "terasort2", "terasort"),
                                                ("", "42", "42")], ids=["name", "id-digits-dropped", "all-digits"])
def test_app_name(name, app_id, want):
    assert app_name(name, app_id) == want
