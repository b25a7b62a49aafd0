"""The wire request codec (schema/README.md): request strings to frozen rows (containers as the model's); WireError for bad input."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import orjson

from yarnctl.errors import YarnctlError
from yarnctl.model import Container, ContainerKind, Resources
from yarnctl.model.frozen import quick_init

T = TypeVar("T")
_tuple_new = tuple.__new__  # a NamedTuple row without its Python-level __new__ (the rows of a full sync)

VERSION = 3  # v3 added the scheduler's queue tree (`queues`) and the app rows' `active` flag
READABLE = (1, 2, 3)  # older requests still parse (decision logs): v1 containers are normal, v1-v2 apps active


class WireError(YarnctlError):
    """A request or response that does not follow the wire schema; the message names the field."""

    def __init__(self, field: str, problem: str) -> None:
        self.field, self.problem = field, problem
        super().__init__(f"{field}: {problem}")


# The request and the rows a full sync has thousands of are NamedTuples, built in a third of a frozen
# dataclass's time and as immutable. (AskRow and LocalRow stay dataclasses: their field `count` would hide
# tuple.count, which mypy refuses.)
class NodeRow(NamedTuple):
    """A node that joined or whose capacity changed."""

    id: str
    rack: str
    memory_mb: int
    vcores: int
    registered_mb: int  # the size it joined with or an admin set: a policy's resizes never change it
    registered_vcores: int


class AppRow(NamedTuple):
    """An application the scheduler accepted."""

    id: str
    queue: str
    user: str
    type: str
    name: str
    tags: tuple[str, ...]
    submit_ms: int
    active: bool = True  # False: accepted but not yet activated by its queue (CapacityScheduler's AM limit)


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One queue of the scheduler's tree (schema/README.md: shares are fractions, the maximum in resources)."""

    name: str
    path: str
    parent: str  # "" for root
    leaf: bool
    running: bool
    capacity: float
    max_capacity: float
    abs_capacity: float
    abs_max_capacity: float
    user_limit_percent: int
    user_limit_factor: float
    max_mb: int
    max_vcores: int


@quick_init  # an ask table comes with nearly every delta
@dataclass(frozen=True, slots=True)
class LocalRow:
    """A host or /rack entry of a ask table."""

    name: str
    count: int
    relax: bool


@quick_init
@dataclass(frozen=True, slots=True)
class AskRow:
    """The whole current ask table of one (app, priority)."""

    app: str
    priority: int
    memory_mb: int
    vcores: int
    count: int
    relax: bool
    locals: tuple[LocalRow, ...]


class DoneRow(NamedTuple):
    """A container that completed, was released or killed."""

    container: str
    ms: int
    status: int


class WireRequest(NamedTuple):
    """One decoded request: the heartbeating node plus the state (full) or what changed (delta)."""

    seq: int
    base: int | None
    full: bool
    t_ms: int
    node: str
    used: tuple[int, int, int]
    min: tuple[int, int] | None = None
    nodes: tuple[NodeRow, ...] = ()
    lost: tuple[str, ...] = ()
    apps: tuple[AppRow, ...] = ()
    gone: tuple[str, ...] = ()
    asks: tuple[AskRow, ...] = ()
    alloc: tuple[Container, ...] = ()  # the containers the RM allocated since the last call (by Python or natively)
    done: tuple[DoneRow, ...] = ()
    queues: tuple[QueueRow, ...] | None = None  # the whole tree when it (or the cluster's size) changed


# `type(x) is int` rather than isinstance: JSON true/false must not pass as 1/0
def _nat(x: Any) -> bool:
    return type(x) is int and x >= 0



def flag(x: Any) -> bool:
    """True when `x` is a wire flag, the integer 0 or 1."""
    return type(x) is int and (x == 0 or x == 1)


def is_id(x: Any) -> bool:
    return type(x) is str and 0 < len(x) <= 512


def _node(r: Any) -> NodeRow:
    # a full sync has a row per node: unpacked without a starred target and checked inline, as alloc rows are
    if len(r) == 6:
        i, rack, mem, vc, reg_mem, reg_vc = r
    else:
        i, rack, mem, vc = r
        reg_mem, reg_vc = mem, vc  # a 4-item row: registered at its capacity
    if not (type(i) is str and 0 < len(i) <= 512 and type(rack) is str and type(mem) is int and mem >= 0
            and type(vc) is int and vc >= 0 and type(reg_mem) is int and reg_mem >= 0 and type(reg_vc) is int
            and reg_vc >= 0):
        raise ValueError
    return _tuple_new(NodeRow, (i, rack, mem, vc, reg_mem, reg_vc))


