"""A sweep file (or flags) expanded into cells: workloads x policies x parameter grids x seeds.

    name: dress-delta                 # optional; names the output
    workloads: [dress-mr20]           # built-in names or workload files
    policies:
      capacity: {}                    # its defaults
      dress:
        initial_reserve: 0.1:0.5:0.1  # start:stop:step, stop included
        theta: [0.1, 0.2]             # a list
      static:                         # a name of your own for one parameter set of a policy
        policy: capacity
        queues: [{a: {capacity: 50, maximum_capacity: 50}, b: {capacity: 50, maximum_capacity: 50}}]
    seeds: 0:9                        # start:stop (included), a list, or a count (5 = 0..4)
    baseline: capacity                # what `sweep report` compares against: a policy or one cell (optional)
    max_time_s: 86400                 # optional simulated-time cap per run
    sharing: {settle_s: 300}          # optional: measure [H-MRF]'s sharing degree β per queue (slower)

Values: `a:b:step` (linear, b included), `log:a:b:n` (n values spaced evenly in log scale from a to
b), `x,y,z` or a YAML list, or one scalar. A policy's grid is the product of its parameters' values.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from yarnctl.errors import ConfigError
from yarnctl.sim.workload import Reader, load_yaml

MAX_CELLS = 1_000_000  # a typo like 0:1:1e-9 should fail fast, not allocate forever
CHECKED_COMBINATIONS = 10_000  # a policy's parameter combinations built before the run (~50 µs each)
_SPEC_KEYS = {"name", "workloads", "policies", "seeds", "baseline", "max_time_s", "sharing"}


@dataclass(frozen=True, slots=True)
class Cell:
    """One simulation: a workload, a policy with its parameters, a seed."""

    workload: str
    policy: str
    params: tuple[tuple[str, Any], ...]
    seed: int
    alias: str | None = None  # the sweep file's name for this policy and parameter set

    @property
    def label(self) -> str:
        """policy[k=v,...] (or the alias), the name of the cell's group across seeds."""
        if self.alias:
            return self.alias
        inner = ",".join(f"{k}={_fmt(v)}" for k, v in self.params)
        return f"{self.policy}[{inner}]" if inner else self.policy


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How every cell of a sweep runs: a simulated-time cap, and whether [H-MRF]'s sharing degrees are measured."""

    max_time_s: float = math.inf
    # None: not measured; else β is sampled per queue and its minimum taken from this simulated time on
    sharing_settle_s: float | None = None

    def doc(self) -> dict[str, Any]:
        """A JSON form: the cell key's and the YARN executor's input line's."""
        out: dict[str, Any] = {"max_time_s": None if math.isinf(self.max_time_s) else self.max_time_s}
        if self.sharing_settle_s is not None:
            out["sharing_settle_s"] = self.sharing_settle_s
        return out

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> RunOptions:
        """The inverse of `doc`."""
        cap, settle = doc.get("max_time_s"), doc.get("sharing_settle_s")
        return cls(math.inf if cap is None else float(cap), None if settle is None else float(settle))


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """What to sweep: workloads, each policy's parameter grid, seeds."""

    name: str
    workloads: tuple[str, ...]
    grids: tuple[tuple[str, tuple[tuple[str, tuple[Any, ...]], ...]], ...]  # (policy, ((param, values), ...))
    seeds: tuple[int, ...]
    baseline: str | None = None
    options: RunOptions = RunOptions()
    aliases: tuple[tuple[str, str], ...] = ()  # (name in the sweep file, the policy it runs)
    params_seen: frozenset[str] = field(default=frozenset())

    def policy_of(self, name: str) -> str:
        """The registered policy a grid's name runs (itself unless an alias)."""
        return dict(self.aliases).get(name, name)

    def cells(self) -> list[Cell]:
        """Every cell, in a fixed order: workload, policy, parameter values, seed."""
        sets = self._sets()
        return [Cell(w, policy, params, seed, alias) for w in self.workloads for policy, params, alias in sets
                for seed in self.seeds]

    def parameter_sets(self) -> list[tuple[str, str]]:
        """(policy, label) of each policy and parameter set the sweep runs, in the cells' order."""
        return [(policy, Cell("", policy, params, 0, alias).label) for policy, params, alias in self._sets()]

    def _sets(self) -> list[tuple[str, tuple[tuple[str, Any], ...], str | None]]:
        """Each policy and parameter set of the grids: (registered policy, parameters, alias or None)."""
        aliases = dict(self.aliases)
        out = []
        for name, grid in self.grids:
            names = [k for k, _ in grid]
            for values in itertools.product(*(v for _, v in grid)):
                out.append((aliases.get(name, name), tuple(zip(names, values)), name if name in aliases else None))
        return out


