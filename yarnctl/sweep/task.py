"""The mapper of the YARN executor: cells in on stdin (one JSON line each), `KEY<TAB>RESULT-JSON` lines out.

    python -m yarnctl.sweep.task < cells.jsonl

Hadoop streaming hands a map task its split's lines, each as `OFFSET<TAB>LINE` under
NLineInputFormat; the offset is dropped. A cell that raises is reported as {"error": ...} and the
task goes on, so one bad cell does not make YARN retry the others.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from yarnctl.sweep.cell import run_cell
from yarnctl.sweep.spec import Cell, RunOptions


def encode(key: str, cell: Cell, options: RunOptions) -> str:
    """One input line for a cell."""
    return json.dumps({"key": key, "workload": cell.workload, "policy": cell.policy,
                       "params": [list(p) for p in cell.params], "seed": cell.seed, "alias": cell.alias,
                       **options.doc()}, sort_keys=True)


def decode(line: str) -> tuple[str, Cell, RunOptions]:
    """The key, cell and run options of an input line (with or without streaming's offset in front)."""
    text = line.strip()
    if not text.startswith("{"):
        text = text.split("\t", 1)[-1]
    doc = json.loads(text)
    cell = Cell(doc["workload"], doc["policy"], tuple((str(k), v) for k, v in doc["params"]), int(doc["seed"]),
                doc.get("alias"))
    return str(doc["key"]), cell, RunOptions.from_doc(doc)


def run_lines(lines: Iterable[str]) -> Iterator[str]:
    """Run each cell and yield its output line."""
    for line in lines:
        if not line.strip():
            continue
        try:
            key, cell, options = decode(line)
        except (ValueError, KeyError, TypeError) as e:  # not a line we wrote: say so, run the others
            print(f"yarnctl sweep task: bad input line ({e}): {line[:200]!r}", file=sys.stderr)
            continue
        try:
            result: dict[str, Any] = {"row": run_cell(cell, options)}
        except Exception as e:  # reported, not raised: the other cells of this task still run
            result = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
        yield f"{key}\t{json.dumps(result, sort_keys=True)}"


def main(stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    """Run the cells of stdin, one output line per cell, flushed as each finishes."""
    for out in run_lines(stdin):
        print(out, file=stdout, flush=True)
        # Hadoop streaming counts a task alive while it reports; a long cell must not look hung
        print("reporter:status:cell done", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
