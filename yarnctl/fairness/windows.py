"""Time windows of [H-MRF] Sec. 6 for accumulated quantities: tumbling and sliding.

A window of length +inf is pure long-term accounting, length 0 is memoryless (the accumulated
part is always zero). A tumbling window drops everything at each multiple of its length; a
sliding one keeps [now - L, now], in BUCKETS buckets of L/BUCKETS each (the oldest bucket is
counted pro rata, assuming its mass is spread evenly: the window edge is resolved to L/BUCKETS).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from yarnctl.fairness.shares import ZERO_VECTOR, Vector, add, stored_vector

TUMBLING = "tumbling"
SLIDING = "sliding"
BUCKETS = 60


@dataclass(frozen=True, slots=True)
class Window:
    """A window's kind and length in seconds."""

    kind: str = TUMBLING
    length_s: float = math.inf

    def __post_init__(self) -> None:
        if self.kind not in (TUMBLING, SLIDING):
            raise ValueError(f"window kind {self.kind!r}: expected {TUMBLING} or {SLIDING}")
        if not self.length_s >= 0:
            raise ValueError(f"window length {self.length_s!r}: expected >= 0")

    def index(self, t: float) -> int:
        """The tumbling window `t` falls in (0 for an infinite or zero window)."""
        return int(t // self.length_s) if 0 < self.length_s < math.inf else 0


@dataclass(slots=True)
class WindowedSum:
    """The integral of a piecewise-constant vector over the current window."""

    window: Window
    total: Vector = ZERO_VECTOR
    epoch: int = 0  # tumbling: the window `total` belongs to
    buckets: dict[int, Vector] = field(default_factory=dict)  # sliding: bucket index -> integral

    def add(self, t0: float, t1: float, v: Vector) -> None:
        """Add ∫ v dt over [t0, t1]."""
        w = self.window
        if t1 <= t0 or w.length_s == 0:
            return
        if w.kind == SLIDING and w.length_s < math.inf:
            self._add_sliding(t0, t1, v)
            return
        k = w.index(t1)
        if k != self.epoch:
            self.total, self.epoch = ZERO_VECTOR, k
        start = max(t0, k * w.length_s) if w.length_s < math.inf else t0
        self.total = add(self.total, v, t1 - start)

    def _add_sliding(self, t0: float, t1: float, v: Vector) -> None:
        width = self.window.length_s / BUCKETS
        first = max(int(t0 // width), int((t1 - self.window.length_s) // width))
        for k in range(first, int(t1 // width) + 1):
            overlap = min(t1, (k + 1) * width) - max(t0, k * width)
            if overlap > 0:
                self.buckets[k] = add(self.buckets.get(k, ZERO_VECTOR), v, overlap)
        # buckets wholly before the window can never count again
        oldest = int((t1 - self.window.length_s) // width)
        for k in [k for k in self.buckets if k < oldest]:
            del self.buckets[k]

    def value(self, now: float) -> Vector:
        """The integral over the window as seen at `now`."""
        w = self.window
        if w.length_s == 0:
            return ZERO_VECTOR
        if w.kind == SLIDING and w.length_s < math.inf:
            width = w.length_s / BUCKETS
            lo = now - w.length_s
            out = ZERO_VECTOR
            for k in sorted(self.buckets):
                start, end = k * width, min(now, (k + 1) * width)
                # only the oldest bucket straddles the window edge; the newest is filled up to now
                frac = 1.0 if start >= lo else max(0.0, (end - lo) / (end - start))
                out = add(out, self.buckets[k], frac)
            return out
        return self.total if w.index(now) == self.epoch else ZERO_VECTOR

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON state."""
        return {"total": list(self.total), "epoch": self.epoch,
                "buckets": {str(k): list(v) for k, v in sorted(self.buckets.items())}}

    @staticmethod
    def from_json(window: Window, d: dict[str, Any]) -> WindowedSum:
        """The sum `to_json` wrote, under `window`."""
        return WindowedSum(window, stored_vector(d["total"], "window total"), int(d["epoch"]),
                           {int(k): stored_vector(v, f"window bucket {k}") for k, v in d["buckets"].items()})
