"""quick_init builds the same objects as the dataclass's own __init__."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pytest

from yarnctl.model import ClusterSnapshot, Container, ContainerKind, Resources
from yarnctl.model.frozen import quick_init


@dataclass(frozen=True, slots=True)
class _Plain:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=7, init=False)
    e: float = field(default=1.5, kw_only=True)


@quick_init
@dataclass(frozen=True, slots=True)
class Quick:  # _Plain's fields, with quick_init's __init__
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=7, init=False)
    e: float = field(default=1.5, kw_only=True)


def _fields(x: object) -> dict[str, object]:
    return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}  # type: ignore[arg-type]


@pytest.mark.parametrize("args,kwargs", [((1,), {}), ((1, "x"), {}), ((1, "x", [3]), {"e": 2.0}), ((), {"a": 4, "c": [1]})])
def test_the_same_fields_from_the_same_arguments(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    assert _fields(Quick(*args, **kwargs)) == _fields(_Plain(*args, **kwargs))  # type: ignore[arg-type]


def test_each_default_factory_call_gives_a_new_object_and_init_false_fields_their_default() -> None:
    one, two = Quick(1), Quick(1)
    assert one.c == [] and one.c is not two.c and one.d == 7
    with pytest.raises(TypeError):
        Quick(1, "b", [], 3.0)  # type: ignore[call-arg]  # e is keyword-only, as in the dataclass
    with pytest.raises(TypeError):
        Quick()  # type: ignore[call-arg]  # a is required
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 2  # type: ignore[misc]


def test_the_model_classes_keep_their_values_equality_and_replace() -> None:
    c = Container("c1", "a1", "n1", 20, Resources(1024, 1), 3.0)
    assert (c.kind, c.is_am) == (ContainerKind.NORMAL, False)
    assert c._replace(is_am=True) == Container("c1", "a1", "n1", 20, Resources(1024, 1), 3.0, is_am=True)
    empty: MappingProxyType[str, Any] = MappingProxyType({})
    snap = ClusterSnapshot(0.0, empty, empty, empty, empty, empty)
    assert snap.version == -1 and snap.app_am == {} and snap._by_id == [] and snap._by_id is not \
        ClusterSnapshot(0.0, empty, empty, empty, empty, empty)._by_id


def test_refuses_what_it_would_build_wrongly() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        b: dataclasses.InitVar[int]

    for cls in (NoSlots, PostInit, WithInitVar):
        with pytest.raises(TypeError, match=cls.__name__):
            quick_init(cls)


def test_keyword_only_fields_declared_first_and_inherited_fields() -> None:
    """dataclasses puts keyword-only parameters after the positional ones; a subclass sets its base's slots too."""

    @dataclass(frozen=True, slots=True)
    class KwFirst:
        a: int = field(default=1, kw_only=True)
        b: int = 0

    @dataclass(frozen=True, slots=True)
    class Base:
        a: int

    @dataclass(frozen=True, slots=True)
    class Sub(Base):
        b: str = "b"

    plain = (KwFirst(5), KwFirst(5, a=2), Sub(1), Sub(1, "c"))
    quick = (quick_init(KwFirst)(5), KwFirst(5, a=2), quick_init(Sub)(1), Sub(1, "c"))
    assert [_fields(x) for x in quick] == [_fields(x) for x in plain]
    assert _fields(KwFirst(5)) == {"a": 1, "b": 5}
