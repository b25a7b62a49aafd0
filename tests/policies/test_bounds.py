"""Declared parameter ranges: each policy refuses a value outside them with one line naming the parameter."""

import dataclasses
import json
import math
import typing

import pytest

from yarnctl.errors import ConfigError
from yarnctl.model import Resources
from yarnctl.policies import REGISTRY, make_policy
from yarnctl.policies.bounds import Bounds


@pytest.mark.parametrize("policy, params, message", [
    ("dress", {"theta": 7}, r"policy dress: theta: must be in \[0, 1\], got 7"),
    ("dress", {"initial_reserve": -0.1}, r"initial_reserve: must be in \[0, 1\]"),
    ("dress", {"start_threshold": -1}, r"start_threshold: must be >= 0, got -1"),
    ("dress", {"horizon_s": 0}, r"horizon_s: must be > 0, got 0"),
    ("ffd-dp", {"memory_weight": -1}, r"policy ffd-dp: memory_weight: must be >= 0"),
    ("ffd-dp", {"memory_weight": "inf"}, r"memory_weight: must be finite and >= 0, got inf"),
    ("ffd-dp", {"memory_weight": 0, "vcores_weight": 0}, r"cannot both be 0"),
    ("haste", {"memory_weight": 0, "vcores_weight": 0}, r"policy haste: memory_weight and vcores_weight cannot"),
    ("haste-a", {"ita_max_work": 0}, r"policy haste-a: ita_max_work: must be >= 1"),
    ("opera", {"block": {"memory_mb": -5}}, r"policy opera: block: a resource cannot be negative"),
    ("opera", {"block": {"memory_mb": 0, "vcores": 0}}, r"policy opera: block: give it some memory or vcores"),
    ("opera", {"max_overcommit": "inf"}, r"max_overcommit: must be finite and >= 1, got inf"),  # floor(inf) at run
    ("opera", {"block": {"memory_mb": "lots"}}, r"block.memory_mb: expected a number, got 'lots'"),
    ("opera", {"rho": 1.5}, r"rho: must be in \(0, 1\], got 1.5"),
    ("opera", {"max_block_time_s": 10}, r"max_block_time_s \(10\) is below block_time_s \(30\)"),
    ("hmrf", {"weights": {"a": -1}}, r"policy hmrf: weights.a: must be >= 0, got -1"),
    ("lt-af", {"window_s": -1}, r"policy lt-af: window_s: must be >= 0 \(inf allowed\), got -1"),
    ("lt-drf", {"borrow_cap_s": -1}, r"borrow_cap_s: must be >= 0"),
    ("capacity", {"node_locality_delay": -5}, r"node_locality_delay: must be >= -1, got -5"),
    ("capacity", {"max_am_resource_percent": 3}, r"max_am_resource_percent: must be in \[0, 1\]"),
    ("capacity", {"queues": {"a": {"capacity": -1}}}, r"policy capacity: queues.a.capacity: must be in \[0, 100\]"),
    ("capacity", {"queues": {"a": {"user_limit_factor": 0}}}, r"queues.a.user_limit_factor: must be > 0"),
    ("fair", {"max_am_share": -3}, r"policy fair: max_am_share: must be -1 or in \[0, 1\], got -3"),
    ("drf", {"max_assign": -7}, r"max_assign: must be >= -1"),
    ("fair", {"queues": {"a": {"weight": -1}}}, r"queues.a.weight: must be >= 0"),
    ("fair", {"queues": {"a": {"min_share": {"memory_mb": -1}}}}, r"queues.a.min_share: a resource cannot be negative"),
    ("feedback", {"alpha": 2}, r"alpha: must be in \[0, 1\], got 2"),
    ("feedback", {"allowance": {"memory_mb": 1024, "vcores": -1}}, r"allowance: a resource cannot be negative"),
])
def test_out_of_range_is_refused(policy, params, message):
    with pytest.raises(ConfigError, match=message):
        make_policy(policy, params)


@pytest.mark.parametrize("policy, params, expected", [
    ("fair", {"max_am_share": -1}, {"max_am_share": -1.0}),  # Hadoop's "no AM limit"
    ("capacity", {"node_locality_delay": -1}, {"node_locality_delay": -1}),
    # no cap, no window: the long-term family's pure reading
    ("hmrf", {"borrow_cap_s": "inf", "window_s": "inf"}, {"borrow_cap_s": math.inf, "window_s": math.inf}),
    ("haste", {"memory_weight": 0}, {"memory_weight": 0.0}),
    ("opera", {"block": {"memory_mb": 512, "vcores": 1}, "max_block_time_s": 30},
     {"block": Resources(512, 1), "max_block_time_s": 30.0}),
    ("opera", {"block": {"vcores": 2}, "max_block_time_s": "inf"},  # a CPU-only block; BT_i without a bound
     {"block": Resources(0, 2), "max_block_time_s": math.inf}),
    ("hmrf", {"weights": {"a": 0}, "timeout_s": -5}, {"weights": {"a": 0.0}, "timeout_s": -5.0}),  # a capacity-0 leaf
])
def test_edges_with_a_meaning_are_accepted(policy, params, expected):
    config = make_policy(policy, params).config
    assert {k: dict(v) if k == "weights" else v for k, v in ((k, getattr(config, k)) for k in expected)} == expected


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_default_is_within_its_bounds(name):
    for f in dataclasses.fields(REGISTRY[name].Config):
        _check_defaults(REGISTRY[name].Config, name)


def _check_defaults(cls: type, where: str) -> None:
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
        bounds = f.metadata.get("bounds")
        if bounds is not None:
            bounds.check(default, f"{where}.{f.name}")  # raises if a declared range contradicts its default
        hint = typing.get_type_hints(cls)[f.name]
        nested = typing.get_args(hint)[-1] if typing.get_args(hint) else hint
        if dataclasses.is_dataclass(nested) and nested is not Resources:
            _check_defaults(nested, f"{where}.{f.name}")  # a queue's own fields (CapacityQueue, QueueConf)  # raises if a declared range contradicts its default


def test_bounds_read_as_written():
    assert str(Bounds(0, 1)) == "in [0, 1]"
    assert str(Bounds(0, infinite=True)) == ">= 0 (inf allowed)"
    assert str(Bounds(0, 1, lo_open=True)) == "in (0, 1]"
    assert str(Bounds(0, lo_open=True)) == "> 0"
    assert str(Bounds(-1, 1, also=(-5,))) == "-5 or in [-1, 1]"
    assert Bounds(0, infinite=True).admits(math.inf) and not Bounds(0).admits(math.inf)


def test_policies_json_lists_the_ranges(capsys):
    from yarnctl.cli.main import main

    assert main(["policies", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["dress"]["ranges"]["theta"] == "in [0, 1]"
    assert rows["fair"]["ranges"]["max_am_share"] == "-1 or in [0, 1]"
    assert rows["fifo"]["ranges"] == {}
