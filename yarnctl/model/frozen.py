"""A faster `__init__` for the frozen, slotted dataclasses that every heartbeat builds by the thousand."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

T = TypeVar("T")

_NO_ARG = object()  # a default_factory field given no argument


def quick_init(cls: type[T]) -> type[T]:
    """Give a frozen, slotted dataclass an `__init__` that sets each slot through its descriptor.

    A frozen dataclass's own `__init__` sets every field with `object.__setattr__(self, name, value)`,
    which looks the slot up by name each time; calling the slot's descriptor directly builds the same
    object in about 60% of the time (the simulator builds a snapshot, a container and a record per
    heartbeat or task). Same signature, defaults, default factories and init=False fields.
    """
    if not dataclasses.is_dataclass(cls) or "__slots__" not in vars(cls):
        raise TypeError(f"quick_init: {cls.__name__} is not a slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"quick_init: {cls.__name__} has a __post_init__, which this __init__ would skip")
    fields = dataclasses.fields(cls)
    # an InitVar is a parameter of the dataclass's __init__ but not a field: this one would drop it
    if len(inspect.signature(cls.__init__).parameters) - 1 != sum(f.init for f in fields):
        raise TypeError(f"quick_init: {cls.__name__}'s __init__ takes parameters that are not fields (InitVar)")
    env: dict[str, Any] = {"_NO_ARG": _NO_ARG}
    positional: list[str] = []
    keyword: list[str] = []  # after every positional one, as dataclasses orders them
    body: list[str] = []
    for f in fields:
        name = f.name
        env[f"_set_{name}"] = getattr(cls, name).__set__  # the slot's descriptor, a base class's if inherited
        if f.default is not dataclasses.MISSING:
            env[f"_default_{name}"] = f.default
            value, param = (name if f.init else f"_default_{name}"), f"{name}=_default_{name}"
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory_{name}"] = f.default_factory
            value, param = f"_factory_{name}()", f"{name}=_NO_ARG"
            if f.init:
                value = f"_factory_{name}() if {name} is _NO_ARG else {name}"
        elif f.init:
            value, param = name, name
        else:
            continue  # dataclasses leaves such a field unset too
        if f.init:
            (keyword if f.kw_only else positional).append(param)
        body.append(f"    _set_{name}(self, {value})")
    params = positional + (["*", *keyword] if keyword else [])
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(source, env)  # as dataclasses builds its own __init__
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = f"Build a {cls.__name__}."
    setattr(cls, "__init__", init)
    return cls
