"""What every policy shares: the ordering/placement protocols, config parsing and the node fill loop."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from yarnctl.errors import ConfigError
from yarnctl.model import ANY, App, Assignment, ClusterSnapshot, Node, Ask, Resources

C = TypeVar("C")


@dataclass(slots=True)
class OpenAsk:
    """An outstanding request and how many containers it still wants while a decision is built."""

    app_id: str
    priority: int
    capability: Resources
    left: int

    @staticmethod
    def of(snap: ClusterSnapshot, app_id: str) -> list[OpenAsk]:
        """The app's ANY asks as open asks, ascending priority."""
        return [OpenAsk(app_id, r.priority, r.capability, r.count) for r in snap.any_asks(app_id)]


class AppOrdering(Protocol):
    """Decides which app is served next ("which app": FIFO, Fair, DRF, the H-MRF family)."""

    def order(self, snap: ClusterSnapshot) -> list[App]:
        """Apps with outstanding asks, most deserving first."""
        ...


class Placement(Protocol):
    """Decides what to put on a node ("which tasks here, how many": FFD-DotProduct)."""

    def place(self, snap: ClusterSnapshot, node: Node, apps: list[App]) -> list[Assignment]:
        """Assignments on `node` for asks of `apps`."""
        ...


def parse_config(cls: type[C], params: Mapping[str, Any] | None, policy: str) -> C:
    """Build the frozen config dataclass `cls` from user params, naming any bad key or value."""
    params = dict(params or {})
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(params) - names, key=str)
    if unknown:
        raise ConfigError(f"policy {policy}: unknown parameter {unknown[0]!r}; "
                          f"valid: {', '.join(sorted(names)) or '(none)'}")
    return cls(**_values(cls, params, f"policy {policy}: "))


