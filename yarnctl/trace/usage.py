"""The container usage trace ([FEEDBACK], Sec. III-A): what each container was allocated and used.

One CSV file, a header row naming the columns (any order; other columns are ignored):

    container       container id, unique
    job             the application (job) it belongs to
    user            the user who submitted that job
    memory_mb       allocated memory (MB), > 0
    vcores          allocated vcores, > 0
    start_s         when it started (seconds, any origin)
    end_s           when it ended, >= start_s
    used_memory_mb  memory actually used (MB), >= 0
    used_vcores     cpu actually used, in vcores (1.0 = one core busy), >= 0; may exceed `vcores`
    is_am           optional: 1 for an ApplicationMaster's container, 0 (or empty) for a task's

Two layouts share these columns:

- means: one row per container; `used_*` are its time-averaged use over [start_s, end_s].
  `yarnctl simulate --out` writes this layout (containers-<policy>.csv).
- samples: the same columns plus `t_s`, one row per measurement of a container (e.g. an NM's
  JMX ContainerResource_* beans polled every few seconds); every row of a container repeats its
  job, user, allocation, start and end. A sample holds from its `t_s` until the container's next
  sample (the last one until `end_s`), so `used_*` become the time-weighted mean of the samples
  within [start_s, end_s]; a container whose samples span no time gets their plain mean.

A container with end_s == start_s held nothing for any time: it is kept, but E_c is undefined for it.
"""

from __future__ import annotations

import csv
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from yarnctl.errors import WorkloadError

LARGEST = 1e15  # MB, vcores, seconds: the workload reader's bound too, far past any trace, far below overflow

COLUMNS = ("container", "job", "user", "memory_mb", "vcores", "start_s", "end_s", "used_memory_mb", "used_vcores")
SAMPLE_COLUMN = "t_s"
AM_COLUMN = "is_am"
_NUMBERS = ("memory_mb", "vcores", "start_s", "end_s", "used_memory_mb", "used_vcores")


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    """One container of a usage trace: who ran it, what it was allocated, for how long, and its mean use."""

    container: str
    job: str
    user: str
    memory_mb: float
    vcores: float
    start_s: float
    end_s: float
    used_memory_mb: float
    used_vcores: float
    is_am: bool = False

    @property
    def duration_s(self) -> float:
        """How long it held its allocation."""
        return self.end_s - self.start_s


def read_trace(path: Path) -> list[ContainerUsage]:
    """The containers of a usage trace CSV (either layout), in file order; malformed input raises WorkloadError."""
    source = str(path)
    try:
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise WorkloadError(source, "", f"cannot read: {e.strerror or e}") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise WorkloadError(source, "", f"not a CSV text file: {e}") from None
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise WorkloadError(source, "", f"empty file; expected a header row with {','.join(COLUMNS)}")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise WorkloadError(source, "header", f"missing column(s) {','.join(missing)}; "
                                              f"expected {','.join(COLUMNS)} (and {SAMPLE_COLUMN} for samples)")
    where = {name: header.index(name) for name in (*COLUMNS, SAMPLE_COLUMN, AM_COLUMN) if name in header}
    sampled = SAMPLE_COLUMN in where
    parsed: list[tuple[int, dict[str, str], dict[str, float]]] = []
    for n, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue  # blank line
        if len(row) < len(header):
            raise WorkloadError(source, f"line {n}", f"{len(row)} fields, the header has {len(header)}")
        text = {k: row[i].strip() for k, i in where.items()}
        for k in ("container", "job", "user"):
            if not text[k]:
                raise WorkloadError(source, f"line {n}, {k}", "empty")
        nums = {k: _number(text[k], source, n, k) for k in (*_NUMBERS, *((SAMPLE_COLUMN,) if sampled else ()))}
        for k in ("memory_mb", "vcores"):
            if nums[k] <= 0:
                raise WorkloadError(source, f"line {n}, {k}", f"the allocation must be > 0, got {text[k]}")
        for k in ("used_memory_mb", "used_vcores"):
            if nums[k] < 0:
                raise WorkloadError(source, f"line {n}, {k}", f"negative use {text[k]}")
        if nums["end_s"] < nums["start_s"]:
            raise WorkloadError(source, f"line {n}, end_s", f"{text['end_s']} is before start_s {text['start_s']}")
        _check_measurable(text, nums, source, n)
        if text.get(AM_COLUMN, "") not in ("", "0", "1"):
            raise WorkloadError(source, f"line {n}, {AM_COLUMN}", f"expected 0 or 1, got {text[AM_COLUMN]!r}")
        parsed.append((n, text, nums))
    if not parsed:
        raise WorkloadError(source, "", "no containers (only a header)")
    return _from_samples(parsed, source) if sampled else _from_means(parsed, source)


