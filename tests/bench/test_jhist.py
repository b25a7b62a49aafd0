"""The .jhist reader (yarnctl/bench/jhist.py) on real files: a SleepJob of 12 maps and a reduce, and a
wordcount on HDFS, run by `yarnctl bench mr` on the local cluster (counters trimmed to keep them small)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from yarnctl.bench.jhist import read_jhist
from yarnctl.bench.mr import map_locality
from yarnctl.cli.bench import _write_tasks
from yarnctl.errors import ClusterError

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE = FIXTURES / "sleep-12x1.jhist"


def test_a_real_sleep_job() -> None:
    h = read_jhist(FIXTURE)
    assert (h.job_id, h.name, h.user, h.queue, h.status) == ("job_1795584395123_0001", "Sleep job", "root", "default",
                                                            "SUCCEEDED")
    # submitted, AM up 2.0 s later, job initialised 1.9 s after that, done 43.6 s after submission
    assert (h.am_start_ms - h.submit_ms, h.launch_ms - h.am_start_ms, h.finish_ms - h.submit_ms) == (1989, 1895, 43610)
    maps, reduces = h.of_type("MAP"), h.of_type("REDUCE")
    assert len(maps) == 12 and len(reduces) == 1
    assert all(a.status == "SUCCEEDED" and a.host == "localhost" and a.container_id.startswith("container_")
               for a in h.attempts)
    assert maps[0].start_ms - h.launch_ms == 2154  # the first map ran 2.2 s after the job was initialised
    (r,) = reduces
    # the reduce started before the last map ended and shuffled meanwhile: its shuffle ended 0.17 s after
    # that map (the last output's fetch), then its 0.5 s reduce ran (the simulator's shuffle_s model)
    last_map = max(m.finish_ms for m in maps)
    assert r.start_ms < last_map
    assert (r.shuffle_finish_ms - last_map, r.finish_ms - r.shuffle_finish_ms) == (173, 564)


def test_a_killed_attempt_and_a_failed_job(tmp_path: Path) -> None:
    lines = FIXTURE.read_text().splitlines()[:2]
    ev = "org.apache.hadoop.mapreduce.jobhistory."
    lines += [json.dumps({"type": t, "event": {ev + n: e}}) for t, n, e in [
        ("JOB_SUBMITTED", "JobSubmitted", {"jobid": "job_1_0002", "jobName": "j", "userName": "u", "submitTime": 1000,
                                           "jobQueueName": "q"}),
        ("MAP_ATTEMPT_STARTED", "TaskAttemptStarted", {"taskid": "task_1_0002_m_000000", "taskType": "MAP",
                                                       "attemptId": "attempt_1_0002_m_000000_0", "startTime": 2000,
                                                       "trackerName": "h1", "containerId": "container_1_0002_01_000002"}),
        ("MAP_ATTEMPT_KILLED", "TaskAttemptUnsuccessfulCompletion", {"taskid": "task_1_0002_m_000000", "taskType": "MAP",
                                                                     "attemptId": "attempt_1_0002_m_000000_0",
                                                                     "finishTime": 5000, "hostname": "h1",
                                                                     "status": "KILLED"}),
        ("JOB_FAILED", "JobUnsuccessfulCompletion", {"jobid": "job_1_0002", "finishTime": 6000, "jobStatus": "FAILED"}),
    ]]
    p = tmp_path / "f.jhist"
    p.write_text("\n".join(lines) + "\n")
    h = read_jhist(p)
    assert (h.status, h.finish_ms, h.am_start_ms) == ("FAILED", 6000, 0)
    (a,) = h.attempts
    assert (a.status, a.start_ms, a.finish_ms, a.host) == ("KILLED", 2000, 5000, "h1")


@pytest.mark.parametrize("text, problem", [
    ("", "no Avro-Json header"),
    ("Avro-Json\n{}\nnot json\n", ":3: not a job history event"),
    ('Avro-Json\n{}\n{"type": "JOB_SUBMITTED", "event": {"x": {"jobid": "j"}}}\n', ":3: malformed JOB_SUBMITTED event"),
])
def test_malformed_files_are_one_error(tmp_path: Path, text: str, problem: str) -> None:
    p = tmp_path / "bad.jhist"
    p.write_text(text)
    with pytest.raises(ClusterError, match=problem):
        read_jhist(p)


def test_tasks_csv_places_every_attempt_on_the_run_clock(tmp_path: Path) -> None:
    h = read_jhist(FIXTURE)
    run = {"label": "native-fifo", "history": str(FIXTURE.parent),
           "records": [{"app_id": "application_1795584395123_0001", "job_id": "j01", "submit_ms": h.submit_ms}]}
    with _write_tasks(tmp_path / "tasks.csv", [run]).open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 13 and {r["job"] for r in rows} == {"j01"}
    reduce = next(r for r in rows if r["type"] == "REDUCE")
    assert (reduce["start_s"], reduce["shuffle_end_s"], reduce["finish_s"]) == ("34.152", "43.031", "43.595")


def test_a_wordcount_on_hdfs_counts_its_maps_by_locality(tmp_path: Path) -> None:
    # a real file from `bench mr --hdfs` (counters other than JobCounter and per-attempt splits trimmed): four
    # 1 MB blocks on two DataNodes; every map ran on 127.0.1.2, which held two of them
    h = read_jhist(FIXTURES / "hdfs" / "wordcount-hdfs.jhist")
    assert h.locality == (2, 2, 0) and h.job_counters["TOTAL_LAUNCHED_MAPS"] == 4
    assert {a.host for a in h.of_type("MAP")} == {"127.0.1.2"}
    (tmp_path / "h").mkdir()
    for f in (FIXTURE, FIXTURES / "hdfs" / "wordcount-hdfs.jhist"):
        (tmp_path / "h" / f.name).write_bytes(f.read_bytes())
    # the SleepJob fixture's counters were trimmed to nothing: no locality is claimed for it
    assert map_locality(tmp_path / "h") == {"application_1795775036136_0001": (2, 2, 0)}


def test_a_rerun_keeps_its_own_history_only(tmp_path: Path) -> None:
    from yarnctl.bench.mr import keep_history
    from yarnctl.bench.replay import histories

    cluster, dest = tmp_path / "cluster", tmp_path / "work" / "history"
    (cluster / "history" / "done").mkdir(parents=True)
    dest.mkdir(parents=True)
    (dest / "job_1_0001-earlier-run.jhist").write_text("stale")  # the first run under this label
    (cluster / "history" / "done" / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
    assert keep_history(cluster, dest) == 1
    assert sorted(p.name for p in dest.iterdir()) == [FIXTURE.name]
    assert list(histories(dest)) == ["job_1795584395123_0001"]


def test_a_history_file_moved_mid_copy_is_kept_from_its_new_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The JobHistoryServer moves a finished job's file from intermediate/ to done/ whenever it likes; a
    fresh-clone CI run lost a fidelity run to that race. The move is injected here, at the first copy."""
    import shutil

    from yarnctl.bench import mr

    cluster, dest = tmp_path / "cluster", tmp_path / "work" / "history"
    (cluster / "history" / "intermediate" / "root").mkdir(parents=True)
    (cluster / "history" / "done").mkdir(parents=True)
    (cluster / "history" / "intermediate" / "root" / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
    real_copy = shutil.copy2
    moves = []

    def copy_after_the_move(src: Path, dst: Path) -> object:
        if "intermediate" in str(src):
            moves.append(src)
            Path(src).rename(cluster / "history" / "done" / Path(src).name)
        return real_copy(src, dst)

    monkeypatch.setattr(mr.shutil, "copy2", copy_after_the_move)
    assert mr.keep_history(cluster, dest) == 1
    assert len(moves) == 1 and (dest / FIXTURE.name).read_bytes() == FIXTURE.read_bytes()


def test_a_history_file_no_scan_listed_is_kept_by_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan that reads done/ before the JobHistoryServer's move and intermediate/ after it lists the file in
    neither; the injected first scan does exactly that (and it is the run's only file)."""
    from yarnctl.bench import mr

    cluster, dest = tmp_path / "cluster", tmp_path / "work" / "history"
    (cluster / "history" / "intermediate" / "root").mkdir(parents=True)
    (cluster / "history" / "done").mkdir(parents=True)
    src = cluster / "history" / "intermediate" / "root" / FIXTURE.name
    src.write_bytes(FIXTURE.read_bytes())
    real_rglob = Path.rglob
    scans = []

    def rglob_missing_the_move(self: Path, pattern: str) -> object:
        scans.append(self)
        if len(scans) == 1:
            src.rename(cluster / "history" / "done" / src.name)  # between reading done/ and intermediate/
            return iter(())
        return real_rglob(self, pattern)

    monkeypatch.setattr(Path, "rglob", rglob_missing_the_move)
    assert mr.keep_history(cluster, dest) == 1
    assert len(scans) == 3 and (dest / FIXTURE.name).read_bytes() == FIXTURE.read_bytes()


def test_a_copy_from_hdfs_that_lost_a_file_to_a_move_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`hadoop fs -copyToLocal` fails when the JobHistoryServer moves a file under it; a stand-in for the cluster's
    `fs` (no HDFS in the fast tier; the real path runs in tests/integration/test_hdfs_live.py) fails the first copy
    part-way, then copies the whole tree."""
    from yarnctl.bench import mr
    from yarnctl.errors import ClusterError

    calls: list[tuple[str, ...]] = []

    class FlakyFs:
        def fs(self, *args: str) -> str:
            calls.append(args)
            to = Path(args[-1])
            (to / "intermediate").mkdir(parents=True)
            (to / "intermediate" / "partial.jhist").write_text("cut")
            if len(calls) == 1:
                raise ClusterError("hadoop fs -copyToLocal: exit 1: No such file or directory")
            (to / "intermediate").rename(to / "done")
            (to / "done" / "partial.jhist").unlink()
            (to / "done" / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
            return ""

    said: list[str] = []
    monkeypatch.setattr(mr, "_HISTORY_MOVE_S", 0.0)
    mr.fetch_history(FlakyFs(), tmp_path / "cluster" / "history", "fifo", said.append)  # type: ignore[arg-type]
    assert [c[-1].rsplit("/", 1)[1] for c in calls] == ["hdfs-1", "hdfs-2"] and said == []
    assert mr.keep_history(tmp_path / "cluster", tmp_path / "kept") == 1  # the failed copy's leftovers went
    assert [p.name for p in (tmp_path / "kept").iterdir()] == [FIXTURE.name]
