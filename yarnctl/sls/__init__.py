"""`yarnctl sls`: Hadoop 2.7.7's Scheduler Load Simulator on an SLS trace, stock schedulers or the shim + a policy."""

from __future__ import annotations

from pathlib import Path

TRACES = Path(__file__).resolve().parent / "traces"


def trace_path(name_or_path: str) -> Path:
    """A shipped trace by name (`sls-short`) or a trace file."""
    shipped = TRACES / f"{name_or_path}.json"
    return shipped if "/" not in name_or_path and shipped.is_file() else Path(name_or_path)


def shipped_traces() -> list[str]:
    """Names of the traces shipped with yarnctl."""
    return sorted(p.stem for p in TRACES.glob("*.json"))
