"""The damping-factor sweep ([FEEDBACK] Sec. V-C): EFR requests, failure counting, table, files, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarnctl.model import Resources
from yarnctl.sim.sweep import extreme_fit, main, sweep, table
from yarnctl.sim.workload import load_workload

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# tasks that start light (a quarter of their memory) and then use all of it: usage feedback sees the light
# start, offers the node more than its allowance, and the node's memory overflows when they grow (Sec. IV, V-B)
RAMP = """
cluster: {nodes: 1, node: {memory_mb: 4096, vcores: 16}}
defaults: {am: false}
jobs:
  - id: j
    submit_s: 0
    type: spark
    executors:
      tasks: 12
      resource: {memory_mb: 1024, vcores: 1}
      duration: 60
      usage: {profile: [{at: 0.0, cpu: 0.2, memory: 0.25}, {at: 0.5, cpu: 0.2, memory: 1.0}]}
"""


@pytest.fixture
def ramp(tmp_path: Path) -> str:
    p = tmp_path / "ramp.yaml"
    p.write_text(RAMP)
    return str(p)


def test_extreme_fit_requests_the_peak_and_keeps_the_use() -> None:
    w = load_workload("feedback-day")
    efr = extreme_fit(w)
    assert efr.tasks == w.tasks and efr.name == "feedback-day-efr"
    assert {n.capacity for n in efr.cluster.nodes} == {Resources(28 * 1024, 58)}  # Sec. V-B
    assert {n.physical for n in efr.cluster.nodes} == {Resources(32 * 1024, 64)}
    assert efr.cluster.min_allocation == Resources(1, 1)
    for job, fit in zip(w.jobs, efr.jobs):
        for s, f in zip(job.stages, fit.stages):
            peak_mb = max(m for _, _, m in s.usage.steps) * s.resource.memory_mb
            assert f.resource.memory_mb == pytest.approx(peak_mb, abs=1)  # whole MB, rounded up
            assert max(m for _, _, m in f.usage.steps) <= 1.0
            for (at, cpu, mem), (at2, cpu2, mem2) in zip(s.usage.steps, f.usage.steps):
                # the same absolute use: only the request it is a fraction of changed
                assert at2 == at
                assert mem2 * f.resource.memory_mb == pytest.approx(mem * s.resource.memory_mb)
                assert cpu2 * f.resource.vcores == pytest.approx(cpu * s.resource.vcores)
    # etl-large reduces (3 GB, peak 90%) ask for 2765 MB instead of 3072
    assert any(st.resource.memory_mb == 2765 for j in efr.jobs for st in j.stages)


def test_sweep_counts_oom_kills_against_fifo(ramp: str) -> None:
    fifo, fb = sweep(ramp, ["rru"], [0.5])
    assert (fifo.policy, fifo.alpha, fb.policy, fb.alpha) == ("fifo", None, "feedback", 0.5)
    assert fifo.oom_kills == 0  # the reservation model never holds more than the node's 4 GB
    assert fb.oom_kills > 0  # feedback learned the light start and overfilled the node
    assert fb.failure_fraction == fb.oom_kills / 12
    assert fb.tasks == fifo.tasks == 12


def test_table_has_one_row_per_run(ramp: str) -> None:
    points = sweep(ramp, ["rru"], [0.1, 0.5])
    lines = table(points).splitlines()
    assert lines[0].startswith("| scenario | policy | α | OOM-killed attempts |")
    assert len(lines) == 2 + 3
    assert lines[2].startswith("| rru | fifo | - | 0 | 0.000% |")
    assert lines[4].startswith(f"| rru | feedback | 0.5 | {points[2].oom_kills} |")


def test_main_writes_csv_and_png(ramp: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-w", ramp, "--scenario", "rru", "--alpha", "0.5", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "| rru | feedback | 0.5 |" in out and "sweep.csv" in out
    assert (tmp_path / "o" / "sweep.png").read_bytes()[:8] == PNG_MAGIC
    rows = (tmp_path / "o" / "sweep.csv").read_text().splitlines()
    assert rows[0].startswith("scenario,policy,alpha,tasks,oom_kills,failure_fraction") and len(rows) == 3


@pytest.mark.parametrize("argv, message", [
    (["--alpha", "0.1,2"], "α must be in [0, 1], got 2"),
    (["--alpha", "x"], "not a number: 'x'"),
    (["--scenario", "rru,foo"], "unknown scenario 'foo'; valid: rru, efr"),
], ids=["alpha-range", "alpha-nan", "scenario"])
def test_bad_flags_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_bad_workload_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-w", str(tmp_path / "missing.yaml"), "--alpha", "0.1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "missing.yaml" in err