def resolve_baseline(baseline: str, sets: Sequence[tuple[str, str]], what: str = "baseline") -> str:
    """The cell label `baseline` names among (policy, label) pairs: a label as is, or a policy run with one
    parameter set; ConfigError naming it as `what` otherwise (`sweep run` and `sweep report` resolve alike)."""
    labels = list(dict.fromkeys(label for _, label in sets))
    if baseline in labels:
        return baseline
    mine = list(dict.fromkeys(label for policy, label in sets if policy == baseline))
    if len(mine) == 1:
        return mine[0]
    if not mine:
        raise ConfigError(f"{what} {baseline!r}: no such policy or cell; cells: {', '.join(labels)}")
    raise ConfigError(f"{what} {baseline!r} was swept over {len(mine)} parameter sets; name one: {', '.join(mine)}")


def parse_values(text: Any, what: str) -> tuple[Any, ...]:
    """The values a grid entry stands for (see the module docstring); ConfigError naming `what` when empty or malformed."""
    if isinstance(text, list):
        values: tuple[Any, ...] = tuple(text)
    elif isinstance(text, str) and text.startswith("log:"):
        values = _log_range(text, what)
    elif isinstance(text, str) and ":" in text:
        values = _linear_range(text, what)
    elif isinstance(text, str) and "," in text:
        values = tuple(_value(v.strip(), what) for v in text.split(",") if v.strip())
    else:  # a flag's one value is text: read it as YAML, as a list's items are, so 0.2 keys alike from both
        values = (_value(text, what) if isinstance(text, str) else text,)
    if not values:
        raise ConfigError(f"{what}: empty range")
    canon = [json.dumps(_canon(v), sort_keys=True) for v in values]
    if len(set(canon)) != len(canon):  # two cells with one key would count each seed twice
        raise ConfigError(f"{what}: a value is listed twice")
    if len(values) > MAX_CELLS:
        raise ConfigError(f"{what}: {len(values)} values; at most {MAX_CELLS}")
    return values


def parse_seeds(text: Any, what: str = "seeds") -> tuple[int, ...]:
    """Seeds from `a:b` (both included), a list, `x,y`, or a count n (0..n-1)."""
    if isinstance(text, bool):
        raise ConfigError(f"{what}: {text!r}: expected FIRST:LAST, a list or a count")
    if isinstance(text, str) and text.strip().isascii() and text.strip().isdecimal():
        text = int(text)  # `--seeds 3` is the count, as `seeds: 3` in a file is (one seed alone: 3:3)
    if isinstance(text, int):
        if text < 1:
            raise ConfigError(f"{what}: {text}: give at least one seed")
        _at_most(text, str(text), what)
        return tuple(range(text))
    if isinstance(text, str) and ":" in text and not text.startswith("log:"):
        parts = text.split(":")
        if len(parts) != 2:
            raise ConfigError(f"{what}: {text!r}: expected FIRST:LAST, e.g. 0:9")
        lo, hi = (_int(p, what) for p in parts)
        if hi < lo:
            raise ConfigError(f"{what}: {text!r}: empty range")
        _at_most(hi - lo + 1, text, what)
        return tuple(range(lo, hi + 1))
    values = parse_values(text, what)
    seeds = tuple(_int(v, what) for v in values)
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"{what}: a seed is listed twice")
    return seeds


