"""Workloads: the YAML format of docs/workloads.md, Hadoop SLS traces, and the built-in catalogue.

Loading validates every field and expands generators, iterations and distributions with a
seeded generator, so a `Workload` is concrete: every task has its duration and usage. The parts:
types.py (what a workload is), reader.py (typed field reads and their errors), distributions.py,
parse.py (the YAML format), sls.py (SLS traces).
"""

from __future__ import annotations

import sys
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

import yaml

from yarnctl.errors import WorkloadError
from yarnctl.sim.workload.parse import Parser
from yarnctl.sim.workload.reader import Reader, load_yaml
from yarnctl.sim.workload.sls import json_values, parse_sls
from yarnctl.sim.workload.types import (
    DEFAULT_AM, FULL_USAGE, ClusterSpec, JobSpec, NodeSpec, StageSpec, Startup, Usage, Workload, normalize,
)

__all__ = ["DEFAULT_AM", "FULL_USAGE", "ClusterSpec", "JobSpec", "NodeSpec", "Reader", "StageSpec", "Startup", "Usage",
           "Workload", "builtin_dir", "builtin_names", "is_sls", "json_values", "load_workload", "load_yaml", "normalize",
           "parse_sls", "parse_workload"]


def builtin_dir() -> Path:
    """The folder holding the built-in workloads."""
    return Path(str(importlib_resources.files("yarnctl.sim") / "builtin"))


def builtin_names() -> list[str]:
    """Names of the built-in workloads."""
    return sorted(p.stem for p in builtin_dir().glob("*.yaml"))


def parse_workload(text: str, source: str, seed: int = 0) -> Workload:
    """A workload from YAML text; `source` names it in errors."""
    try:
        doc = load_yaml(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise WorkloadError(source, where, f"malformed YAML: {problem}") from None
    return Parser(source, seed).workload(doc, Path(source).stem)


def load_workload(name_or_path: str, seed: int = 0, **sls_options: Any) -> Workload:
    """A built-in workload by name, a YAML workload file, or an SLS JSON trace; NAME+VARIANT applies a variant (variants.py)."""
    path = Path(name_or_path)
    base, plus, variant = name_or_path.rpartition("+")
    if not path.exists() and plus:
        from yarnctl.sim.workload.variants import VARIANTS

        if variant not in VARIANTS:
            raise WorkloadError(name_or_path, "", f"unknown variant {variant!r}; variants: {', '.join(VARIANTS)}")
        return VARIANTS[variant](load_workload(base, seed, **sls_options))
    if not path.exists():
        if name_or_path in builtin_names():
            path = builtin_dir() / f"{name_or_path}.yaml"
        else:
            raise WorkloadError(name_or_path, "", "no such file or built-in workload; built-ins: "
                                + ", ".join(builtin_names()))
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(str(path), "", f"cannot read: {e}") from None
    if _read_as_sls(path, text):
        return parse_sls(text, name_or_path, **sls_options)
    return parse_workload(text, name_or_path, seed)


def _read_as_sls(path: Path, text: str) -> bool:
    # SLS traces are JSON with "job.tasks"; flow-style YAML may also start with "{"
    looks_sls = text.lstrip()[:1] in ("{", "[") and '"job.tasks"' in text
    return path.suffix.lower() == ".json" or (path.suffix.lower() not in (".yaml", ".yml") and looks_sls)


def is_sls(name_or_path: str) -> bool:
    """Whether `load_workload` reads `name_or_path` (a file, or its base before +VARIANT) as an SLS trace."""
    path = Path(name_or_path)
    while not path.exists() and "+" in path.name:  # NAME+VARIANT[+VARIANT...], as load_workload peels them
        path = path.with_name(path.name.rpartition("+")[0])
    try:
        return path.is_file() and _read_as_sls(path, path.read_text())
    except (OSError, UnicodeDecodeError):
        return False


def main(argv: list[str] | None = None) -> int:
    """Validate workload files: `python -m yarnctl.sim.workload FILE...`."""
    args = sys.argv[1:] if argv is None else argv
    status = 0
    for a in args:
        try:
            w = load_workload(a)
        except WorkloadError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        print(f"{a}: ok: {len(w.cluster.nodes)} nodes, {len(w.jobs)} jobs, {w.tasks} tasks")
    return status