def _values(cls: type, raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    # each value coerced to its field's type, then held to the field's declared bounds (bounds.py)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values = {}
    for key, value in raw.items():
        values[key] = _coerce(value, hints[key], f"{where}{key}")
        bounds = fields[key].metadata.get("bounds")
        if bounds is not None:
            bounds.check(values[key], f"{where}{key}")
    return values


def param_ranges(cls: type, where: str = "") -> dict[str, str]:
    """Each bounded parameter of the config dataclass `cls`, nested ones too ("queues.*.weight"), and its range."""
    hints = typing.get_type_hints(cls)
    out: dict[str, str] = {}
    for f in dataclasses.fields(cls):
        if "bounds" in f.metadata:
            out[f"{where}{f.name}"] = str(f.metadata["bounds"])
            continue
        hint = hints[f.name]
        origin = typing.get_origin(hint)
        if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
            hint, key = typing.get_args(hint)[1], f"{where}{f.name}.*."  # a mapping's values: each queue, say
        else:
            key = f"{where}{f.name}."
        if isinstance(hint, type) and dataclasses.is_dataclass(hint) and hint is not Resources:
            out.update(param_ranges(hint, key))
    return out


def _shown(raw: Any) -> str:
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."  # a 400-digit number is not worth echoing whole


def _coerce(raw: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if hint is bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in ("true", "false", "yes", "no", "1", "0"):
            return raw.lower() in ("true", "yes", "1")
        raise ConfigError(f"{where}: expected true/false, got {raw!r}")
    if hint in (int, float):
        try:
            if isinstance(raw, bool):
                raise ValueError
            number = float(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: expected a number, got {_shown(raw)}") from None
        except OverflowError:  # an integer past a float's range
            number = math.inf
        if math.isnan(number):  # NaN compares false with everything: no policy's check would catch it
            raise ConfigError(f"{where}: expected a number, got {_shown(raw)}")
        if hint is float:
            return number  # infinity is meaningful here (the long-term family's window_s=inf: no window)
        if math.isinf(number):
            raise ConfigError(f"{where}: expected a finite number, got {_shown(raw)}")
        if isinstance(raw, str) and raw.strip().lstrip("+-").isdecimal():
            return int(raw)  # exact, where float() would round a count past 2**53
        if not number.is_integer():  # not int(2.7): a count given a fraction is a mistake, not 2
            raise ConfigError(f"{where}: expected an integer, got {_shown(raw)}")
        return int(raw) if isinstance(raw, int) else int(number)
    if hint is str:
        return str(raw)
    if origin in (Mapping, dict) or (origin is not None and issubclass(origin, Mapping)):
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {raw!r}")
        _, vt = typing.get_args(hint)
        out = {}
        for k, v in raw.items():
            out[str(k)] = _coerce(v, vt, f"{where}.{k}")
        return types.MappingProxyType(out)
    if hint is Resources:  # before the dataclass case: Resources is one, but its parts may not be negative
        if isinstance(raw, Resources):
            return raw
        if isinstance(raw, Mapping) and set(raw) <= {"memory_mb", "vcores"}:
            memory_mb, vcores = (_coerce(raw.get(k, 0), int, f"{where}.{k}") for k in ("memory_mb", "vcores"))
            if min(memory_mb, vcores) < 0:
                raise ConfigError(f"{where}: a resource cannot be negative, got {_shown(raw)}")
            return Resources(memory_mb, vcores)
        raise ConfigError(f"{where}: expected {{memory_mb, vcores}}, got {_shown(raw)}")
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(raw, hint):
            return raw
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {raw!r}")
        fields = {f.name for f in dataclasses.fields(hint)}
        unknown = sorted(set(raw) - fields, key=str)
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r}; valid: {', '.join(sorted(fields))}")
        return hint(**_values(hint, raw, f"{where}."))
    return raw


def first_request(snap: ClusterSnapshot, app_id: str) -> Ask | None:
    """The app's outstanding ANY request with the lowest priority number."""
    reqs = snap.any_asks(app_id)
    return reqs[0] if reqs else None


def fill_app(
    snap: ClusterSnapshot,
    app: App,
    node: Node,
    available: Resources,
    limit: int | None = None,
    taken: Mapping[tuple[str, int], int] | None = None,
) -> tuple[list[Assignment], Resources]:
    """FifoScheduler's per-app loop: priorities in ascending order, stopping at the first that gets 0.

    Returns the assignments and what is left on the node; `limit` caps the containers given and
    `taken` counts containers of each (app, priority) already given earlier in this heartbeat.
    """
    out: list[Assignment] = []
    for req in snap.any_asks(app.id):
        count = req.count - (taken.get((app.id, req.priority), 0) if taken else 0)
        if count <= 0:
            continue
        n = min(count, req.capability.times_fit(available))
        if limit is not None:
            n = min(n, limit - sum(a.count for a in out))
        if n <= 0:
            break  # "do not assign out of order w.r.t priorities" (FifoScheduler:504)
        out.append(Assignment(app.id, req.priority, node.id, n))
        available = available - req.capability * n
    return out, available


def fill_in_order(
    snap: ClusterSnapshot, node: Node, apps: Iterable[App], min_allocation: Resources
) -> list[Assignment]:
    """Serve `apps` in the given order on `node` until it is below the minimum allocation."""
    available = node.available
    mb, vc = available.memory_mb, available.vcores
    min_mb, min_vc = min_allocation.memory_mb, min_allocation.vcores
    out: list[Assignment] = []
    asks = snap.asks
    for app in apps:
        if min_mb > mb or min_vc > vc:
            break
        for r in asks.get(app.id, ()):
            if r.resource_name == ANY and r.count > 0:
                # an app whose first live off-switch ask does not fit gets nothing from `fill_app`: on a node with
                # room for few asks (one a policy keeps awake, as usage feedback does) most apps are passed over
                # here, in plain ints: `times_fit`'s test, as the room is never negative here (the minimum allocation
                # fits in it); an empty ask passes and `fill_app` gives it nothing, as before
                cap = r.capability
                if cap.memory_mb <= mb and cap.vcores <= vc:
                    got, available = fill_app(snap, app, node, available)
                    mb, vc = available.memory_mb, available.vcores
                    out.extend(got)
                break
    return out