def _value(text: str, what: str) -> Any:
    """One value as YAML reads it (`0.2`, `true`, `[1, 2]`); ConfigError naming `what` when it is not YAML."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{what}: malformed value {text!r}: {str(e).splitlines()[0]}") from None


def load_spec(path: Path | None, *, workloads: Sequence[str] = (), policies: Sequence[str] = (),
              params: Sequence[str] = (), seeds: str | None = None, baseline: str | None = None) -> SweepSpec:
    """A sweep file, extended or overridden by flags; ConfigError naming the file or flag at fault."""
    doc: dict[str, Any] = {}
    path = resolve_spec(path) if path is not None else None
    src = str(path) if path else "flags"
    if path is not None:
        try:
            loaded = load_yaml(path.read_text())
        except UnicodeDecodeError as e:
            raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        except OSError as e:
            raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"{path}: malformed YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a mapping with workloads, policies and seeds")
        unknown = sorted(set(loaded) - _SPEC_KEYS)
        if unknown:
            raise ConfigError(f"{path}: unknown key {unknown[0]!r}; valid: {', '.join(sorted(_SPEC_KEYS))}")
        doc = loaded
    # a workload file by its absolute path: YARN tasks run in directories of their own
    ws = [str(Path(w).resolve()) if Path(w).is_file() else w
          for w in (*_str_list(doc.get("workloads", []), f"{src}: workloads"), *workloads)]
    pols = doc.get("policies", {}) or {}
    if isinstance(pols, list):
        pols = {str(p): {} for p in pols}
    if not isinstance(pols, dict) or not all(isinstance(v, (dict, type(None))) for v in pols.values()):
        raise ConfigError(f"{src}: policies: expected a mapping of policy name to its parameter grid")
    grid: dict[str, dict[str, Any]] = {str(k): dict(v or {}) for k, v in pols.items()}
    for p in policies:
        grid.setdefault(p, {})
    for item in params:
        name, sep, value = item.partition("=")
        policy, dot, key = name.partition(".")
        if not sep or not dot or not policy or not key or not value:
            raise ConfigError(f"--param {item!r}: expected POLICY.KEY=VALUES, e.g. dress.initial_reserve=0.1:0.5:0.05")
        grid.setdefault(policy, {})[key] = value
    # after the flags, so that --param on an alias is checked like the file's values
    aliases = {name: _alias(name, g, src) for name, g in grid.items() if "policy" in g}
    if not ws:
        raise ConfigError(f"{src}: no workload: give `workloads:` or --workload")
    if not grid:
        raise ConfigError(f"{src}: no policy: give `policies:` or --policy")
    seed_text = seeds if seeds is not None else doc.get("seeds", 1)
    spec = SweepSpec(
        name=str(doc.get("name") or (path.stem if path else "sweep")),
        workloads=tuple(dict.fromkeys(ws)),
        grids=tuple((p, tuple((k, parse_values(v, f"{p}.{k}")) for k, v in sorted(g.items())))
                    for p, g in grid.items()),
        seeds=parse_seeds(seed_text, "--seeds" if seeds is not None else f"{src}: seeds"),
        baseline=baseline or doc.get("baseline"),
        options=RunOptions(_max_time(doc.get("max_time_s"), src), _sharing(doc.get("sharing"), src)),
        aliases=tuple(sorted(aliases.items())))
    swept = {item.partition(".")[0] for item in params}  # the grids --param gave values
    _check(spec, src, flagged=bool(baseline), swept_by_flags=(spec.baseline or "").partition("[")[0] in swept)
    return spec


def _check(spec: SweepSpec, src: str, flagged: bool = False, swept_by_flags: bool = False) -> None:
    """Every workload loads, every policy is known, every parameter accepted by its policy, the baseline one cell."""
    from yarnctl.policies import make_policy
    from yarnctl.sim.workload import load_workload

    for w in spec.workloads:
        load_workload(w)  # WorkloadError names the file and what is wrong with it

    n = 0
    for policy, grid in spec.grids:
        n += len(spec.workloads) * len(spec.seeds) * math.prod(len(values) for _, values in grid)
        for params in _to_check(grid):  # a bad name or value fails now, not cells into the run
            try:
                make_policy(spec.policy_of(policy), params)
            except ConfigError as e:
                raise ConfigError(f"{src}: {e}") from None
    if n > MAX_CELLS:
        raise ConfigError(f"{src}: {n} cells; at most {MAX_CELLS}")
    if spec.baseline is not None:  # a policy run with one parameter set, or one cell's label: 'fair[reservations=True]'
        try:
            resolve_baseline(spec.baseline, spec.parameter_sets(), "--baseline" if flagged else "baseline")
        except ConfigError as e:
            if flagged:
                raise
            # the file's baseline named one cell until --param swept its policy: the flag is what to change
            hint = " (--param swept it: give --baseline CELL)" if swept_by_flags and "swept over" in str(e) else ""
            raise ConfigError(f"{src}: {e}{hint}") from None


def _to_check(grid: Sequence[tuple[str, Sequence[Any]]]) -> Iterator[dict[str, Any]]:
    """Every combination of a policy's values when there are few; else each value beside the others' first."""
    keys = [k for k, _ in grid]
    if math.prod(len(values) for _, values in grid) <= CHECKED_COMBINATIONS:  # rules between two parameters too
        for combo in itertools.product(*(values for _, values in grid)):
            yield dict(zip(keys, combo))
        return
    first = {k: values[0] for k, values in grid}
    for k, values in grid:
        for v in values:
            yield {**first, k: v}


def workload_digest(name_or_path: str) -> str:
    """A content hash of the workload (a built-in's YAML or the file, and its +variant): edit it and its cells run again."""
    from yarnctl.sim.workload import builtin_dir, builtin_names

    path = Path(name_or_path)
    base, plus, variant = name_or_path.rpartition("+")
    if not path.exists() and plus:
        return hashlib.sha256(f"{workload_digest(base)}+{variant}".encode()).hexdigest()[:16]
    if not path.exists() and name_or_path in builtin_names():
        path = builtin_dir() / f"{name_or_path}.yaml"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError as e:
        raise ConfigError(f"workload {name_or_path!r}: {e.strerror or 'cannot read'} (not a file or a built-in)") from None


def builtin_sweeps() -> list[str]:
    """The sweep files shipped with yarnctl (yarnctl/sweep/builtin), by name."""
    return sorted(p.stem for p in (Path(__file__).parent / "builtin").glob("*.yaml"))


def resolve_spec(name_or_path: Path) -> Path:
    """A sweep file, or a built-in sweep by name; ConfigError listing the built-ins otherwise."""
    if name_or_path.exists() or name_or_path.suffix:
        return name_or_path
    if str(name_or_path) in builtin_sweeps():
        return Path(__file__).parent / "builtin" / f"{name_or_path}.yaml"
    raise ConfigError(f"{name_or_path}: no such sweep file or built-in sweep; built-ins: {', '.join(builtin_sweeps())}")


def cell_key(cell: Cell, workload_hash: str, code_hash: str, options: RunOptions) -> str:
    """The content hash a finished cell is stored under."""
    doc = {"w": workload_hash, "p": cell.policy, "k": [[k, _canon(v)] for k, v in cell.params], "s": cell.seed,
           "o": options.doc(), "c": code_hash}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:20]


