"""A Spark job's `stages` run inside its executors and its `spark:` properties (docs/workloads.md)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from yarnctl.model import AM_PRIORITY
from yarnctl.sim import spark_am
from yarnctl.sim.workload.distributions import distribution
from yarnctl.sim.workload.reader import show as _show
from yarnctl.sim.workload.types import FULL_USAGE, StageSpec

if TYPE_CHECKING:  # runtime: the parser passes itself
    from yarnctl.sim.workload.parse import Parser


def spark_stages(parser: Parser, j: Mapping[str, Any], path: str, defaults: Mapping[str, Any], iterations: int,
                 rng: random.Random, has_am: bool) -> tuple[tuple[StageSpec, ...], spark_am.SparkConfig]:
    """A Spark job's stages, run inside its executors (every iteration in the one application), and properties."""
    r = parser.r
    dprops = r.mapping(defaults.get("spark") or {}, "defaults.spark")
    try:
        spark_am.config_of(dprops, check=False)
    except ValueError as e:
        raise r.fail("defaults.spark", str(e)) from None
    try:
        config = spark_am.config_of({**dprops, **r.mapping(j.get("spark") or {}, f"{path}.spark")})
    except ValueError as e:
        raise r.fail(f"{path}.spark", str(e)) from None
    p = f"{path}.executors"
    ex = r.mapping(j["executors"], p)
    for k in ("tasks", "duration"):
        if k in ex:
            raise r.fail(f"{p}.{k}", "with `stages`, executors gives only their container (resource, usage, "
                         "priority); how many: spark.executor.instances or dynamic allocation")
    r.keys(r.required(ex, p, ("resource",)), p, {"resource", "usage", "priority"})
    resource = r.resources(ex["resource"], f"{p}.resource")
    parser.check_fits(resource, f"{p}.resource")
    if resource.vcores != config.executor_cores:
        raise r.fail(f"{p}.resource.vcores", f"expected spark.executor.cores = {config.executor_cores} (Spark "
                     f"asks YARN for that many vcores per executor), got {resource.vcores}")
    usage = parser.usage(ex["usage"], f"{p}.usage") if "usage" in ex else FULL_USAGE
    if len(usage.steps) > 1:
        raise r.fail(f"{p}.usage", "expected {cpu, memory}: an executor's CPU follows its busy task slots")
    priority = r.integer(ex.get("priority", spark_am.EXECUTOR_PRIORITY), f"{p}.priority", minimum=0)
    if has_am and priority == AM_PRIORITY:
        raise r.fail(f"{p}.priority", "priority 0 is the AM's; give the executors another priority")
    raw = j["stages"]
    if not isinstance(raw, list) or not raw:
        raise r.fail(f"{path}.stages", f"expected a non-empty list, got {_show(raw)}")
    one: list[tuple[str, int, Any, str]] = []
    for i, st in enumerate(raw):
        sp = f"{path}.stages[{i}]"
        m = r.required(st, sp, ("tasks", "duration"))
        r.keys(m, sp, {"name", "tasks", "duration"})
        tasks = (max(1, round(distribution(r, m["tasks"], f"{sp}.tasks")(rng))) if isinstance(m["tasks"], Mapping)
                 else r.integer(m["tasks"], f"{sp}.tasks"))
        one.append((str(m.get("name") or f"stage{i}"), tasks, m["duration"], sp))
    stages: list[StageSpec] = []
    for it in range(iterations):  # a stage starts when the one before it has ended
        for name, tasks, duration, sp in one:
            stages.append(StageSpec(name if iterations == 1 else f"{name}#{it + 1}", "spark", priority, resource,
                                    tuple(parser.durations(duration, f"{sp}.duration", tasks, rng)), usage,
                                    len(stages) - 1 if stages else None))
    return tuple(stages), config