def _number(text: str, source: str, line: int, column: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise WorkloadError(source, f"line {line}, {column}", f"not a number: {text!r}") from None
    if not -LARGEST <= x <= LARGEST:  # a job's or user's sums of products stay far below a float's overflow
        raise WorkloadError(source, f"line {line}, {column}", f"not a finite number of at most {LARGEST:.0e}: {text!r}")
    return x


def _check_measurable(text: dict[str, str], nums: dict[str, float], source: str, line: int) -> None:
    """WorkloadError naming the line unless E = used / allocated resource-seconds is a finite float for both resources."""
    d = nums["end_s"] - nums["start_s"]
    if d <= 0:
        return  # no resource-seconds: E is undefined and the container counts for nothing
    for alloc, used in (("memory_mb", "used_memory_mb"), ("vcores", "used_vcores")):
        allocated = nums[alloc] * d
        if allocated < sys.float_info.min:  # E would divide by (near) zero
            raise WorkloadError(source, f"line {line}, {alloc}",
                                f"{text[alloc]} held for {d:g} s is too small an allocation to measure E = used / allocated")
        if not math.isfinite(nums[used] * d / allocated):
            raise WorkloadError(source, f"line {line}, {used}",
                                f"{text[used]} of {text[alloc]} allocated for {d:g} s: E = used / allocated is "
                                f"beyond a float")


def _record(text: dict[str, str], nums: dict[str, float], used_mb: float, used_vc: float) -> ContainerUsage:
    return ContainerUsage(text["container"], text["job"], text["user"], nums["memory_mb"], nums["vcores"],
                          nums["start_s"], nums["end_s"], used_mb, used_vc, text.get(AM_COLUMN) == "1")


def _from_means(parsed: Sequence[tuple[int, dict[str, str], dict[str, float]]], source: str) -> list[ContainerUsage]:
    seen: dict[str, int] = {}
    out = []
    for n, text, nums in parsed:
        cid = text["container"]
        if cid in seen:
            raise WorkloadError(source, f"line {n}, container",
                                f"{cid!r} already on line {seen[cid]} (one row per container without {SAMPLE_COLUMN})")
        seen[cid] = n
        out.append(_record(text, nums, nums["used_memory_mb"], nums["used_vcores"]))
    return out


def _from_samples(parsed: Sequence[tuple[int, dict[str, str], dict[str, float]]],
                  source: str) -> list[ContainerUsage]:
    groups: dict[str, list[tuple[int, dict[str, str], dict[str, float]]]] = {}
    for item in parsed:
        groups.setdefault(item[1]["container"], []).append(item)  # first-seen order, as in the file
    out = []
    for cid, items in groups.items():
        n0, text0, nums0 = items[0]
        for n, text, nums in items[1:]:
            for k in ("job", "user", *((AM_COLUMN,) if AM_COLUMN in text else ())):
                if text[k] != text0[k]:
                    raise WorkloadError(source, f"line {n}, {k}", f"container {cid!r} has {k} {text0[k]!r} on line {n0}")
            for k in ("memory_mb", "vcores", "start_s", "end_s"):
                if nums[k] != nums0[k]:
                    raise WorkloadError(source, f"line {n}, {k}",
                                        f"container {cid!r} has {k} {text0[k]} on line {n0}; a container's rows "
                                        f"repeat its allocation, start and end")
        mem, vc = mean_of_samples([(nums[SAMPLE_COLUMN], nums["used_memory_mb"], nums["used_vcores"])
                                   for _, _, nums in items], nums0["start_s"], nums0["end_s"])
        out.append(_record(text0, nums0, mem, vc))
    return out


def mean_of_samples(samples: Iterable[tuple[float, float, float]], start_s: float,
                    end_s: float) -> tuple[float, float]:
    """Time-weighted mean (memory, vcores) of (t, memory, vcores) samples, each held until the next, within [start, end]."""
    pts = sorted(samples)
    total = mem = vc = 0.0
    for i, (t, m, c) in enumerate(pts):
        until = pts[i + 1][0] if i + 1 < len(pts) else end_s
        width = max(min(until, end_s) - max(t, start_s), 0.0)
        total += width
        mem += m * width
        vc += c * width
    if total > 0:
        return mem / total, vc / total
    # every sample at one instant (or outside the container's life): nothing to weigh by
    return sum(p[1] for p in pts) / len(pts), sum(p[2] for p in pts) / len(pts)


def write_trace(path: Path, containers: Iterable[ContainerUsage], extra: Sequence[str] = (),
                extra_values: Iterable[Sequence[object]] | None = None) -> Path:
    """Write containers in the means layout (with is_am), optional extra columns (e.g. queue, node) after the standard ones."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = list(containers)
    extras = list(extra_values) if extra_values is not None else [() for _ in rows]
    if len(extras) != len(rows):
        raise ValueError("extra_values must have one entry per container")
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*COLUMNS, AM_COLUMN, *extra])
        for c, more in zip(rows, extras):
            w.writerow([c.container, c.job, c.user, _fmt(c.memory_mb), _fmt(c.vcores), _fmt(c.start_s),
                        _fmt(c.end_s), _fmt(c.used_memory_mb), _fmt(c.used_vcores), int(c.is_am), *more])
    return path


def _fmt(x: float) -> str:
    # integers stay integers; four decimals keep E_c exact to far below what a percentile shows
    return str(int(x)) if float(x).is_integer() else repr(round(float(x), 4))
