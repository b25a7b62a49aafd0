"""ITA: HaSTE's initial task assignment for one node (001_cab13f737c1b28a6.txt Sec. 3.3, Alg. 1).

Alg. 1's AssignTask(j, T) fills server S_j with the tasks that maximise sum_p w_p R[i,p] (the
knapsack of Sec. 3.3): OPT[a, b] and L[a, b] are kept per cell of a (memory, vcores) grid; a
task of some size extends L[a - R1, b - R2] unless that list already holds every task of that
size (lines 6-17), and the best cell wins (line 18). The grid steps are the minimum allocation
(YARN normalises requests to its multiples), so the work is cells x distinct task sizes, and
callers bound it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from yarnctl.model import Resources

Cell = tuple[float, tuple[int, ...]]  # OPT[a, b] and L[a, b], L as indices into the task sizes


def grid_work(sizes: int, residual: Resources, unit: Resources) -> int:
    """Alg. 1's work for `sizes` distinct task sizes on `residual`: grid cells x sizes."""
    return (residual.memory_mb // max(unit.memory_mb, 1) + 1) * (residual.vcores // max(unit.vcores, 1) + 1) * sizes


def initial_assignment(tasks: Sequence[tuple[Resources, int]], residual: Resources, unit: Resources,
                       value: Callable[[Resources], float]) -> list[int]:
    """How many tasks of each (size, count) in `tasks` Alg. 1 puts on a node with `residual` free.

    `value` is V of line 13 (w_1 R[i,1] + w_2 R[i,2]). Among equal values, a cell keeps the
    earlier entry of `tasks` and line 18 the cell scanned first (least memory, then vcores).
    """
    um, uv = max(unit.memory_mb, 1), max(unit.vcores, 1)
    items = [(-(-r.memory_mb // um), -(-r.vcores // uv), value(r), n) for r, n in tasks]
    rows, cols = residual.memory_mb // um + 1, residual.vcores // uv + 1
    opt: list[list[Cell]] = [[(0.0, ())] * cols for _ in range(rows)]
    best: Cell = (0.0, ())
    for a in range(rows):
        for b in range(cols):
            for t, (da, db, v, n) in enumerate(items):
                if da <= a and db <= b:
                    prev_value, prev_list = opt[a - da][b - db]
                    if prev_value + v > opt[a][b][0] and prev_list.count(t) < n:
                        opt[a][b] = (prev_value + v, prev_list + (t,))
            if opt[a][b][0] > best[0]:
                best = opt[a][b]
    return [best[1].count(t) for t in range(len(items))]