def _alias(name: str, grid: dict[str, Any], src: str) -> str:
    """Take `policy:` out of an aliased entry's grid; ConfigError unless it names one parameter set of a policy."""
    from yarnctl.policies import REGISTRY

    policy = grid.pop("policy")
    if not isinstance(policy, str) or policy not in REGISTRY:
        raise ConfigError(f"{src}: policies.{name}.policy: {policy!r} is not a policy; known: {', '.join(sorted(REGISTRY))}")
    if name in REGISTRY:
        raise ConfigError(f"{src}: policies.{name}: a policy's own name; give the alias a name of its own")
    if "[" in name or "]" in name:  # it would read as another cell's label: fair[reservations=True]
        raise ConfigError(f"{src}: policies.{name}: an alias's name may not hold '[' or ']', which mark a cell's "
                          "parameters")
    for k, v in grid.items():
        if len(parse_values(v, f"{name}.{k}")) > 1:
            raise ConfigError(f"{src}: policies.{name}.{k}: an alias names one parameter set; sweep {k} under "
                              f"`{policy}:` instead")
    return policy


def _max_time(v: Any, src: str) -> float:
    """`max_time_s:` of a sweep file: absent, null or .inf (no cap), else a number of seconds > 0, as `simulate --max-time`."""
    if v is None or (isinstance(v, float) and v == math.inf):
        return math.inf
    return Reader(src).number(v, "max_time_s", strict=True)


