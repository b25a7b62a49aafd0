"""Finished cells on disk, one JSON file per cell under its content hash: a sweep killed half-way resumes where it was."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yarnctl
from yarnctl.sim.workload.reader import show
from yarnctl.sweep.spec import Cell

log = logging.getLogger(__name__)

# the sources a row depends on (the simulation, and the metrics made of it): a change to any of them
# makes every cell run again
_CODE = ("sim", "policies", "model", "fairness", "estimation", "state", "trace", "engine.py", "sweep/cell.py")


def code_hash() -> str:
    """A hash of yarnctl's version and the simulator's and policies' sources."""
    root = Path(yarnctl.__file__).parent
    h = hashlib.sha256(yarnctl.__version__.encode())
    for part in _CODE:
        p = root / part
        for f in sorted(p.rglob("*.py") if p.is_dir() else [p]):
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
        if p.is_dir():  # built-in workloads live beside the code
            for f in sorted(p.rglob("*.yaml")):
                h.update(f.read_bytes())
    return h.hexdigest()[:16]


class CellStore:
    """DIR/cells/<key>.json: {"key", "cell", "row"}; written atomically, so a kill never leaves half a cell."""

    def __init__(self, out: Path) -> None:
        self.dir = out / "cells"
        self._warned: set[Path] = set()

    def path(self, key: str) -> Path:
        """Where the cell with this key is kept."""
        return self.dir / f"{key}.json"

    def done(self, keys: Iterable[str]) -> set[str]:
        """The keys among `keys` whose cells are kept (a corrupt cell file is not: its cell runs again)."""
        return {k for k in keys if self.get(k) is not None}

    def put(self, key: str, cell: Cell, row: dict[str, Any]) -> None:
        """Keep one finished cell."""
        self.dir.mkdir(parents=True, exist_ok=True)
        doc = {"key": key, "cell": {**asdict(cell), "params": [list(p) for p in cell.params]}, "row": row}
        tmp = self.dir / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(doc, sort_keys=True) + "\n")
        os.replace(tmp, self.path(key))

    def get(self, key: str) -> dict[str, Any] | None:
        """The kept row of a cell; None when it is not kept, or its file is corrupt (said once, on stderr)."""
        path = self.path(key)
        if not path.is_file():
            return None
        problem: str | None
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            doc, problem = None, f"unreadable ({str(e).splitlines()[0]})"
        else:
            problem = _problem(doc, key)
        if problem is None:
            row: dict[str, Any] = doc["row"]
            return row
        # kept cells are written atomically, so this one was changed from outside: it holds no result, and the
        # sweep's promise is to run what is not kept
        if path not in self._warned:
            self._warned.add(path)
            log.warning("%s: %s; running its cell again", path, problem)
        return None


def _problem(doc: Any, key: str) -> str | None:
    """What makes `doc` not the kept cell `key` (a row of metrics, each a number or null), None when it is."""
    if not isinstance(doc, dict) or doc.get("key") != key:
        return f'not the kept cell {key} (expected a JSON object with "key": "{key}")'
    row = doc.get("row")
    if not isinstance(row, dict):
        return f"row: expected a mapping of metric to value, got {show(row)}"
    for name, v in row.items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            return f"row.{name}: expected a number or null, got {show(v)}"
    return None