def _app(r: Any) -> AppRow:
    i, queue, user, typ, name, tags, ms, *active = r  # rows before v3 have no last item: active
    if not (is_id(i) and type(queue) is str and type(user) is str and type(typ) is str and type(name) is str
            and type(tags) is list and all(type(t) is str for t in tags) and _nat(ms)
            and (active == [] or (len(active) == 1 and flag(active[0])))):
        raise ValueError
    return AppRow(i, queue, user, typ, name, tuple(tags), ms, active != [0])


def _share(x: Any) -> bool:
    """A fraction of a parent or of the cluster, 0..1."""
    return type(x) in (int, float) and 0 <= x <= 1


def _queue(r: Any) -> QueueRow:
    # CapacityScheduler 2.7.7 checks neither user limit, so any non-negative value is the operator's to give
    name, path, parent, leaf, running, cap, max_cap, abs_cap, abs_max, ul, ulf, max_mb, max_vc = r
    if not (is_id(name) and is_id(path) and type(parent) is str and flag(leaf) and flag(running)
            and all(_share(x) for x in (cap, max_cap, abs_cap, abs_max)) and _nat(ul)
            and type(ulf) in (int, float) and ulf >= 0 and _nat(max_mb) and _nat(max_vc)):
        raise ValueError
    return QueueRow(name, path, parent, leaf == 1, running == 1, float(cap), float(max_cap), float(abs_cap),
                    float(abs_max), ul, float(ulf), max_mb, max_vc)


def _local(r: Any) -> LocalRow:
    name, count, relax = r
    if not (is_id(name) and _nat(count) and flag(relax)):
        raise ValueError
    return LocalRow(name, count, relax == 1)


def _ask(r: Any) -> AskRow:
    app, prio, mem, vc, count, relax, locs = r
    if not (is_id(app) and type(prio) is int and _nat(mem) and _nat(vc) and _nat(count) and flag(relax)
            and type(locs) is list):
        raise ValueError
    return AskRow(app, prio, mem, vc, count, relax == 1, tuple([_local(x) for x in locs]) if locs else ())


_NORMAL, _OPPORTUNISTIC = ContainerKind.NORMAL, ContainerKind.OPPORTUNISTIC


def _alloc_reader() -> Callable[[Any], Container]:
    """A reader of one request's alloc rows, each straight to its Container; rows of one size share one Resources."""
    sizes: dict[tuple[int, int], Resources] = {}
    kinds = (_NORMAL, _OPPORTUNISTIC)

    # a full sync has a row per live container: the checks of `is_id`, `_nat` and `flag` written out, the row
    # unpacked without a starred target (which builds a list) and the container built without an intermediate
    # row take about a third of the time
    def read(r: Any) -> Container:
        if len(r) == 9:
            c, app, node, prio, mem, vc, ms, am, opp = r
        else:
            c, app, node, prio, mem, vc, ms, am = r  # v1 rows have no kind
            opp = 0
        if not (type(c) is str and type(app) is str and type(node) is str and 0 < len(c) <= 512
                and 0 < len(app) <= 512 and 0 < len(node) <= 512 and type(prio) is int and type(mem) is int
                and mem >= 0 and type(vc) is int and vc >= 0 and type(ms) is int and ms >= 0 and type(am) is int
                and (am == 0 or am == 1) and type(opp) is int and (opp == 0 or opp == 1)):
            raise ValueError
        size = sizes.get((mem, vc))
        if size is None:
            size = sizes[mem, vc] = Resources(mem, vc)
        return _tuple_new(Container, (c, app, node, prio, size, ms / 1000, kinds[opp], am == 1))

    return read


def _done(r: Any) -> DoneRow:
    c, ms, status = r
    if not (is_id(c) and _nat(ms) and type(status) is int):
        raise ValueError
    return _tuple_new(DoneRow, (c, ms, status))


def _ident(r: Any) -> str:
    if not is_id(r):
        raise ValueError
    return str(r)