def _sharing(v: Any, src: str) -> float | None:
    """`sharing:` of a sweep file: absent or false (not measured), true (settle 0 s) or {settle_s: S}."""
    if v is None or v is False:
        return None
    if v is True:
        return 0.0
    if isinstance(v, Mapping) and set(v) <= {"settle_s"}:
        settle = _float(str(v.get("settle_s", 0)), f"{src}: sharing.settle_s")
        if settle < 0:
            raise ConfigError(f"{src}: sharing.settle_s: {settle:g} is negative")
        return settle
    raise ConfigError(f"{src}: sharing: expected true or {{settle_s: SECONDS}}, got {v!r}")


def _linear_range(text: str, what: str) -> tuple[float, ...]:
    parts = text.split(":")
    if len(parts) != 3:
        raise ConfigError(f"{what}: {text!r}: expected START:STOP:STEP, e.g. 0.1:0.5:0.05")
    lo, hi, step = (_float(p, what) for p in parts)
    if step <= 0:
        raise ConfigError(f"{what}: {text!r}: the step must be > 0")
    if hi < lo:
        raise ConfigError(f"{what}: {text!r}: empty range (STOP < START)")
    span = (hi - lo) / step  # inf for 0:1e300:1e-10: checked before math.floor, which cannot take it
    _at_most(span + 1, text, what)
    n = math.floor(span + 1e-9) + 1
    ints = all(float(p).is_integer() for p in (lo, step))
    # rounded so that 0.1 + 2 * 0.1 is 0.3 in the table and the cache key
    return tuple(int(lo + i * step) if ints else round(lo + i * step, 12) for i in range(n))


def _at_most(n: float, text: str, what: str) -> None:
    """Refuse a range of `n` values over MAX_CELLS before it is built (a typo should fail fast, not fill the memory)."""
    if n > MAX_CELLS:
        raise ConfigError(f"{what}: {text!r}: {n:.4g} values; at most {MAX_CELLS}")


def _log_range(text: str, what: str) -> tuple[float, ...]:
    parts = text.split(":")[1:]
    if len(parts) != 3:
        raise ConfigError(f"{what}: {text!r}: expected log:START:STOP:N, e.g. log:0.001:1:4")
    lo, hi = (_float(p, what) for p in parts[:2])
    n = _int(parts[2], what)
    if lo <= 0 or hi <= 0:
        raise ConfigError(f"{what}: {text!r}: a log range needs START and STOP > 0")
    if n < 1:
        raise ConfigError(f"{what}: {text!r}: empty range")
    _at_most(n, text, what)
    if n == 1:
        return (lo,)
    ratio = (hi / lo) ** (1 / (n - 1))
    return tuple(float(f"{lo * ratio ** i:.12g}") for i in range(n))


def _str_list(v: Any, what: str) -> list[str]:
    if isinstance(v, str):
        return [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{what}: expected a list of names or files")
    return list(v)


def _float(text: str, what: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ConfigError(f"{what}: {text!r} is not a number") from None
    if not math.isfinite(v):
        raise ConfigError(f"{what}: {text!r} is not a finite number")
    return v


def _int(v: Any, what: str) -> int:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: {v!r} is not an integer") from None
    if not f.is_integer():
        raise ConfigError(f"{what}: {v!r} is not an integer")
    return int(f)


def _canon(v: Any) -> Any:
    """A JSON-stable form of a parameter value (1 and 1.0 hash alike)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, Mapping):
        return {str(k): _canon(x) for k, x in sorted(v.items())}
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    return v


def _fmt(v: Any) -> str:
    # 12 significant digits, as ranges are rounded: two values never share a label
    return f"{v:.12g}" if isinstance(v, float) else str(v)
