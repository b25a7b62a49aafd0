"""The workload loader: validation messages, seeded expansion, defaults, generators, SLS traces, built-ins."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from yarnctl.errors import WorkloadError
from yarnctl.model import Resources
from yarnctl.sim.workload import (
    DEFAULT_AM,
    builtin_names,
    load_workload,
    load_yaml,
    normalize,
    parse_sls,
    parse_workload,
)

SOURCE = "bad-workload.yaml"

CLUSTER = "cluster: {nodes: 2, node: {memory_mb: 8192, vcores: 8}}\n"
RES = "{memory_mb: 1024, vcores: 1}"
MAPS = f"{{tasks: 2, resource: {RES}, duration: 10}}"
MR_JOB = f"{{id: a, submit_s: 0, type: mapreduce, maps: {MAPS}}}"


def _jobs(*jobs: str) -> str:
    return CLUSTER + "jobs:\n" + "".join(f"  - {j}\n" for j in jobs)


def _generic(*stages: str, extra: str = "") -> str:
    return _jobs(f"{{id: a, type: generic, {extra}stages: [{', '.join(stages)}]}}")


def _gen(body: str) -> str:
    return CLUSTER + f"generate:\n  - {body}\n"


# ---------------------------------------------------------------- malformed inputs

# (id, yaml text, exact field path, a fragment of the problem)
MALFORMED = [
    ("missing-cluster", f"jobs: [{MR_JOB}]", "cluster", "missing"),
    # YAML's .inf is a float: an endless task or a job never submitted used to end in a traceback
    ("endless-duration", _jobs(f"{{id: a, type: mapreduce, maps: {{tasks: 2, resource: {RES}, duration: .inf}}}}"),
     "jobs[0].maps.duration", "expected a finite number of at most 1e+15, got inf"),
    ("never-submitted", _jobs(f"{{id: a, submit_s: .inf, type: mapreduce, maps: {MAPS}}}"),
     "jobs[0].submit_s", "expected a finite number of at most 1e+15, got inf"),
    ("endless-am-start", f"cluster: {{nodes: 1, node: {RES}, startup: {{am_s: .inf}}}}\njobs: [{MR_JOB}]",
     "cluster.startup.am_s", "expected a finite number of at most 1e+15, got inf"),
    ("huge-integer", _jobs(f"{{id: a, submit_s: 1{'0' * 400}, type: mapreduce, maps: {MAPS}}}"),
     "jobs[0].submit_s", "expected a finite number of at most 1e+15, got 1000"),
    ("overflowing-time", _jobs(f"{{id: a, submit_s: 1.0e+308, type: mapreduce, maps: {MAPS}}}"),
     "jobs[0].submit_s", "expected a finite number of at most 1e+15, got 1e+308"),
    ("default-am-fits-no-node",  # it stalled the run with exit 0 and a warning
     f"cluster: {{nodes: 1, node: {RES}}}\njobs: [{MR_JOB}]", "jobs[0].am",
     "<1536 MB, 1 vcores> (the default AM; set am: {memory_mb: ..., vcores: ...}) fits on no node (largest <1024 MB"),
    ("count-past-the-limit", _jobs(f"{{id: a, type: mapreduce, maps: {{tasks: {10**20}, resource: {RES}, duration: 1}}}}"),
     "jobs[0].maps.tasks", "expected an integer of at most 1e+15, got 100000000000000000000"),
    ("key-twice", _jobs(MR_JOB) + f"jobs: [{MR_JOB}]\n", "line 4 column 1",  # the second replaced the first
     "malformed YAML: found the key 'jobs' twice"),
    ("key-twice-in-a-job", _jobs(f"{{id: a, type: mapreduce, maps: {MAPS}, maps: {MAPS}}}"), "line 3 column 102",
     "found the key 'maps' twice"),
    ("numbers-as-unknown-keys", _jobs(MR_JOB) + "1: x\nfoo: y\n", "1", "unknown field"),
    ("endless-mean", _jobs(f"{{id: a, type: mapreduce, maps: {{tasks: 2, resource: {RES}, "
                           f"duration: {{dist: exponential, mean: .inf}}}}}}"),
     "jobs[0].maps.duration.mean", "expected a finite number of at most 1e+15, got inf"),
    ("jvm-start-without-cores",
     f"cluster: {{nodes: 1, node: {RES}, startup: {{launch_cpu_s: 2}}}}\njobs: [{MR_JOB}]",
     "cluster.startup.launch_cores", "launch_cpu_s needs the cores"),
    ("am-start-cpu-without-cores",
     f"cluster: {{nodes: 1, node: {RES}, startup: {{am_cpu_s: 2}}}}\njobs: [{MR_JOB}]",
     "cluster.startup.launch_cores", "am_cpu_s needs the cores"),
    ("client-cpu-on-a-node-pool",
     f"cluster: {{nodes: 1, node: {RES}, startup: {{client_cpu_s: 2, launch_cores: 2}}}}\njobs: [{MR_JOB}]",
     "cluster.startup.client_cpu_s", "it needs launch_shared: true"),
    ("heartbeat-phases-too-few",
     f"cluster: {{nodes: 2, node: {RES}, heartbeat_phases: [0.0]}}\njobs: [{MR_JOB}]",
     "cluster.heartbeat_phases", "expected a list of 2 fractions (one per node), got [0.0]"),
    ("heartbeat-phase-a-whole-interval",
     f"cluster: {{nodes: 2, node: {RES}, heartbeat_phases: [0.0, 1.0]}}\njobs: [{MR_JOB}]",
     "cluster.heartbeat_phases[1]", "expected a fraction of the interval below 1, got 1.0"),
    ("heartbeat-phase-negative",
     f"cluster: {{nodes: 2, node: {RES}, heartbeat_phases: [-0.1, 0.5]}}\njobs: [{MR_JOB}]",
     "cluster.heartbeat_phases[0]", "expected a number >= 0, got -0.1"),
    ("launch-shared-not-a-bool",
     f"cluster: {{nodes: 1, node: {RES}, startup: {{launch_shared: yes-please}}}}\njobs: [{MR_JOB}]",
     "cluster.startup.launch_shared", "expected true or false"),
    ("take-up-not-a-bool",
     f"cluster: {{nodes: 1, node: {RES}, startup: {{take_up: 1}}}}\njobs: [{MR_JOB}]",
     "cluster.startup.take_up", "expected true or false, got 1"),
    ("unknown-mapreduce-property",
     _jobs(f"{{id: a, maps: {MAPS}, mapreduce: {{mapreduce.job.reduces: 3}}}}"),
     "jobs[0].mapreduce", "unknown MapReduce property 'mapreduce.job.reduces'; known: "),
    ("rampup-limit-above-1",
     _jobs(f"{{id: a, maps: {MAPS}, mapreduce: {{yarn.app.mapreduce.am.job.reduce.rampup.limit: 2}}}}"),
     "jobs[0].mapreduce", "expected a fraction in [0, 1], got 2"),
    ("shuffle-on-a-first-stage",
     _jobs(f"{{id: a, maps: {{tasks: 1, resource: {RES}, duration: 1, shuffle_s: 5}}}}"),
     "jobs[0].maps.shuffle_s", "only a stage that follows another"),
    ("node-memory-1G",
     f"cluster: {{nodes: 2, node: {{memory_mb: 1G, vcores: 8}}}}\njobs: [{MR_JOB}]",
     "cluster.node.memory_mb", "expected a positive integer, got '1G'"),
    ("task-memory-1G",
     _jobs("{id: a, maps: {tasks: 2, resource: {memory_mb: 1G, vcores: 1}, duration: 10}}"),
     "jobs[0].maps.resource.memory_mb", "expected a positive integer, got '1G'"),
    ("negative-duration",
     _jobs(f"{{id: a, maps: {{tasks: 2, resource: {RES}, duration: -5}}}}"),
     "jobs[0].maps.duration", "> 0, got -5"),
    ("negative-duration-in-list",
     _jobs(f"{{id: a, maps: {{tasks: 2, resource: {RES}, duration: [3, -5]}}}}"),
     "jobs[0].maps.duration[1]", "-5"),
    ("zero-duration",
     _jobs(f"{{id: a, maps: {{tasks: 2, resource: {RES}, duration: 0}}}}"),
     "jobs[0].maps.duration", "> 0, got 0"),
    ("negative-submit",
     _jobs(f"{{id: a, submit_s: -1, maps: {MAPS}}}"),
     "jobs[0].submit_s", "got -1"),
    ("unknown-top-field", CLUSTER + f"jobz: 1\njobs: [{MR_JOB}]", "jobz", "unknown field"),
    ("unknown-job-field",
     _jobs(f"{{id: a, colour: red, maps: {MAPS}}}"), "jobs[0].colour", "unknown field"),
    ("unknown-stage-field",
     _jobs(f"{{id: a, maps: {{tasks: 2, speed: 3, resource: {RES}, duration: 10}}}}"),
     "jobs[0].maps.speed", "unknown field"),
    ("unknown-resource-field",
     _jobs("{id: a, maps: {tasks: 2, resource: {memory_mb: 1024, vcores: 1, gpus: 1}, duration: 10}}"),
     "jobs[0].maps.resource.gpus", "unknown field"),
    ("unknown-defaults-field", CLUSTER + f"defaults: {{colour: red}}\njobs: [{MR_JOB}]",
     "defaults.colour", "unknown field"),
    ("wrong-job-type", _jobs(f"{{id: a, type: hive, maps: {MAPS}}}"), "jobs[0].type", "'hive'"),
    ("mapreduce-with-executors",
     _jobs(f"{{id: a, type: mapreduce, maps: {MAPS}, executors: {MAPS}}}"),
     "jobs[0].executors", "not a field of mapreduce jobs"),
    ("mapreduce-without-maps", _jobs("{id: a, type: mapreduce}"), "jobs[0].maps", "missing"),
    ("spark-without-executors", _jobs("{id: a, type: spark}"), "jobs[0].executors", "missing"),
    ("spark-with-maps", _jobs(f"{{id: a, type: spark, executors: {MAPS}, maps: {MAPS}}}"),
     "jobs[0].maps", "not a field of spark jobs"),
    ("generic-without-stages", _jobs("{id: a, type: generic}"), "jobs[0].stages", "non-empty list"),
    ("stage-missing-resource", _jobs("{id: a, maps: {tasks: 2, duration: 10}}"),
     "jobs[0].maps.resource", "missing"),
    ("after-nonexistent-stage",
     _generic(f"{{name: s1, tasks: 1, resource: {RES}, duration: 1}}",
              f"{{name: s2, after: nope, tasks: 1, resource: {RES}, duration: 1}}"),
     "jobs[0].stages[1].after", "no earlier stage named 'nope'"),
    ("after-later-stage",
     _generic(f"{{name: s1, after: s2, tasks: 1, resource: {RES}, duration: 1}}",
              f"{{name: s2, tasks: 1, resource: {RES}, duration: 1}}"),
     "jobs[0].stages[0].after", "no earlier stage named 's2'"),
    ("duration-list-too-short",
     _jobs(f"{{id: a, maps: {{tasks: 3, resource: {RES}, duration: [1, 2]}}}}"),
     "jobs[0].maps.duration", "has 2 values for 3 tasks"),
    ("duration-list-too-long",
     _jobs(f"{{id: a, maps: {{tasks: 1, resource: {RES}, duration: [1, 2]}}}}"),
     "jobs[0].maps.duration", "has 2 values for 1 tasks"),
    ("unknown-distribution",
     _jobs(f"{{id: a, maps: {{tasks: 3, resource: {RES}, duration: {{dist: gamma, k: 2}}}}}}"),
     "jobs[0].maps.duration.dist", "'gamma'"),
    ("uniform-high-below-low",
     _jobs(f"{{id: a, maps: {{tasks: 3, resource: {RES}, duration: {{dist: uniform, low: 10, high: 5}}}}}}"),
     "jobs[0].maps.duration.high", "must be >= low"),
    ("normal-missing-std",
     _jobs(f"{{id: a, maps: {{tasks: 3, resource: {RES}, duration: {{dist: normal, mean: 10}}}}}}"),
     "jobs[0].maps.duration.std", "missing"),
    ("choice-weights-wrong-length",
     _jobs(f"{{id: a, maps: {{tasks: 3, resource: {RES}, "
           f"duration: {{dist: choice, values: [1, 2], weights: [1]}}}}}}"),
     "jobs[0].maps.duration.weights", "expected 2 weights"),
    ("reduce-slowstart-above-1",
     _jobs(f"{{id: a, maps: {MAPS}, reduces: {{tasks: 1, resource: {RES}, duration: 1, slowstart: 1.5}}}}"),
     "jobs[0].reduces.slowstart", "[0, 1]"),
    ("job-slowstart-above-1", _jobs(f"{{id: a, slowstart: 1.01, maps: {MAPS}}}"),
     "jobs[0].slowstart", "[0, 1]"),
    ("task-larger-than-every-node",
     _jobs(f"{{id: a, maps: {{tasks: 3, resource: {{memory_mb: 16384, vcores: 1}}, duration: 1}}}}"),
     "jobs[0].maps.resource", "fits on no node"),
    ("task-vcores-larger-than-every-node",
     _jobs(f"{{id: a, maps: {{tasks: 3, resource: {{memory_mb: 1024, vcores: 9}}, duration: 1}}}}"),
     "jobs[0].maps.resource", "fits on no node"),
    ("am-larger-than-every-node",
     _jobs(f"{{id: a, am: {{memory_mb: 9000, vcores: 1}}, maps: {MAPS}}}"),
     "jobs[0].am", "fits on no node"),
    ("duplicate-job-ids", _jobs(MR_JOB, MR_JOB), "jobs[1].id", "duplicate job id 'a' (first at jobs[0].id)"),
    ("zero-nodes", f"cluster: {{nodes: 0, node: {RES}}}\njobs: [{MR_JOB}]", "cluster.nodes", "got 0"),
    ("groups-and-nodes",
     f"cluster: {{nodes: 1, node: {RES}, groups: [{{count: 1, node: {RES}}}]}}\njobs: [{MR_JOB}]",
     "cluster.groups", "not both"),
    ("no-jobs", CLUSTER + "jobs: []\n", "jobs", "no jobs"),
    ("generator-without-job-or-mix", _gen("{prefix: g, count: 3}"), "generate[0]",
     "exactly one of `job` or `mix`"),
    ("generator-with-job-and-mix",
     _gen(f"{{prefix: g, count: 3, job: {{maps: {MAPS}}}, mix: [{{weight: 1, job: {{maps: {MAPS}}}}}]}}"),
     "generate[0]", "exactly one of `job` or `mix`"),
    ("generator-template-sets-id", _gen(f"{{prefix: g, count: 3, job: {{id: x, maps: {MAPS}}}}}"),
     "generate[0].job", "may not set id or submit_s"),
    ("generator-bad-stage",
     _gen(f"{{prefix: g, count: 3, job: {{maps: {{tasks: 1, resource: {RES}, duration: -1}}}}}}"),
     "generate[0].job.maps.duration", "-1"),
    ("rate-per-hour-23-values",
     _gen(f"{{prefix: g, count: 3, arrival: {{rate_per_hour: [{', '.join(['5'] * 23)}]}}, "
          f"job: {{maps: {MAPS}}}}}"),
     "generate[0].arrival.rate_per_hour", "24 hourly rates"),
    ("usage-profile-out-of-order",
     _jobs(f"{{id: a, maps: {{tasks: 1, resource: {RES}, duration: 1, "
           "usage: {profile: [{at: 0.5, cpu: 1.0}, {at: 0.2, cpu: 0.5}]}}}"),
     "jobs[0].maps.usage.profile", "increasing `at` order"),
    ("usage-profile-at-above-1",
     _jobs(f"{{id: a, maps: {{tasks: 1, resource: {RES}, duration: 1, "
           "usage: {profile: [{at: 0.0, cpu: 1.0}, {at: 1.5, cpu: 0.5}]}}}"),
     "jobs[0].maps.usage.profile[1].at", "got 1.5"),
    ("same-priority-different-resources",
     _generic(f"{{name: s1, tasks: 1, resource: {RES}, duration: 1, priority: 5}}",
              "{name: s2, tasks: 1, resource: {memory_mb: 2048, vcores: 1}, duration: 1, priority: 5}"),
     "jobs[0].stages[1].priority", "one request per priority"),
    ("duplicate-stage-name",  # `after: s1` bound the first of the two
     _generic(f"{{name: s1, tasks: 1, resource: {RES}, duration: 1}}",
              f"{{name: s1, tasks: 1, resource: {RES}, duration: 1}}"),
     "jobs[0].stages[1].name", "duplicate stage name 's1' (stage 0 has it too)"),
    ("after-two-unnamed-stages",  # unnamed stages go by their kind, `task`
     _generic(f"{{tasks: 1, resource: {RES}, duration: 1}}", f"{{tasks: 1, resource: {RES}, duration: 1}}",
              f"{{tasks: 1, resource: {RES}, duration: 1, after: task}}"),
     "jobs[0].stages[2].after", "2 earlier stages are named 'task'; give them names"),
    ("hosts-unknown-node", _jobs(f"{{id: a, maps: {{tasks: 1, resource: {RES}, duration: 1, hosts: [n0003]}}}}"),
     "jobs[0].maps.hosts", "no node 'n0003' in the cluster (its nodes: n0001 ... n0002)"),
    ("hosts-not-a-list", _jobs(f"{{id: a, maps: {{tasks: 1, resource: {RES}, duration: 1, hosts: n0001}}}}"),
     "jobs[0].maps.hosts", "expected `all` or a list of node ids, got 'n0001'"),
    ("hosts-differ-at-one-priority",  # the second stage's tasks asked for the first one's hosts
     _generic(f"{{name: s1, tasks: 1, resource: {RES}, duration: 1, hosts: [n0001]}}",
              f"{{name: s2, tasks: 1, resource: {RES}, duration: 1}}"),
     "jobs[0].stages[1].hosts", "priority 20 is used by stages naming different hosts"),
    ("null-user-in-generator",  # it became the user "None"
     _gen(f"{{prefix: g, count: 2, users: [alice, ~], job: {{maps: {MAPS}}}}}"),
     "generate[0].users[1]", "expected a non-empty string, got None"),
]


@pytest.mark.parametrize(("text", "field", "problem"), [c[1:] for c in MALFORMED],
                         ids=[c[0] for c in MALFORMED])
def test_malformed_workload_names_file_and_field(text: str, field: str, problem: str) -> None:
    with pytest.raises(WorkloadError) as info:
        parse_workload(text, SOURCE, seed=0)
    err = info.value
    assert err.source == SOURCE
    assert err.field == field
    message = str(err)
    assert message.startswith(f"{SOURCE}: {field}: "), message
    assert problem in message
    assert "\n" not in message


def test_malformed_yaml_syntax_reports_line() -> None:
    text = CLUSTER + "jobs:\n  - {id: a, maps: {tasks: 1\n  - oops: [\n"
    with pytest.raises(WorkloadError) as info:
        parse_workload(text, SOURCE)
    message = str(info.value)
    assert message.startswith(f"{SOURCE}: line 4 column ")
    assert "malformed YAML" in message
    assert "\n" not in message


def test_malformed_workload_file_via_load_workload(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(_jobs("{id: a, maps: {tasks: 2, resource: {memory_mb: 1G, vcores: 1}, duration: 10}}"))
    with pytest.raises(WorkloadError, match=r"broken\.yaml: jobs\[0\]\.maps\.resource\.memory_mb: "):
        load_workload(str(path))


def test_unknown_workload_name_lists_builtins() -> None:
    with pytest.raises(WorkloadError) as info:
        load_workload("no-such-workload-anywhere")
    assert "no-such-workload-anywhere" in str(info.value)
    assert "haste-fig1" in str(info.value)


# ---------------------------------------------------------------- determinism

DRAWN = CLUSTER + """\
jobs:
  - id: a
    submit_s: 0
    maps: {tasks: 20, resource: {memory_mb: 1024, vcores: 1}, duration: {dist: exponential, mean: 30}}
    reduces: {tasks: 3, resource: {memory_mb: 1024, vcores: 1}, duration: {dist: normal, mean: 60, std: 10}}
  - id: b
    submit_s: 5
    type: spark
    executors: {tasks: 6, resource: {memory_mb: 2048, vcores: 2}, duration: {dist: lognormal, median: 20, sigma: 0.8}}
