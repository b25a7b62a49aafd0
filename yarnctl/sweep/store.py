"""Finished cells on disk, one JSON file per cell under its content hash: a sweep killed half-way resumes where it was."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yarnctl
from yarnctl.sweep.spec import Cell

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

    def path(self, key: str) -> Path:
        """Where the cell with this key is kept."""
        return self.dir / f"{key}.json"

    def done(self, keys: Iterable[str]) -> set[str]:
        """The keys among `keys` whose cells are kept."""
        return {k for k in keys if self.path(k).is_file()}

    def put(self, key: str, cell: Cell, row: dict[str, Any]) -> None:
        """Keep one finished cell."""
        self.dir.mkdir(parents=True, exist_ok=True)
        doc = {"key": key, "cell": {**asdict(cell), "params": [list(p) for p in cell.params]}, "row": row}
        tmp = self.dir / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(doc, sort_keys=True) + "\n")
        os.replace(tmp, self.path(key))

    def get(self, key: str) -> dict[str, Any]:
        """The kept row of a cell."""
        row: dict[str, Any] = json.loads(self.path(key).read_text())["row"]
        return row
