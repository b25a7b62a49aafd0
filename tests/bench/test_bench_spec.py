"""Bench specs: the built-in one, schedules, the client's arguments, and one clear line for each bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.bench.mr import command_args, scheduler_of, write_text
from yarnctl.bench.spec import TAG_PREFIX, load_spec, parse_spec
from yarnctl.errors import WorkloadError

JOB = {"program": "sleep", "args": ["-m", "1"]}


def test_builtin_mr_mix_has_eight_jobs_five_seconds_apart() -> None:
    spec = load_spec("mr-mix")
    assert len(spec.jobs) == 8
    assert [j.submit_s for j in spec.jobs] == [5.0 * i for i in range(8)]
    assert {j.program for j in spec.jobs} == {"sleep", "pi", "wordcount"}
    assert (spec.nodes, spec.nm_memory_mb, spec.nm_vcores) == (2, 8192, 16)


def test_random_schedule_is_seeded_and_within_bounds() -> None:
    doc = {"schedule": {"random": {"low": 0, "high": 60}}, "jobs": [dict(JOB, id=f"j{i}") for i in range(6)]}
    a, b, c = (parse_spec(doc, "x.yaml", "x", seed) for seed in (1, 1, 2))
    offsets = [j.submit_s for j in a.jobs]
    assert offsets == sorted(offsets) and all(0 <= t <= 60 for t in offsets)
    assert offsets == [j.submit_s for j in b.jobs]
    assert offsets != [j.submit_s for j in c.jobs]


def test_a_job_may_set_its_own_submit_time_and_jobs_run_in_submit_order() -> None:
    doc = {"schedule": {"interval_s": 10}, "jobs": [dict(JOB, id="late", submit_s=25), dict(JOB, id="first")]}
    spec = parse_spec(doc, "x.yaml", "x")
    assert [(j.id, j.submit_s) for j in spec.jobs] == [("first", 10.0), ("late", 25.0)]


def test_client_arguments_carry_the_tag_before_the_job_arguments(tmp_path: Path) -> None:
    spec = parse_spec({"jobs": [{"id": "wc", "program": "wordcount", "queue": "small",
                                 "args": ["{work}/text", "{work}/out-{id}"]}]}, "x.yaml", "x")
    args = command_args(spec.jobs[0], tmp_path)
    assert args == ["wordcount", f"-Dmapreduce.job.tags={TAG_PREFIX}wc", "-Dmapreduce.framework.name=yarnctl-at",
                    "-Dmapreduce.job.queuename=small", f"{tmp_path}/text", f"{tmp_path}/out-wc"]
    assert "-Dmapreduce.framework.name=yarnctl-at" not in command_args(spec.jobs[0], tmp_path, timed=False)
    sleep = parse_spec({"jobs": [JOB]}, "x.yaml", "x").jobs[0]
    assert command_args(sleep, tmp_path)[0].startswith("-Dmapreduce.job.tags=")  # SleepJob has its own main class


def test_scheduler_labels() -> None:
    assert scheduler_of("native-capacity") == ("capacity", None)
    assert scheduler_of("dress") == (None, "dress")


def test_text_inputs_are_written_deterministically(tmp_path: Path) -> None:
    spec = parse_spec({"inputs": [{"text": {"path": "t", "files": 2, "mb": 0.5}}], "jobs": [JOB]}, "x.yaml", "x")
    write_text(spec.inputs[0], tmp_path / "a")
    write_text(spec.inputs[0], tmp_path / "b")
    files = sorted((tmp_path / "a" / "t").iterdir())
    assert [f.name for f in files] == ["part-00000.txt", "part-00001.txt"]
    assert sum(f.stat().st_size for f in files) == pytest.approx(0.5 * (1 << 20), rel=0.01)
    assert files[0].read_bytes() == (tmp_path / "b" / "t" / "part-00000.txt").read_bytes()


BAD = [
    ({"jobs": []}, "jobs: expected a non-empty list"),
    ({"jobs": [{"program": "nope"}]}, "jobs[0].program: unknown program 'nope'"),
    ({"jobs": [dict(JOB, id="a"), dict(JOB, id="a")]}, "jobs[1].id: duplicate job id 'a'"),
    ({"jobs": [dict(JOB, args="-m 1")]}, "jobs[0].args: expected a list"),
    ({"jobs": [dict(JOB, colour="red")]}, "jobs[0].colour: unknown field"),
    ({"schedule": {"interval_s": -5}, "jobs": [JOB]}, "schedule.interval_s: expected a number >= 0"),
    ({"schedule": {"random": {"low": 30, "high": 10}}, "jobs": [JOB]}, "schedule.random.high: expected a number >= 30"),
    ({"cluster": {"nodes": 0}, "jobs": [JOB]}, "cluster.nodes: expected a positive integer"),
]


@pytest.mark.parametrize("doc,message", BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_bad_specs_name_the_field(doc: dict[str, object], message: str) -> None:
    with pytest.raises(WorkloadError) as e:
        parse_spec(doc, "spec.yaml", "spec")
    assert message in str(e.value) and str(e.value).startswith("spec.yaml")


def test_unknown_spec_lists_the_builtins() -> None:
    with pytest.raises(WorkloadError, match="mr-mix"):
        load_spec("no-such-bench")


def test_malformed_yaml_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "broken.yaml"
    f.write_text("jobs: [\n")
    with pytest.raises(WorkloadError, match="malformed YAML"):
        load_spec(str(f))


def test_a_shim_run_keeps_the_policy_servers_logs(tmp_path: Path) -> None:
    from yarnctl.bench.mr import keep_policy_log

    cluster, dest = tmp_path / "cluster", tmp_path / "work"
    (cluster / "logs").mkdir(parents=True)
    dest.mkdir()
    assert keep_policy_log(cluster, dest) == []  # a stock scheduler's run has neither
    (cluster / "logs" / "serve.log").write_text("dress: δ 0.1000 -> 1.0000 at t=10.0\n")
    (cluster / "decisions.jsonl").write_text("{}\n")
    assert keep_policy_log(cluster, dest) == ["serve.log", "decisions.jsonl"]
    assert (dest / "serve.log").read_text().startswith("dress: δ")