"""

EXTRA_JOB = """\
  - id: c
    submit_s: 1
    maps: {tasks: 7, resource: {memory_mb: 1024, vcores: 1}, duration: {dist: uniform, low: 1, high: 100}}
"""


def _durations(w) -> dict[str, list[tuple[float, ...]]]:
    return {j.id: [s.durations for s in j.stages] for j in w.jobs}


def test_same_seed_gives_identical_workload() -> None:
    assert parse_workload(DRAWN, "w.yaml", seed=7) == parse_workload(DRAWN, "w.yaml", seed=7)


def test_different_seeds_give_different_durations() -> None:
    d1 = _durations(parse_workload(DRAWN, "w.yaml", seed=1))
    d2 = _durations(parse_workload(DRAWN, "w.yaml", seed=2))
    for jid in ("a", "b"):
        assert d1[jid] != d2[jid]
        # same shapes, different values
        assert [len(s) for s in d1[jid]] == [len(s) for s in d2[jid]]


def test_adding_a_job_does_not_change_other_jobs_draws() -> None:
    before = _durations(parse_workload(DRAWN, "w.yaml", seed=3))
    after = _durations(parse_workload(DRAWN + EXTRA_JOB, "w.yaml", seed=3))
    assert set(after) == {"a", "b", "c"}
    assert after["a"] == before["a"]
    assert after["b"] == before["b"]


def test_growing_a_generator_keeps_earlier_jobs() -> None:
    body = ("prefix: g\n    count: {n}\n    arrival: {{dist: exponential, mean: 30}}\n"
            "    job: {{maps: {{tasks: {{dist: uniform, low: 1, high: 10}}, resource: {res}, "
            "duration: {{dist: exponential, mean: 20}}}}}}")
    small = parse_workload(CLUSTER + "generate:\n  - " + body.format(n=5, res=RES), "g.yaml", seed=4)
    large = parse_workload(CLUSTER + "generate:\n  - " + body.format(n=8, res=RES), "g.yaml", seed=4)
    assert len(small.jobs) == 5 and len(large.jobs) == 8
    assert large.jobs[:5] == small.jobs


def test_drawn_values_respect_distribution_bounds() -> None:
    text = _jobs(f"{{id: a, maps: {{tasks: 50, resource: {RES}, duration: {{dist: uniform, low: 10, high: 30}}}}}}",
                 f"{{id: b, maps: {{tasks: 50, resource: {RES}, "
                 "duration: {dist: choice, values: [10, 60], weights: [1, 0]}}}")
    w = parse_workload(text, "w.yaml", seed=5)
    jobs = {j.id: j for j in w.jobs}
    assert all(10 <= d <= 30 for d in jobs["a"].stages[0].durations)
    assert len(set(jobs["a"].stages[0].durations)) > 1
    assert set(jobs["b"].stages[0].durations) == {10.0}


# ---------------------------------------------------------------- iterations

def test_iterations_expand_stage_lists() -> None:
    text = CLUSTER + """\
