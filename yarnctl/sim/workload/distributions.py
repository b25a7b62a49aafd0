"""Distributions a workload file may give instead of a number: uniform, normal, exponential, lognormal, choice."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from yarnctl.sim.workload.reader import Reader, show as _show


def distribution(r: Reader, value: Any, path: str) -> Callable[[random.Random], float]:
    """A draw function for a number or a {dist: ...} mapping."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = r.number(value, path)
        return lambda rng: v
    m = r.mapping(value, path)
    kind = m.get("dist")
    specs: dict[str, tuple[str, ...]] = {
        "uniform": ("low", "high"), "normal": ("mean", "std"), "exponential": ("mean",),
        "lognormal": ("median", "sigma"), "choice": ("values",),
    }
    if kind not in specs:
        raise r.fail(f"{path}.dist", f"expected one of {', '.join(specs)}, got {_show(kind)}")
    r.keys(m, path, {"dist", *specs[kind], "weights"} if kind == "choice" else {"dist", *specs[kind]})
    for k in specs[kind]:
        if k not in m:
            raise r.fail(f"{path}.{k}", "missing")
    if kind == "uniform":
        lo, hi = r.number(m["low"], f"{path}.low"), r.number(m["high"], f"{path}.high")
        if hi < lo:
            raise r.fail(f"{path}.high", f"must be >= low ({lo:g})")
        return lambda rng: rng.uniform(lo, hi)
    if kind == "normal":
        mean, std = r.number(m["mean"], f"{path}.mean", strict=True), r.number(m["std"], f"{path}.std")
        return lambda rng: max(rng.gauss(mean, std), 0.01 * mean)
    if kind == "exponential":
        mean = r.number(m["mean"], f"{path}.mean", strict=True)
        return lambda rng: rng.expovariate(1.0 / mean)
    if kind == "lognormal":
        med = r.number(m["median"], f"{path}.median", strict=True)
        sigma = r.number(m["sigma"], f"{path}.sigma")
        mu = math.log(med)
        return lambda rng: rng.lognormvariate(mu, sigma)
    values = m["values"]
    if not isinstance(values, list) or not values:
        raise r.fail(f"{path}.values", f"expected a non-empty list, got {_show(values)}")
    vals = [r.number(v, f"{path}.values[{i}]") for i, v in enumerate(values)]
    weights = m.get("weights")
    if weights is not None:
        if not isinstance(weights, list) or len(weights) != len(vals):
            raise r.fail(f"{path}.weights", f"expected {len(vals)} weights")
        ws = [r.number(w, f"{path}.weights[{i}]") for i, w in enumerate(weights)]
        if sum(ws) <= 0:
            raise r.fail(f"{path}.weights", "must not all be zero")
        return lambda rng: rng.choices(vals, weights=ws)[0]
    return lambda rng: rng.choice(vals)
