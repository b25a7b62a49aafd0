"""What starting cost in the real runs: a task JVM's start-up and an AM's set-up, measured from the job histories, not fitted.

A SleepJob map sleeps a configured time, so whatever else its attempt took (container launch,
JVM start-up, task set-up and commit) is its start-up overhead. On one machine that overhead grows
with the other starts beside it: task start-ups (of any task, program or outcome) and AM set-ups
(AM_STARTED to JOB_INITED) of any job going on in its first moments, counted on the whole machine, as
both NodeManagers share its cores. A straight line through (starts beside it, overhead) says what a
start costs alone and how much each start beside it adds: the quantity the simulator's start-up
model (`cluster.startup`) stands for, measured apart from the fit that tunes it on job completion
times (docs/fidelity.md). An AM's own set-up, from its JVM's start to its job's initialisation, is
measured against the starts beside it the same way: the part of a job's start that the simulator's
`am_s` stands for (with the AM's launch cost, `am_s` also covers the AM's JVM start before it).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from yarnctl.bench.replay import job_id_of, sleep_shape

if TYPE_CHECKING:
    from yarnctl.bench.fidelity import RealRun

Kind = Literal["map", "am"]
# what a line measures: its subject in a sentence, and what it counts
KINDS: dict[Kind, tuple[str, str]] = {
    "map": ("a SleepJob map's start-up", "maps"),
    "am": ("an AM's set-up (AM_STARTED to JOB_INITED)", "AMs"),
}

Span = tuple[int, int]  # [begin, end) in ms


@dataclass(frozen=True, slots=True)
class StartCost:
    """A straight line through measured start-ups: `alone_s` plus `per_overlap_s` per start beside one."""

    kind: Kind
    measured: int  # start-ups measured (SleepJob map attempts, or AM set-ups)
    alone_s: float
    per_overlap_s: float
    rms_s: float  # root mean square of the measured ones' distance from the line
    most_overlapping: int  # the most starts beside one


def _starts(run: RealRun) -> tuple[list[Span], list[Span], list[Span]]:
    """(every start-up phase on the machine, the measured maps' start-ups among them, the AMs' set-ups among them)."""
    by_id = {j.id: j for j in run.spec.jobs}
    sleep_ms = {}  # a SleepJob's history (by job id): its maps' configured sleep
    for r in run.records:
        job = by_id.get(str(r.get("job_id")))
        if job is not None and job.program == "sleep":
            sleep_ms[job_id_of(str(r.get("app_id", "")))] = sleep_shape(job.args)["map_ms"]
    ams: list[Span] = []
    maps: list[Span] = []
    others: list[Span] = []  # the other attempts' launch and finish: their start-up is not known
    for job_id, h in run.history.items():
        if h.am_start_ms and h.launch_ms > h.am_start_ms:
            ams.append((h.am_start_ms, h.launch_ms))  # the AM's own set-up is start-up work too
        sleep = sleep_ms.get(job_id)
        for a in h.attempts:
            if not a.start_ms:
                continue
            # the attempt's sleep is its own work; the rest (its commit too) counted as start-up, at its front.
            # One no longer than its sleep is a clock artefact, not a start that cost nothing: not measured
            if sleep is not None and a.type == "MAP" and a.status == "SUCCEEDED" and a.finish_ms - sleep > a.start_ms:
                maps.append((a.start_ms, a.finish_ms - sleep))
            else:
                others.append((a.start_ms, a.finish_ms))
    if not maps:
        return [], [], []  # no typical start-up to give the attempts whose own is not known: nothing to count
    # a reduce, another program's task or a failed attempt started a JVM on the same cores too: its start-up
    # is taken to last as long as a measured map's typically did (or until it finished)
    typical = round(statistics.median(e - s for s, e in maps))
    spans = ams + maps + [(s, min(f, s + typical) if f > s else s + typical) for s, f in others]
    return spans, maps, ams


def _beside(spans: list[Span], measured: list[Span]) -> list[tuple[int, float]]:
    """(starts overlapping its first moments, its length in s) of each of `measured` (each one of `spans`)."""
    if not measured:
        return []
    # its first moments: the typical (median) length of `measured` from its start, not its own length: over
    # its own span a slower one would overlap more starts for being slower, and the line would find a crowd
    # cost in start-ups whose length has nothing to do with one. Itself is among the spans: once
    typical = round(statistics.median(e - s for s, e in measured))
    return [(sum(1 for b, e in spans if b < start + typical and e > start) - 1, (end - start) / 1000.0)
            for start, end in measured]


def overheads(run: RealRun) -> list[tuple[int, float]]:
    """(starts overlapping its first moments, start-up overhead in s) of each succeeded SleepJob map attempt of `run`."""
    spans, maps, _ = _starts(run)
    return _beside(spans, maps)


def am_setups(run: RealRun) -> list[tuple[int, float]]:
    """(starts overlapping its first moments, set-up in s) of each AM of `run` (none without a measured map)."""
    spans, _, ams = _starts(run)
    return _beside(spans, ams)


def fit_line(points: Iterable[tuple[int, float]], kind: Kind) -> StartCost | None:
    """Least squares through (starts beside it, length); None with fewer than two distinct counts."""
    pts = list(points)
    if len({n for n, _ in pts}) < 2:
        return None
    xs, ys = [float(n) for n, _ in pts], [o for _, o in pts]
    slope, intercept = statistics.linear_regression(xs, ys)
    rms = statistics.fmean((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys)) ** 0.5
    return StartCost(kind, len(pts), intercept, slope, rms, max(n for n, _ in pts))


def measure(runs: Iterable[RealRun]) -> StartCost | None:
    """The line through every SleepJob map of `runs` (None when they have too few to draw one)."""
    return fit_line((p for run in runs for p in overheads(run)), "map")


def measure_am(runs: Iterable[RealRun]) -> StartCost | None:
    """The line through every AM set-up of `runs` (None when they have too few to draw one)."""
    return fit_line((p for run in runs for p in am_setups(run)), "am")


def describe(cost: StartCost) -> str:
    """One line: 'a SleepJob map's start-up took 1.9 s + 0.56 s per start beside it on the machine (...)'."""
    subject, counted = KINDS[cost.kind]
    sign = "+" if cost.per_overlap_s >= 0 else "-"  # a run where crowds did not slow starts: say so plainly
    return (f"{subject} took {cost.alone_s:.1f} s {sign} {abs(cost.per_overlap_s):.2f} s per start "
            f"beside it on the machine ({cost.measured} {counted}, up to {cost.most_overlapping} beside one; "
            f"rms {cost.rms_s:.1f} s)")