jobs:
  - id: pr
    type: generic
    iterations: 3
    stages:
      - {name: map, tasks: 4, resource: {memory_mb: 1024, vcores: 1}, duration: {dist: uniform, low: 1, high: 9}}
      - {name: reduce, tasks: 2, resource: {memory_mb: 2048, vcores: 1}, duration: 5, priority: 10}
"""
    job = parse_workload(text, "it.yaml", seed=0).jobs[0]
    names = [s.name for s in job.stages]
    assert names == ["map#1", "reduce#1", "map#2", "reduce#2", "map#3", "reduce#3"]
    assert job.iterations == 3
    assert job.tasks == 3 * (4 + 2)
    # within an iteration reduce follows map; map of iteration k+1 follows reduce of iteration k
    assert [s.after for s in job.stages] == [None, 0, 1, 2, 3, 4]
    # iteration k+1 starts at a barrier on iteration k
    assert [s.slowstart for s in job.stages[2::2]] == [1.0, 1.0]
    # each iteration draws its own durations
    maps = [s.durations for s in job.stages[0::2]]
    assert len(set(maps)) == 3
    assert all(len(d) == 4 for d in maps)


def test_iterations_from_defaults_apply_to_mapreduce() -> None:
    text = CLUSTER + f"defaults: {{iterations: 2}}\njobs: [{{id: a, maps: {MAPS}, " \
                     f"reduces: {{tasks: 1, resource: {RES}, duration: 3}}}}]\n"
    job = parse_workload(text, "it.yaml").jobs[0]
    assert [s.name for s in job.stages] == ["map#1", "reduce#1", "map#2", "reduce#2"]
    assert job.stages[2].after == 1


def test_single_iteration_keeps_plain_names() -> None:
    job = parse_workload(_jobs(MR_JOB), "w.yaml").jobs[0]
    assert [s.name for s in job.stages] == ["map"]


# ---------------------------------------------------------------- defaults

def test_mapreduce_defaults() -> None:
    text = _jobs(f"{{id: a, maps: {MAPS}, reduces: {{tasks: 1, resource: {RES}, duration: 3}}}}")
    job = parse_workload(text, "d.yaml").jobs[0]
    maps, reduces = job.stages
    assert (maps.kind, maps.priority) == ("map", 20)
    assert (reduces.kind, reduces.priority) == ("reduce", 10)
    assert reduces.slowstart == 0.05
    assert reduces.after == 0
    assert maps.after is None
    assert job.type == "MAPREDUCE"
    assert (job.user, job.queue) == ("user", "default")


def test_default_am_is_1536_mb_1_vcore() -> None:
    job = parse_workload(_jobs(MR_JOB), "d.yaml").jobs[0]
    assert job.am == Resources(1536, 1)
    assert DEFAULT_AM == Resources(1536, 1)


def test_am_false_gives_no_am() -> None:
    assert parse_workload(_jobs(f"{{id: a, am: false, maps: {MAPS}}}"), "d.yaml").jobs[0].am is None
    via_defaults = parse_workload(CLUSTER + f"defaults: {{am: false}}\njobs: [{MR_JOB}]", "d.yaml")
    assert via_defaults.jobs[0].am is None


def test_defaults_are_inherited_and_overridable() -> None:
    text = CLUSTER + ("defaults: {user: alice, queue: q1, slowstart: 0.5, am: {memory_mb: 2048, vcores: 2}}\n"
                      f"jobs:\n  - {{id: a, maps: {MAPS}, reduces: {{tasks: 1, resource: {RES}, duration: 3}}}}\n"
                      f"  - {{id: b, user: bob, maps: {MAPS}}}\n")
    jobs = {j.id: j for j in parse_workload(text, "d.yaml").jobs}
    assert (jobs["a"].user, jobs["a"].queue, jobs["a"].am) == ("alice", "q1", Resources(2048, 2))
    assert jobs["a"].stages[1].slowstart == 0.5
    assert jobs["b"].user == "bob"


def test_spark_and_generic_defaults() -> None:
    text = _jobs(f"{{id: s, type: spark, executors: {MAPS}}}",
                 f"{{id: g, type: generic, stages: [{{tasks: 1, resource: {RES}, duration: 1}}]}}")
    jobs = {j.id: j for j in parse_workload(text, "d.yaml").jobs}
    (ex,) = jobs["s"].stages
    assert (ex.kind, ex.priority, ex.slowstart, jobs["s"].type) == ("executor", 20, 1.0, "SPARK")
    (st,) = jobs["g"].stages
    assert (st.kind, st.priority, st.slowstart, jobs["g"].type) == ("task", 20, 1.0, "YARN")


def test_cluster_defaults_and_node_ids() -> None:
    text = ("cluster: {nodes: 3, racks: 2, node: {memory_mb: 4096, vcores: 4}}\n"
            f"jobs: [{MR_JOB}]\n")
    c = parse_workload(text, "c.yaml").cluster
    assert [n.id for n in c.nodes] == ["n0001", "n0002", "n0003"]
    assert [n.rack for n in c.nodes] == ["r01", "r02", "r01"]
    assert all(n.physical == n.capacity == Resources(4096, 4) for n in c.nodes)
    assert c.heartbeat_s == 1.0
    assert c.min_allocation == Resources(1024, 1)


def test_name_defaults_to_file_stem() -> None:
    assert parse_workload(_jobs(MR_JOB), "dir/my-work.yaml").name == "my-work"


# ---------------------------------------------------------------- generators

def test_generator_count_prefix_spacing_and_users() -> None:
    text = CLUSTER + f"""\
