"""The multi-resource vector every capacity, request and allocation is measured in."""

from __future__ import annotations

from dataclasses import dataclass

# The resource types, in vector order. Adding a third (e.g. gpus) means adding a field to
# Resources and extending the few methods below; everything else goes through them.
RESOURCE_TYPES: tuple[str, ...] = ("memory_mb", "vcores")


@dataclass(frozen=True, slots=True, order=True)
class Resources:
    """An amount of each resource type: memory in MB and virtual cores."""

    memory_mb: int = 0
    vcores: int = 0

    # Arithmetic is written out per field: it runs on every heartbeat, and a generic loop over
    # RESOURCE_TYPES costs several times more in CPython.
    def __add__(self, other: Resources) -> Resources:
        return _resources(self.memory_mb + other.memory_mb, self.vcores + other.vcores)

    def __sub__(self, other: Resources) -> Resources:
        return _resources(self.memory_mb - other.memory_mb, self.vcores - other.vcores)

    def __mul__(self, k: int) -> Resources:
        return _resources(self.memory_mb * k, self.vcores * k)

    __rmul__ = __mul__

    def fits_in(self, other: Resources) -> bool:
        """True when every component is at most the other's."""
        return self.memory_mb <= other.memory_mb and self.vcores <= other.vcores

    def is_zero(self) -> bool:
        """True when every component is zero."""
        return self.memory_mb == 0 and self.vcores == 0

    def any_negative(self) -> bool:
        """True when some component is below zero."""
        return self.memory_mb < 0 or self.vcores < 0

    def times_fit(self, available: Resources) -> int:
        """How many copies of this vector fit in `available` (counting every resource)."""
        if self.memory_mb <= 0 and self.vcores <= 0:
            return 0
        n = 1 << 62
        if self.memory_mb > 0:
            n = min(n, available.memory_mb // self.memory_mb)
        if self.vcores > 0:
            n = min(n, available.vcores // self.vcores)
        return max(n, 0)

    def shares(self, total: Resources) -> tuple[float, ...]:
        """This vector as a fraction of `total`, per resource type (0 where total is 0)."""
        return (
            self.memory_mb / total.memory_mb if total.memory_mb else 0.0,
            self.vcores / total.vcores if total.vcores else 0.0,
        )

    def dominant_share(self, total: Resources) -> float:
        """The largest per-resource share of `total` (DRF's dominant share)."""
        return max(self.shares(total))

    def as_tuple(self) -> tuple[int, ...]:
        """The components in RESOURCE_TYPES order."""
        return (self.memory_mb, self.vcores)

    def as_dict(self) -> dict[str, int]:
        """The components keyed by resource type name."""
        return {"memory_mb": self.memory_mb, "vcores": self.vcores}

    def componentwise_max(self, other: Resources) -> Resources:
        """The per-resource maximum of two vectors."""
        return Resources(max(self.memory_mb, other.memory_mb), max(self.vcores, other.vcores))

    def __str__(self) -> str:
        return f"<{self.memory_mb} MB, {self.vcores} vcores>"


# A frozen dataclass's __init__ sets each field through object.__setattr__; writing the two slots
# directly builds the same object in under half the time (the store and the policies make millions).
# `model/frozen.py` `quick_init` does the same for the other records as their __init__; the arithmetic
# here also skips the call through the class, which only a function of its own can.
_new = object.__new__
_set_memory_mb = vars(Resources)["memory_mb"].__set__  # the slot descriptors
_set_vcores = vars(Resources)["vcores"].__set__


def _resources(memory_mb: int, vcores: int) -> Resources:
    """`Resources(memory_mb, vcores)`, built without its __init__."""
    r: Resources = _new(Resources)
    _set_memory_mb(r, memory_mb)
    _set_vcores(r, vcores)
    return r


ZERO = Resources(0, 0)
