"""ITA: HaSTE's initial task assignment for one node ([HaSTE] Sec. 3.3, Alg. 1).

Alg. 1's AssignTask(j, T) fills server S_j with the tasks that maximise sum_p w_p R[i,p] (the
knapsack of Sec. 3.3): OPT[a, b] and L[a, b] are kept per cell of a (memory, vcores) grid; a
task of some size extends L[a - R1, b - R2] unless that list already holds every task of that
size (lines 6-17), and the best cell wins (line 18). The grid steps are the minimum allocation
(YARN normalises asks to its multiples), so the work is cells x distinct task sizes, and
callers bound it (`grid_work`; HaSTE falls back to RTA above `ita_max_work`).

How it is computed, with the same result as lines 4-18 cell by cell (tests/policies/test_haste_ita.py
keeps that literal version and compares):
- Only the list's counts matter (line 21), and L[a, b] is L of the cell it extended plus one task,
  so OPT is kept per cell and line 18's list is walked back from the best cell.
- A list in cell (a, b) fits in <a, b>, so it never holds more tasks of a size than fit in the
  grid: counts above that are cut to it (which also makes them a stable cache key). When no count
  binds, line 8 never fires, OPT[a, b] is the best of OPT[a - R1, b - R2] + V alone, and the task
  line 15 kept is the first (in `tasks` order) reaching that value, found again on the walk back.
  Otherwise the cell also keeps how many tasks of each binding size its list holds.
- One size on its own needs no grid: line 18 takes as many as fit, up to its count.
- The result is cached per (grid, sizes, values, cut counts): the empty nodes of an idle cluster
  that a batch meets, one heartbeat after the other, ask the same question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from yarnctl.model import Resources

Item = tuple[int, int, float, int]  # a task size in grid steps (memory, vcores), its value V, its count


def grid_work(sizes: int, residual: Resources, unit: Resources) -> int:
    """Alg. 1's work for `sizes` distinct task sizes on `residual`: grid cells x sizes."""
    return (residual.memory_mb // max(unit.memory_mb, 1) + 1) * (residual.vcores // max(unit.vcores, 1) + 1) * sizes


def initial_assignment(tasks: Sequence[tuple[Resources, int]], residual: Resources, unit: Resources,
                       value: Callable[[Resources], float]) -> list[int]:
    """How many tasks of each (size, count) in `tasks` Alg. 1 puts on a node with `residual` free.

    `value` is V of line 13 (w_1 R[i,1] + w_2 R[i,2], never negative). Among equal values, a cell
    keeps the earlier entry of `tasks` and line 18 the cell scanned first (least memory, then
    vcores). A task of no size (0 MB, 0 vcores) is worth nothing and never placed.
    """
    um, uv = max(unit.memory_mb, 1), max(unit.vcores, 1)
    rows, cols = residual.memory_mb // um + 1, residual.vcores // uv + 1
    items = []
    for r, n in tasks:
        da, db = -(-r.memory_mb // um), -(-r.vcores // uv)
        items.append((da, db, value(r), max(0, min(n, _most(da, db, rows, cols)))))
    return list(_pack(rows, cols, tuple(items)))


def cache_clear() -> None:
    """Forget the cached results (for timing Alg. 1 cold)."""
    _pack.cache_clear()


@lru_cache(maxsize=256)
def _pack(rows: int, cols: int, items: tuple[Item, ...]) -> tuple[int, ...]:
    """Line 21's counts per item for a `rows` x `cols` grid; an item's count is at most what fits."""
    counts = [0] * len(items)
    live = [t for t, (_, _, _, n) in enumerate(items) if n > 0]
    if len(live) == 1:
        t = live[0]
        counts[t] = items[t][3] if items[t][2] > 0 else 0
    elif live:
        binding = [t for t in live if items[t][3] < _most(items[t][0], items[t][1], rows, cols)]
        chosen = _fill_bounded(rows, cols, items, live, binding) if binding else _fill(rows, cols, items, live)
        for t in chosen:
            counts[t] += 1
    return tuple(counts)


def _most(da: int, db: int, rows: int, cols: int) -> int:
    """How many tasks of `da` x `db` grid steps fit in the grid (none of no size: it is never placed)."""
    if not (da or db):
        return 0
    return min((rows - 1) // da if da else cols, (cols - 1) // db if db else rows)


def _fits(items: tuple[Item, ...], live: list[int], rows: int, cols: int) -> list[list[list[tuple[int, float]]]]:
    """Per row a (rows past the tallest item share the last entry), per column b: (flat offset, V) of the items that fit."""
    sized = [(da, db, (da * cols + db, v)) for da, db, v, _ in (items[t] for t in live)]
    tallest = max(da for da, _, _ in sized)
    return [[[e for da, db, e in sized if da <= a and db <= b] for b in range(cols)]
            for a in range(min(rows, tallest + 1))]


def _fill(rows: int, cols: int, items: tuple[Item, ...], live: list[int]) -> list[int]:
    """Lines 4-18 when no count binds: OPT cell by cell, then line 18's list, as item indices."""
    fits = _fits(items, live, rows, cols)
    last = len(fits) - 1
    opt: list[float] = []  # OPT, row-major: cell (a, b) at a * cols + b
    i = 0
    for a in range(rows):
        for fit in fits[a if a < last else last]:
            best = 0.0
            for off, v in fit:
                c = opt[i - off] + v
                if c > best:
                    best = c
            opt.append(best)
            i += 1
    out: list[int] = []
    i = opt.index(max(opt))  # line 18: the first cell with the best value
    while opt[i] > 0:  # L[a, b] = L[cell extended] + the first item reaching OPT[a, b]
        a, b = divmod(i, cols)
        t = next(t for t in live if items[t][0] <= a and items[t][1] <= b
                 and opt[i - items[t][0] * cols - items[t][1]] + items[t][2] == opt[i])
        out.append(t)
        i -= items[t][0] * cols + items[t][1]
    return out


def _fill_bounded(rows: int, cols: int, items: tuple[Item, ...], live: list[int], binding: list[int]) -> list[int]:
    """Lines 4-18 when some counts bind: each cell also keeps its list's count of every binding size."""
    tallest = max(items[t][0] for t in live)
    slot = {t: k for k, t in enumerate(binding)}
    fits = [[[(items[t][0] * cols + items[t][1], items[t][2], t, slot.get(t, -1), items[t][3]) for t in live
              if items[t][0] <= a and items[t][1] <= b] for b in range(cols)] for a in range(min(rows, tallest + 1))]
    last = len(fits) - 1
    opt: list[float] = []
    took: list[int] = []  # the item line 15 kept in each cell, -1 for an empty list
    held: list[tuple[int, ...]] = []  # per cell: how many tasks of each binding size its list holds
    empty = (0,) * len(binding)
    for a in range(rows):
        for fit in fits[min(a, last)]:
            i, best, kept = len(opt), 0.0, None
            for entry in fit:
                off, v, _, k, n = entry
                c = opt[i - off] + v
                if c > best and (k < 0 or held[i - off][k] < n):  # lines 8 and 15
                    best, kept = c, entry
            opt.append(best)
            if kept is None:
                took.append(-1)
                held.append(empty)
            else:
                off, _, t, k, _ = kept
                took.append(t)
                prev = held[i - off]
                held.append(prev if k < 0 else prev[:k] + (prev[k] + 1,) + prev[k + 1:])
    out: list[int] = []
    i = opt.index(max(opt))
    while took[i] >= 0:
        t = took[i]
        out.append(t)
        i -= items[t][0] * cols + items[t][1]
    return out
