"""OPERA's task classifier ([OPERA], Sec. III-B, Eq. 1-3, Table III): short or long, by naive Bayes.

A task's five properties (Sec. III-B) as YARN 2.7 exposes them at allocation time:

    F_t  framework           App.type (applicationType: mapreduce, spark, ...)
    A_t  application name    App.name (the id with trailing digits dropped when the app has no name)
    S_t  processing stage    the request's priority (MR: map 20, reduce 10; AM 0)
    P_t  application progress  "overlap" when the app still has another stage outstanding or running
                             (for a reduce: maps not done, so it will wait for them), else "alone";
                             YARN 2.7's scheduler sees no progress figure, and the paper's own example
                             of P_t is exactly this (reduces started before or after the maps end)
    D_t  resource demand     the request's capability, "<MB>x<vcores>"

The feature tuple of Eq. 1 is the hierarchy {F}, {F, A}, {F, A, S}, {F, A, S, P, D}; each element is
one categorical feature. Eq. 2-3: P(C | F_t) ∝ P(C) Π_i P(F_t^i | C), with add-one (Laplace)
smoothing over the values seen at each level. Learning is online (Sec. III-B): a finished task is
short when it ran less than the threshold (1 minute) and updates every count. A task none of whose
features has been seen is classified long, and so is a tie (Sec. III-B: "conservatively").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

SHORT = "short"
LONG = "long"
CLASSES = (SHORT, LONG)


@dataclass(frozen=True, slots=True)
class TaskFeatures:
    """The five task properties of Sec. III-B, as strings."""

    framework: str
    app: str
    stage: str
    progress: str
    demand: str

    def hierarchy(self) -> tuple[str, ...]:
        """Eq. 1: the features {F}, {F, A}, {F, A, S}, {F, A, S, P, D}, each joined into one value."""
        f, a, s, p, d = self.framework, self.app, self.stage, self.progress, self.demand
        return (f, f"{f}/{a}", f"{f}/{a}/{s}", f"{f}/{a}/{s}/{p}/{d}")


def category(duration_s: float, threshold_s: float) -> str:
    """A finished task's class: short below the threshold, else long."""
    return SHORT if duration_s < threshold_s else LONG


class TaskClassifier:
    """Naive Bayes over the hierarchical features (Eq. 2-3), learned online from finished tasks."""

    def __init__(self, threshold_s: float = 60.0) -> None:
        if threshold_s <= 0:
            raise ValueError(f"threshold_s must be positive, got {threshold_s}")
        self.threshold_s = threshold_s
        self.totals: dict[str, int] = {c: 0 for c in CLASSES}
        # counts[level][value][class]
        self.counts: list[dict[str, dict[str, int]]] = [{} for _ in range(4)]

    def learn(self, features: TaskFeatures, duration_s: float) -> str:
        """Count one finished task under its class (Sec. III-B); returns that class."""
        c = category(duration_s, self.threshold_s)
        self.totals[c] += 1
        for level, value in zip(self.counts, features.hierarchy()):
            per_class = level.setdefault(value, {k: 0 for k in CLASSES})
            per_class[c] += 1
        return c

    def log_posterior(self, features: TaskFeatures, c: str) -> float:
        """log P(C) + Σ_i log P(F^i | C) (Eq. 2-3), add-one smoothed."""
        n = sum(self.totals.values())
        lp = math.log((self.totals[c] + 1) / (n + len(CLASSES)))
        for level, value in zip(self.counts, features.hierarchy()):
            seen = level.get(value)
            k = seen[c] if seen else 0
            lp += math.log((k + 1) / (self.totals[c] + len(level) + 1))  # +1: room for a value not seen yet
        return lp

    def known(self, features: TaskFeatures) -> bool:
        """True when at least one of the task's features has been seen in a finished task."""
        return any(value in level for level, value in zip(self.counts, features.hierarchy()))

    def classify(self, features: TaskFeatures) -> str:
        """Short or long by the higher posterior; unknown tasks and ties are long."""
        if not self.known(features):
            return LONG
        return SHORT if self.log_posterior(features, SHORT) > self.log_posterior(features, LONG) else LONG

    def is_short(self, features: TaskFeatures) -> bool:
        """True when the task is eligible for opportunistic resources (Sec. III-A: short tasks only)."""
        return self.classify(features) == SHORT