generate:
  - prefix: fb
    count: 7
    start_s: 100
    arrival: {{every_s: 10}}
    users: [alice, bob, carol]
    queue: q9
    job: {{type: mapreduce, maps: {{tasks: {{dist: uniform, low: 1, high: 10}}, resource: {RES}, duration: 5}}}}
"""
    w = parse_workload(text, "gen.yaml", seed=0)
    assert len(w.jobs) == 7
    assert [j.id for j in w.jobs] == [f"fb{k:05d}" for k in range(1, 8)]
    assert [j.submit_s for j in w.jobs] == [100.0 + 10 * k for k in range(7)]
    assert [j.user for j in w.jobs] == ["alice", "bob", "carol", "alice", "bob", "carol", "alice"]
    assert {j.queue for j in w.jobs} == {"q9"}
    assert all(1 <= j.stages[0].tasks <= 10 for j in w.jobs)


def test_generator_mix_uses_every_weighted_template() -> None:
    text = CLUSTER + f"""\
generate:
  - prefix: m
    count: 300
    arrival: {{dist: exponential, mean: 5}}
    mix:
      - {{weight: 0.7, job: {{type: mapreduce, name: small, maps: {MAPS}}}}}
      - {{weight: 0.3, job: {{type: spark, name: large, executors: {MAPS}}}}}
      - {{weight: 0, job: {{type: spark, name: never, executors: {MAPS}}}}}