_SHAPES = {
    "nodes": "[id, rack, MB, vcores, registered MB, registered vcores]", "lost": "a node id", "apps": "[id, queue, user, type, name, tags, submit ms(, active 0/1)]",
    "queues": "[name, path, parent path, leaf 0/1, running 0/1, capacity, max capacity, absolute capacity, absolute max"
              " capacity, user limit %, user limit factor, max MB, max vcores]",
    "gone": "an app id", "asks": "[app, priority, MB, vcores, count, relax 0/1, [[name, count, relax], ...]]",
    "alloc": "[container, app, node, priority, MB, vcores, ms, am 0/1, opportunistic 0/1]",
    "done": "[container, ms, exit status]", "a": "[app, priority, containers(, opportunistic 0/1)]", "k": "[container, reason]", "r": "[node, MB, vcores]",
}
_REQUEST_KEYS = frozenset({"v", "seq", "base", "full", "t", "node", "used", "min", "nodes", "lost", "apps", "gone",
                           "asks", "alloc", "done", "queues"})


def rows(doc: Mapping[str, Any], key: str, conv: Callable[[Any], T]) -> tuple[T, ...]:
    raw = doc.get(key)
    if not raw:
        if raw is None or type(raw) is list:
            return ()
        raise WireError(key, "expected an array")
    if type(raw) is not list:
        raise WireError(key, "expected an array")
    try:
        return tuple([conv(r) for r in raw])  # the hot path: no per-row bookkeeping
    except (TypeError, ValueError):
        pass
    for i, r in enumerate(raw):  # only on failure: find the row to name
        try:
            conv(r)
        except (TypeError, ValueError):
            raise WireError(f"{key}[{i}]", f"expected {_SHAPES[key]}, got {json.dumps(r)[:120]}") from None
    raise AssertionError("unreachable")


def loads_object(text: str | bytes, what: str) -> dict[str, Any]:
    try:
        doc = orjson.loads(text)  # about half json's time: 2 ms of a 1,000-node full sync (docs/performance.md)
    except (ValueError, TypeError) as e:
        raise WireError(what, f"not JSON ({e})") from None
    if type(doc) is not dict:
        raise WireError(what, f"expected a JSON object, got {type(doc).__name__}")
    return doc


def parse_request(text: str | bytes) -> WireRequest:
    """Decode one request string, raising WireError naming the first malformed field."""
    return request_from_doc(loads_object(text, "request"))


def request_from_doc(doc: Mapping[str, Any]) -> WireRequest:
    """Decode one already JSON-decoded request object."""
    if not doc.keys() <= _REQUEST_KEYS:
        raise WireError(sorted(doc.keys() - _REQUEST_KEYS)[0], "unknown key")
    if doc.get("v") not in READABLE or type(doc.get("v")) is not int:
        raise WireError("v", f"expected wire version {VERSION}, got {doc.get('v')!r}")
    seq: Any = doc.get("seq")
    full: Any = doc.get("full")
    t: Any = doc.get("t")
    node: Any = doc.get("node")
    used: Any = doc.get("used")
    if not (type(seq) is int and seq >= 1):
        raise WireError("seq", f"expected an integer >= 1, got {seq!r}")
    if type(full) is not bool:
        raise WireError("full", f"expected true or false, got {full!r}")
    base = doc.get("base")
    if base is None:
        if not full:
            raise WireError("base", "required when full is false")
    elif not _nat(base):
        raise WireError("base", f"expected an integer >= 0, got {base!r}")
    if not _nat(t):
        raise WireError("t", f"expected ms since the epoch, got {t!r}")
    if not is_id(node):
        raise WireError("node", f"expected a node id, got {node!r}")
    if not (type(used) is list and len(used) == 3 and _nat(used[0]) and _nat(used[1]) and _nat(used[2])):
        raise WireError("used", f"expected [MB, vcores, containers], got {used!r}")
    mn = doc.get("min")
    if mn is not None and not (type(mn) is list and len(mn) == 2 and _nat(mn[0]) and _nat(mn[1])):
        raise WireError("min", f"expected [MB, vcores], got {mn!r}")
    return WireRequest(
        seq, base, full, t, node, (used[0], used[1], used[2]), (mn[0], mn[1]) if mn is not None else None,
        rows(doc, "nodes", _node), rows(doc, "lost", _ident), rows(doc, "apps", _app),
        rows(doc, "gone", _ident), rows(doc, "asks", _ask), rows(doc, "alloc", _alloc_reader()), rows(doc, "done", _done),
        rows(doc, "queues", _queue) if "queues" in doc else None)
