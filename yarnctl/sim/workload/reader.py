"""Typed reads of parsed YAML fields that fail with one WorkloadError naming the file and the field's path."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode

from yarnctl.errors import WorkloadError
from yarnctl.model import Resources


class _UniqueKeys(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that repeats a key: PyYAML keeps the last one without a word."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` may be overridden by the keys beside it
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                again = key in seen
            except TypeError:  # an unhashable key: construct_mapping's own error says so
                continue
            if again:
                raise ConstructorError("while reading a mapping", node.start_mark, f"found the key {key!r} twice",
                                       key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def load_yaml(text: str) -> Any:
    """`yaml.safe_load`, but a key repeated in one mapping is a `yaml.YAMLError` (a second `jobs:` replaced the first)."""
    return yaml.load(text, Loader=_UniqueKeys)  # safe: a SafeLoader subclass


LARGEST = 1e15  # seconds (31 million years), MB, tasks, epoch ms: far past any workload, far below a float's overflow


class Reader:
    """Reads typed fields out of parsed YAML, raising WorkloadError with the field's path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> WorkloadError:
        return WorkloadError(self.source, path, problem)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            # the whole file is not echoed: it may be anything, a token file given by mistake too
            raise self.fail(path, f"expected a mapping, got {show(value) if path else kind_of(value)}")
        return value

    def required(self, value: Any, path: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
        """`value` as a mapping that has every one of `keys`."""
        m = self.mapping(value, path)
        for k in keys:
            if k not in m:
                raise self.fail(f"{path}.{k}", "missing")
        return m

    def keys(self, value: Mapping[str, Any], path: str, allowed: set[str]) -> None:
        unknown = sorted(set(value) - allowed, key=str)  # YAML keys may be numbers too
        if unknown:
            where = f"{path}.{unknown[0]}" if path else str(unknown[0])
            raise self.fail(where, f"unknown field; expected one of {', '.join(sorted(allowed))}")

    def number(self, value: Any, path: str, *, minimum: float = 0.0, strict: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and math.isnan(value)):
            raise self.fail(path, f"expected a number, got {show(value)}")
        # YAML's .inf or a number as large: no field means "never" (an endless task, a job never submitted), and sums
        # of such times overflow the simulator's clock to inf
        if not -LARGEST <= value <= LARGEST:
            raise self.fail(path, f"expected a finite number of at most {LARGEST:.0e}, got {show(value)}")
        if value < minimum or (strict and value == minimum):
            raise self.fail(path, f"expected a number {'>' if strict else '>='} {minimum:g}, got {value}")
        return float(value)

    def integer(self, value: Any, path: str, *, minimum: int = 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise self.fail(path, f"expected {kind}, got {show(value)}")
        if value > LARGEST:
            raise self.fail(path, f"expected an integer of at most {LARGEST:.0e}, got {show(value)}")
        return value

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, (str, int)) or isinstance(value, bool) or str(value) == "":
            raise self.fail(path, f"expected a non-empty string, got {show(value)}")
        return str(value)

    def resources(self, value: Any, path: str, *, allow_zero: bool = False) -> Resources:
        m = self.mapping(value, path)
        self.keys(m, path, {"memory_mb", "vcores"})
        for k in ("memory_mb", "vcores"):
            if k not in m:
                raise self.fail(f"{path}.{k}", "missing")
        low = 0 if allow_zero else 1
        return Resources(self.integer(m["memory_mb"], f"{path}.memory_mb", minimum=low),
                         self.integer(m["vcores"], f"{path}.vcores", minimum=low))


def show(value: Any) -> str:
    """A value as an error message quotes it, cut at 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def kind_of(value: Any) -> str:
    """What a value is, without its text."""
    if isinstance(value, str):
        return f"a line of text ({len(value)} characters)"
    return "nothing" if value is None else f"a {type(value).__name__}"