"""
    w = parse_workload(text, "mix.yaml", seed=0)
    counts = Counter(j.name for j in w.jobs)
    assert set(counts) == {"small", "large"}
    assert counts["small"] > counts["large"] > 30
    assert {j.type for j in w.jobs if j.name == "large"} == {"SPARK"}
    submits = [j.submit_s for j in w.jobs]
    assert submits == sorted(submits) and len(set(submits)) == len(submits)


def test_generator_rate_per_hour_follows_daily_shape() -> None:
    rates = [0] * 12 + [60] * 12  # nothing in the first half of the day
    text = CLUSTER + (f"generate:\n  - {{prefix: r, count: 50, arrival: {{rate_per_hour: {rates}}}, "
                      f"job: {{maps: {MAPS}}}}}\n")
    w = parse_workload(text, "rate.yaml", seed=0)
    assert len(w.jobs) == 50
    # the first job arrives at start_s; every later one in an hour with a positive rate
    assert all(int(j.submit_s // 3600) % 24 >= 12 for j in w.jobs[1:])


def test_generator_default_prefix_and_user() -> None:
    w = parse_workload(CLUSTER + f"generate:\n  - {{count: 2, user: zed, job: {{maps: {MAPS}}}}}\n", "g.yaml")
    assert [j.id for j in w.jobs] == ["g0-00001", "g0-00002"]
    assert {j.user for j in w.jobs} == {"zed"}


# ---------------------------------------------------------------- SLS traces

SLS_TRACE = """\
{"am.type": "mapreduce", "job.start.ms": 1000, "job.end.ms": 9000, "job.queue.name": "sls_queue_1",
 "job.id": "job_1", "job.user": "alice",
 "job.tasks": [
  {"container.host": "/rack1/node1", "container.start.ms": 2000, "container.end.ms": 5000,
   "container.priority": 20, "container.type": "map"},
  {"container.host": "/rack1/node2", "container.start.ms": 2000, "container.end.ms": 6500,
   "container.priority": 20, "container.type": "map"},
  {"container.host": "/rack2/node3", "container.start.ms": 6000, "container.end.ms": 9000,
   "container.priority": 10, "container.type": "reduce"}]}
{"am.type": "mapreduce", "job.start.ms": 500, "job.end.ms": 4000, "job.queue.name": "sls_queue_2",
 "job.id": "job_2", "job.user": "bob",
 "job.tasks": [
  {"container.host": "/rack2/node3", "container.start.ms": 1000, "container.end.ms": 4250,
   "container.priority": 20, "container.type": "map"}]}
