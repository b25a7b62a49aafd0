"""A task JVM's start-up steps from its container's syslog (bench/taskstart.py), and tasks.csv's columns for them.

The fixtures are real syslogs of a `bench mr --spec fid-wide` run under native FIFO on the local
cluster (2026-11-29), with the final counters left out.
"""

from __future__ import annotations

import csv
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from yarnctl.bench import taskstart
from yarnctl.bench.jhist import read_jhist
from yarnctl.cli.bench import _write_tasks

FIXTURES = Path(__file__).parent / "fixtures"
SYSLOGS = FIXTURES / "taskstart"


def _ms(stamp: str) -> int:
    return int(datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000)


def test_a_maps_syslog_gives_each_step() -> None:
    s = taskstart.read("container_x_02", (SYSLOGS / "map.syslog").read_text().splitlines())
    assert s is not None and s.attempt_id == "attempt_1795989028010_0001_m_000000_0"
    assert (s.jvm_ms, s.task_ms, s.work_ms, s.done_ms) == (
        _ms("2026-11-29 21:51:15,964"), _ms("2026-11-29 21:51:21,572"), _ms("2026-11-29 21:51:24,884"),
        _ms("2026-11-29 21:51:34,677"))
    # this 8 s map waited 5.6 s from its first log line for its task, then 3.3 s more to start it
    assert (s.task_ms - s.jvm_ms, s.work_ms - s.task_ms) == (5608, 3312)


def test_a_reduces_work_begins_with_its_shuffle() -> None:
    s = taskstart.read("container_x_10", (SYSLOGS / "reduce.syslog").read_text().splitlines())
    assert s is not None and s.attempt_id.endswith("_r_000000_0")
    assert s.work_ms == _ms("2026-11-29 21:51:46,508") and s.done_ms == _ms("2026-11-29 21:51:49,385")


def test_an_am_and_a_jvm_that_never_got_its_task_are_not_tasks() -> None:
    assert taskstart.read("container_x_01", (SYSLOGS / "am.syslog").read_text().splitlines()) is None
    head = (SYSLOGS / "map.syslog").read_text().splitlines()[:6]  # died before getTask returned
    assert taskstart.read("container_x_02", head) is None
    assert taskstart.read("container_x_02", []) is None
    assert taskstart.read("container_x_02", ["garbage", "\tat nowhere"]) is None


def test_continuation_lines_and_a_task_that_did_not_finish() -> None:
    lines = (SYSLOGS / "map.syslog").read_text().splitlines()
    cut = next(i for i, ln in enumerate(lines) if "Starting flush" in ln)
    s = taskstart.read("container_x_02", lines[:cut] + ["\tat org.apache.hadoop.Some.frame(Some.java:1)", "Counters: 20"])
    assert s is not None and s.done_ms == 0 and s.attempt_id == "" and s.work_ms > s.task_ms > s.jvm_ms


def test_keep_scans_every_nodemanagers_containers_and_load_reads_them_back(tmp_path: Path) -> None:
    cluster, work = tmp_path / "cluster", tmp_path / "work"
    for nm, container, name in (("nm-0", "container_a_01_000001", "am"), ("nm-0", "container_a_01_000002", "map"),
                                ("nm-1", "container_a_01_000010", "reduce")):
        d = cluster / nm / "logs" / "application_a_0001" / container
        d.mkdir(parents=True)
        shutil.copy(SYSLOGS / f"{name}.syslog", d / "syslog")
    (cluster / "nm-1" / "logs" / "application_a_0001" / "container_a_01_000011").mkdir()  # no syslog (yet)
    assert taskstart.keep(cluster, work) == 2
    kept = taskstart.load(work)
    assert sorted(kept) == ["container_a_01_000002", "container_a_01_000010"]
    assert kept["container_a_01_000002"] == taskstart.read("container_a_01_000002", (SYSLOGS / "map.syslog").read_text().splitlines())
    assert taskstart.load(tmp_path / "elsewhere") == {}
    assert list(taskstart.scan(tmp_path / "no-cluster")) == []


def test_a_damaged_startup_file_leaves_the_steps_blank(tmp_path: Path) -> None:
    for text in ('[{"container_id": "c1", "jvm_ms": 1', '[{"container_id": "c1"}]', '{"a": 1}', "[1]"):
        (tmp_path / taskstart.FILE).write_text(text)
        assert taskstart.load(tmp_path) == {}, text


def test_tasks_csv_places_the_steps_on_the_run_clock(tmp_path: Path) -> None:
    jhist = FIXTURES / "sleep-12x1.jhist"
    h = read_jhist(jhist)
    first = h.of_type("MAP")[0]
    history = tmp_path / "work" / "history"
    history.mkdir(parents=True)
    shutil.copy(jhist, history / jhist.name)
    at = first.start_ms
    (tmp_path / "work" / taskstart.FILE).write_text(
        f'[{{"container_id": "{first.container_id}", "attempt_id": "{first.attempt_id}", "jvm_ms": {at + 2000}, '
        f'"task_ms": {at + 3500}, "work_ms": {at + 4000}, "done_ms": 0}}]')
    run = {"label": "native-fifo", "history": str(history),
           "records": [{"app_id": "application_1795584395123_0001", "job_id": "j01", "submit_ms": h.submit_ms}]}
    with _write_tasks(tmp_path / "tasks.csv", [run]).open() as f:
        rows = {r["attempt"]: r for r in csv.DictReader(f)}
    row = rows[first.attempt_id]
    start = float(row["start_s"])
    steps = (float(row["jvm_s"]) - start, float(row["task_s"]) - start, float(row["work_s"]) - start)
    assert steps == pytest.approx((2.0, 3.5, 4.0), abs=1e-9)
    assert row["done_s"] == ""
    others = [r for a, r in rows.items() if a != first.attempt_id]
    assert len(others) == 12 and all(r["jvm_s"] == "" for r in others)
