"""The ranges of numeric policy parameters, declared on their config fields and checked as they are parsed."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yarnctl.errors import ConfigError
from yarnctl.model import Resources


@dataclass(frozen=True, slots=True)
class Bounds:
    """The interval a parameter lies in; `also` lists values outside it that mean something (-1: no limit)."""

    lo: float = -math.inf
    hi: float = math.inf
    lo_open: bool = False
    hi_open: bool = False
    also: tuple[float, ...] = ()
    infinite: bool = False  # whether infinity is a value (a window that never ends), not a mistake

    def admits(self, x: float) -> bool:
        """Whether `x` is in the interval or one of the special values."""
        if x in self.also:
            return True
        if math.isinf(x) and not self.infinite:
            return False
        above = x > self.lo if self.lo_open else x >= self.lo
        below = x < self.hi if self.hi_open else x <= self.hi
        return above and below

    def __str__(self) -> str:
        if math.isinf(self.hi):
            text = f"{'>' if self.lo_open else '>='} {self.lo:g}"
        elif math.isinf(self.lo):
            text = f"{'<' if self.hi_open else '<='} {self.hi:g}"
        else:
            text = f"in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}{')' if self.hi_open else ']'}"
        return " or ".join([*(f"{x:g}" for x in self.also), text + (" (inf allowed)" if self.infinite else "")])

    def check(self, value: Any, where: str) -> None:
        """Raise a ConfigError naming `where` unless `value` (a number, a mapping of them, or Resources) is within."""
        if isinstance(value, Mapping):
            for key, item in value.items():
                self.check(item, f"{where}.{key}")
        elif isinstance(value, Resources):
            self.check(value.memory_mb, f"{where}.memory_mb")
            self.check(value.vcores, f"{where}.vcores")
        elif not self.admits(value):
            finite = "finite and " if math.isinf(value) and not self.infinite else ""
            raise ConfigError(f"{where}: must be {finite}{self}, got {value:g}")


def bounded(default: Any, lo: float = -math.inf, hi: float = math.inf, *, lo_open: bool = False,
            hi_open: bool = False, also: tuple[float, ...] = (), infinite: bool = False) -> Any:
    """A config field with `default` (a value, or a function making one) whose given values must lie within the bounds."""
    bounds = {"bounds": Bounds(lo, hi, lo_open, hi_open, also, infinite)}
    if callable(default):
        return field(default_factory=default, metadata=bounds)
    return field(default=default, metadata=bounds)