"""


def test_sls_trace_loads(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text(SLS_TRACE)
    w = load_workload(str(path))
    assert [j.id for j in w.jobs] == ["job_2", "job_1"]  # sorted by submit time
    jobs = {j.id: j for j in w.jobs}
    j1, j2 = jobs["job_1"], jobs["job_2"]
    assert j1.submit_s == 1.0 and j2.submit_s == 0.5
    assert [s.name for s in j1.stages] == ["map", "reduce"]
    assert [s.kind for s in j1.stages] == ["map", "reduce"]
    assert j1.stages[0].durations == (3.0, 4.5)
    assert j1.stages[1].durations == (3.0,)
    assert j1.stages[1].after == 0
    assert [s.priority for s in j1.stages] == [20, 10]
    assert [s.name for s in j2.stages] == ["map"]
    assert j2.stages[0].durations == (3.25,)
    assert all(j.am is None for j in w.jobs)
    assert all(s.resource == Resources(1024, 1) for j in w.jobs for s in j.stages)
    assert (j1.user, j1.queue) == ("alice", "sls_queue_1")
    nodes = {n.id: n for n in w.cluster.nodes}
    assert set(nodes) == {"node1", "node2", "node3"}
    assert {n.id: n.rack for n in w.cluster.nodes} == {"node1": "rack1", "node2": "rack1", "node3": "rack2"}
    assert all(n.capacity == Resources(10240, 10) for n in w.cluster.nodes)


def test_sls_json_array_is_accepted_too() -> None:
    array_text = json.dumps([
        {"job.id": "job_1", "job.start.ms": 1000,
         "job.tasks": [{"container.host": "/r/h1", "container.start.ms": 0, "container.end.ms": 2000}]},
        {"job.id": "job_2", "job.start.ms": 0,
         "job.tasks": [{"container.host": "/r/h2", "container.start.ms": 0, "container.end.ms": 1000}]},
    ])
    w = parse_sls(array_text, "b.json")
    assert [(j.id, j.submit_s, j.stages[0].durations) for j in w.jobs] == [
        ("job_2", 0.0, (1.0,)), ("job_1", 1.0, (2.0,))]
    assert [n.id for n in w.cluster.nodes] == ["h1", "h2"]


def test_sls_options_change_node_and_container_size() -> None:
    w = parse_sls(SLS_TRACE, "t.json", container=Resources(2048, 2), node=Resources(8192, 4))
    assert all(n.capacity == Resources(8192, 4) for n in w.cluster.nodes)
    assert all(s.resource == Resources(2048, 2) for j in w.jobs for s in j.stages)


def test_sls_malformed_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"job.id": "j1",\n "job.start.ms": 0,\n "job.tasks": [}\n')
    with pytest.raises(WorkloadError) as info:
        load_workload(str(path))
    message = str(info.value)
    assert "broken.json: line 3 column " in message
    assert "malformed JSON" in message


def test_sls_task_ending_before_it_starts_names_the_field() -> None:
    text = ('{"job.id": "j1", "job.start.ms": 0, "job.tasks": ['
            '{"container.host": "/r/h", "container.start.ms": 100, "container.end.ms": 200},'
            '{"container.host": "/r/h", "container.start.ms": 500, "container.end.ms": 500}]}')
    with pytest.raises(WorkloadError) as info:
        parse_sls(text, "t.json")
    assert info.value.field == "job[0].job.tasks[1].container.end.ms"
    assert str(info.value).startswith("t.json: job[0].job.tasks[1].container.end.ms: must be after")


def test_sls_unknown_task_type_names_the_field() -> None:
    text = ('{"job.id": "j1", "job.start.ms": 0, "job.tasks": ['
            '{"container.host": "/r/h", "container.start.ms": 0, "container.end.ms": 1, "container.type": "x"}]}')
    with pytest.raises(WorkloadError, match=r"^t\.json: job\[0\]\.job\.tasks\[0\]\.container\.type: "):
        parse_sls(text, "t.json")


def test_yaml_merge_keys_may_be_overridden_beside_them() -> None:
    """`<<: *anchor` then a key of the anchor's is YAML's override, not a key given twice."""
    assert load_yaml("a: &m {x: 1, y: 2}\nb: {<<: *m, x: 3}\n") == {"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 2}}


def test_sls_duplicate_job_id_names_both_jobs() -> None:
    """The second job of one id used to replace the first without a word (the run then stalled on its asks)."""
    job = ('{{"job.id": "j", "job.start.ms": {t}, "job.tasks": '
           '[{{"container.host": "/r/h", "container.start.ms": 0, "container.end.ms": 5000}}]}}')
    with pytest.raises(WorkloadError, match=r"^t\.json: job\[1\]\.job\.id: duplicate job id 'j' \(first at job\[0\]\)$"):
        parse_sls(job.format(t=0) + "\n" + job.format(t=9000), "t.json")
    unnamed = job.format(t=0).replace('"job.id": "j", ', "")
    with pytest.raises(WorkloadError, match="duplicate job id 'job_2', the id given to a job without one"):
        parse_sls(job.format(t=0).replace('"j"', '"job_2"') + "\n" + unnamed, "t.json")


# ---------------------------------------------------------------- built-in workloads

def test_there_are_builtin_workloads() -> None:
    names = builtin_names()
    assert "haste-fig1" in names
    assert len(names) == len(set(names)) >= 10


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", builtin_names())
def test_builtin_workload_loads(name: str, seed: int) -> None:
    w = load_workload(name, seed=seed)
    assert w.name == name
    assert w.seed == seed
    assert w.description.strip()
    assert w.source.strip()
    assert w.jobs and w.tasks > 0
    assert len({j.id for j in w.jobs}) == len(w.jobs)
    nodes = w.cluster.nodes
    for j in w.jobs:
        for s in j.stages:
            assert s.tasks > 0 and all(d > 0 for d in s.durations)
            need = normalize(s.resource, w.cluster.min_allocation)
            assert any(need.fits_in(n.capacity) for n in nodes), (j.id, s.name, s.resource)
        if j.am is not None:
            assert any(j.am.fits_in(n.capacity) for n in nodes), (j.id, "am")


def test_mapreduce_properties_come_from_defaults_and_the_job() -> None:
    text = (CLUSTER + "defaults: {mapreduce: {yarn.app.mapreduce.am.job.reduce.rampup.limit: 0.3,"
            " mapreduce.job.reduce.slowstart.completedmaps: 0.5}}\n"
            f"jobs:\n  - {{id: a, maps: {MAPS}, reduces: {{tasks: 1, resource: {RES}, duration: 1, shuffle_s: 4}},"
            " mapreduce: {mapreduce.job.reducer.unconditional-preempt.delay.sec: 60}}\n")
    (job,) = parse_workload(text, SOURCE).jobs
    assert (job.mapreduce.rampup_limit, job.mapreduce.unconditional_preempt_delay_s) == (0.3, 60.0)
    assert job.mapreduce.preemption_limit == 0.5  # Hadoop's default where nothing says otherwise
    assert (job.stages[1].slowstart, job.stages[1].shuffle_s) == (0.5, 4.0)


def test_unnamed_stages_of_one_job_load() -> None:
    """Two stages without names share their kind's name; only names given twice are refused."""
    w = parse_workload(_generic(f"{{tasks: 2, resource: {RES}, duration: 10, priority: 20}}",
                                f"{{tasks: 2, resource: {RES}, duration: 10, priority: 20}}"), SOURCE, seed=0)
    assert [s.after for s in w.jobs[0].stages] == [None, 0]