@dataclass(frozen=True, slots=True)
class FinishedTask:
    """A task that ran to completion: its features, and when it started and ended."""

    id: str
    features: TaskFeatures
    start_s: float
    end_s: float


@dataclass(frozen=True, slots=True)
class Confusion:
    """Table III: actual class (rows) against predicted class (columns), as counts."""

    short_as_short: int = 0
    short_as_long: int = 0
    long_as_short: int = 0
    long_as_long: int = 0

    def add(self, actual: str, predicted: str) -> Confusion:
        """This matrix with one more task counted."""
        s, sl, ls, ll = self.short_as_short, self.short_as_long, self.long_as_short, self.long_as_long
        if actual == SHORT:
            return Confusion(s + (predicted == SHORT), sl + (predicted == LONG), ls, ll)
        return Confusion(s, sl, ls + (predicted == SHORT), ll + (predicted == LONG))

    def actual(self, c: str) -> int:
        """How many tasks really were of class `c` (Table III's "Fact" column)."""
        return self.short_as_short + self.short_as_long if c == SHORT else self.long_as_short + self.long_as_long

    def predicted(self, c: str) -> int:
        """How many tasks were predicted to be of class `c`."""
        return self.short_as_short + self.long_as_short if c == SHORT else self.short_as_long + self.long_as_long

    def correct(self, c: str) -> int:
        """Tasks of class `c` predicted as `c`."""
        return self.short_as_short if c == SHORT else self.long_as_long

    def recall(self, c: str) -> float:
        """Correct / actual for class `c`: Table III's "Pred. Accuracy" per row."""
        n = self.actual(c)
        return self.correct(c) / n if n else 0.0

    def precision(self, c: str) -> float:
        """Correct / predicted for class `c`."""
        n = self.predicted(c)
        return self.correct(c) / n if n else 0.0

    def accuracy(self) -> float:
        """Correct over all tasks."""
        n = self.actual(SHORT) + self.actual(LONG)
        return (self.correct(SHORT) + self.correct(LONG)) / n if n else 0.0

    def table(self) -> str:
        """The matrix laid out as Table III, with precision added."""
        lines = [f"{'':6} {'fact':>6} {'short':>6} {'long':>6} {'recall':>7} {'precision':>9}"]
        for c in CLASSES:
            row = (self.short_as_short, self.short_as_long) if c == SHORT else (self.long_as_short, self.long_as_long)
            lines.append(f"{c:6} {self.actual(c):6d} {row[0]:6d} {row[1]:6d} {self.recall(c):7.1%} "
                         f"{self.precision(c):9.1%}")
        lines.append(f"accuracy {self.accuracy():.1%}")
        return "\n".join(lines)


def replay(tasks: Iterable[FinishedTask], threshold_s: float = 60.0) -> Confusion:
    """Classify each task at its start with what was learned from tasks ended before, learn it at its end."""
    events: list[tuple[float, int, str, FinishedTask]] = []
    for t in tasks:
        events.append((t.start_s, 1, t.id, t))
        # at equal times an end is known before a start, except a task's own (zero-length) end
        events.append((t.end_s, 0 if t.end_s > t.start_s else 2, t.id, t))
    clf = TaskClassifier(threshold_s)
    predicted: dict[str, str] = {}
    out = Confusion()
    for _, kind, tid, t in sorted(events, key=lambda e: e[:3]):
        if kind == 1:
            predicted[tid] = clf.classify(t.features)
        else:
            out = out.add(clf.learn(t.features, t.end_s - t.start_s), predicted.pop(tid))
    return out


def app_name(name: str, app_id: str) -> str:
    """A_t: the app's name, or its id without trailing digits (terasort2 -> terasort) when it has none."""
    return name or app_id.rstrip("0123456789_-") or app_id


def demand(memory_mb: int, vcores: int) -> str:
    """D_t as a categorical value."""
    return f"{memory_mb}x{vcores}"

