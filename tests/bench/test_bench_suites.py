"""The HiBench and TPC-DS backends against fake checkouts, and how records become the report.

HiBench and hive-testbench cannot be downloaded here, so the checkouts are fakes: shell scripts
in the real layouts (`bin/workloads/<cat>/<wl>/{prepare/prepare.sh,hadoop/run.sh}`,
`sample-queries-tpcds/queryN.sql` run by a `hive` CLI) that record what they were asked to run
and print the application ids a real client prints. The RM is a real HTTP server in a thread
answering with responses recorded from a live 2.7.7 RM, edited to the fake applications' ids
and outcomes.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fixturerm import FIXTURES, JSON, HttpStub
from yarnctl.bench.collect import AppRecord, result
from yarnctl.bench.suites import PYTHON2_SH, app_ids_in, combine, hibench_conf, hibench_jobs, python2, tpcds_jobs
from yarnctl.cli.main import main
from yarnctl.errors import ConfigError

APP = json.loads((FIXTURES / "apps_running.json").read_text())["apps"]["app"][0]
T0 = 1_795_326_565_641


class SuiteRM(HttpStub):
    """An RM knowing the finished applications `apps` (id -> (final status, start offset s, finish offset s))."""

    def __init__(self, apps: dict[str, tuple[str, float, float]]) -> None:
        self.apps = apps
        super().__init__()

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        path = path.split("?")[0]
        if path == "/ws/v1/cluster/metrics":
            return 200, JSON, (FIXTURES / "cluster_metrics_running.json").read_bytes()
        parts = path.split("/")
        if len(parts) >= 6 and parts[4] == "apps" and parts[5] in self.apps:
            status, start, finish = self.apps[parts[5]]
            if parts[-1] == "appattempts":
                attempts = json.loads((FIXTURES / "app_attempts.json").read_text())
                attempts["appAttempts"]["appAttempt"][0]["startTime"] = T0 + int(start * 1000) + 2000
                return 200, JSON, json.dumps(attempts).encode()
            app = copy.deepcopy(APP)
            app.update(id=parts[5], state="FINISHED" if status == "SUCCEEDED" else status, finalStatus=status,
                       startedTime=T0 + int(start * 1000), finishedTime=T0 + int(finish * 1000),
                       memorySeconds=1024 * 10, vcoreSeconds=10, applicationType="MAPREDUCE")
            return 200, JSON, json.dumps({"app": app}).encode()
        return 404, JSON, b'{"RemoteException": {"message": "not found"}}'


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _fake_hibench(home: Path, apps: dict[str, list[str]]) -> Path:
    calls = home / "calls.txt"
    for wl, ids in apps.items():
        base = home / "bin" / "workloads" / wl
        _script(base / "prepare" / "prepare.sh", f'echo "prepare {wl}" >> {calls}\n')
        printed = "".join(f'echo "INFO impl.YarnClientImpl: Submitted application {i}"\n' for i in ids)
        _script(base / "hadoop" / "run.sh", f'echo "run {wl}" >> {calls}\n{printed}')
    return calls


def _bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["bench", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_hibench_runs_prepare_then_run_and_trusts_the_rm_not_the_suite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok, failed = "application_1795326552648_0007", "application_1795326552648_0008"
    calls = _fake_hibench(tmp_path / "HiBench", {"micro/wordcount": [ok], "micro/sort": [failed]})
    rm = SuiteRM({ok: ("SUCCEEDED", 0.5, 30.0), failed: ("FAILED", 1.0, 12.0)})
    try:
        code, out, err = _bench(capsys, "hibench", "--home", str(tmp_path / "HiBench"), "--workloads",
                                "micro/wordcount,micro/sort", "--interval", "0.2", "--rm", rm.url, "--label",
                                "capacity", "--out", str(tmp_path / "out"), "--no-plots")
    finally:
        rm.stop()
    assert code == 0, err
    # both prepared before either ran, in the order given
    assert calls.read_text().split("\n")[:4] == ["prepare micro/wordcount", "prepare micro/sort",
                                                 "run micro/wordcount", "run micro/sort"]
    with (tmp_path / "out" / "jobs.csv").open() as f:
        jobs = {r["id"]: r for r in csv.DictReader(f)}
    assert jobs["micro-wordcount"]["state"] == "succeeded"
    assert float(jobs["micro-wordcount"]["completion_s"]) == pytest.approx(29.5)
    assert jobs["micro-sort"]["state"] == "failed" and jobs["micro-sort"]["completion_s"] == ""
    with (tmp_path / "out" / "summary.csv").open() as f:
        summary = next(csv.DictReader(f))
    assert summary["failed"] == "1" and float(summary["avg_completion_s"]) == pytest.approx(29.5)  # failure not averaged
    assert "1 job(s) did not succeed" in err


def test_a_benchmark_that_started_no_application_is_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fake_hibench(tmp_path / "HiBench", {"micro/wordcount": []})
    rm = SuiteRM({})
    try:
        code, _, err = _bench(capsys, "hibench", "--home", str(tmp_path / "HiBench"), "--workloads",
                              "micro/wordcount", "--skip-prepare", "--rm", rm.url, "--label", "fifo", "--json",
                              "--out", str(tmp_path / "out"))
    finally:
        rm.stop()
    assert code == 0, err
    assert "no YARN application found" in err


def test_tpcds_drives_hive_with_each_query_and_merges_a_querys_applications(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tb = tmp_path / "hive-testbench"
    for q in ("query3", "query7"):
        (tb / "sample-queries-tpcds").mkdir(parents=True, exist_ok=True)
        (tb / "sample-queries-tpcds" / f"{q}.sql").write_text("select 1;\n")
    (tb / "sample-queries-tpcds" / "testbench.settings").write_text("set hive.exec.parallel=true;\n")
    calls = tmp_path / "hive-calls.txt"
    # query3 runs two MR stages (Hive prints job_ ids), query7 one
    _script(tmp_path / "hive", f'echo "$@" >> {calls}\ncase "$*" in\n'
            '*query3*) echo "Starting Job = job_1795326552648_0011, Tracking URL = x"; '
            'echo "Starting Job = job_1795326552648_0012, Tracking URL = x";;\n'
            '*) echo "Starting Job = job_1795326552648_0013, Tracking URL = x";;\nesac\n')
    rm = SuiteRM({"application_1795326552648_0011": ("SUCCEEDED", 0.0, 10.0),
                  "application_1795326552648_0012": ("SUCCEEDED", 11.0, 25.0),
                  "application_1795326552648_0013": ("SUCCEEDED", 1.0, 8.0)})
    try:
        code, out, err = _bench(capsys, "tpcds", "--home", str(tb), "--queries", "3,7", "--database", "tpcds_orc_2",
                                "--hive", str(tmp_path / "hive"), "--interval", "0.1", "--rm", rm.url, "--label",
                                "dress", "--json", "--out", str(tmp_path / "out"))
    finally:
        rm.stop()
    assert code == 0, err
    lines = calls.read_text().splitlines()
    assert lines[0] == (f"-i {tb}/sample-queries-tpcds/testbench.settings --database tpcds_orc_2 "
                        f"-f {tb}/sample-queries-tpcds/query3.sql")
    doc = json.loads(out)
    jobs = {j["id"]: j for j in doc["results"]["dress"]["jobs"]}
    assert jobs["query3"]["completion_s"] == pytest.approx(25.0)  # first submit to last finish
    assert doc["runs"][0]["records"][0]["app_id"] == "application_1795326552648_0011,application_1795326552648_0012"


def test_bench_report_merges_runs_and_refuses_foreign_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def run(label: str, finish_s: float) -> dict[str, Any]:
        rec = AppRecord("j1", "sleep", "application_1_0001", "u", "q", T0, T0 + 1000, T0 + int(finish_s * 1000),
                        "SUCCEEDED", 3, 100, 10, "history")
        return {"label": label, "spec": "mr-mix", "capacity_mb": 8192, "capacity_vcores": 8, "wall_s": 1.0,
                "records": [rec.to_json()]}
    (tmp_path / "a.json").write_text(json.dumps({"runs": [run("native-capacity", 40)]}))
    (tmp_path / "b.json").write_text(json.dumps({"runs": [run("dress", 30)]}))
    code, out, err = _bench(capsys, "report", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json")
    assert code == 0, err
    res = json.loads(out)["results"]
    assert (res["native-capacity"]["makespan_s"], res["dress"]["makespan_s"]) == (40.0, 30.0)
    (tmp_path / "c.json").write_text('{"not": "a bench"}')
    code, _, err = _bench(capsys, "report", str(tmp_path / "c.json"))
    assert code == 2 and err.strip() == f"error: {tmp_path / 'c.json'}: not a bench.json written by `yarnctl bench --out`"
    code, _, err = _bench(capsys, "report", str(tmp_path / "a.json"), str(tmp_path / "a.json"))
    assert code == 2 and "the same label appears twice" in err


REC = AppRecord("j1", "sleep", "application_1_0001", "u", "q", T0, T0 + 1000, T0 + 40_000, "SUCCEEDED", 3, 100, 10,
                "history").to_json()
RUN = {"label": "dress", "spec": "mr-mix", "capacity_mb": 8192, "capacity_vcores": 8, "wall_s": 1.0, "records": [REC]}


@pytest.mark.parametrize("doc,message", [
    ({"runs": []}, "runs: empty; nothing to report"),
    ({"runs": [{"label": "x"}]}, "runs[0].spec: missing"),
    ({"runs": [5]}, "runs[0]: expected a mapping, got 5"),
    ({"runs": [{**RUN, "capacity_mb": "a"}]}, "runs[0].capacity_mb: expected an integer >= 0, got 'a'"),
    ({"runs": [{**RUN, "records": 5}]}, "runs[0].records: expected a list of the run's jobs, got 5"),
    ({"runs": [{**RUN, "records": [{"job_id": "j1"}]}]}, "runs[0].records[0].program: missing"),
    ({"runs": [{**RUN, "records": [{**REC, "tasks": "3"}]}]}, "runs[0].records[0].tasks: expected an integer >= 0"),
    ({"runs": [{**RUN, "records": [{**REC, "extra": 1}]}]}, "runs[0].records[0].extra: unknown field"),
    ({"runs": [{**RUN, "records": [{**REC, "maps_local": [1, 2]}]}]}, "runs[0].records[0].maps_local: expected []"),
    ({"runs": [{**RUN, "queue_shares": [{"queue": "a"}]}]}, "runs[0].queue_shares[0].configured: missing"),
], ids=["no-runs", "no-spec", "not-a-run", "capacity", "records", "no-program", "tasks", "unknown", "maps-local",
        "queue-shares"])
def test_an_incomplete_bench_json_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: dict[str, Any],
                                              message: str) -> None:
    f = tmp_path / "bench.json"
    f.write_text(json.dumps(doc))
    code, out, err = _bench(capsys, "report", str(f))
    assert code == 2 and out == "" and err.startswith(f"error: {f}: {message}") and err.count("\n") == 1, err
    f.write_text(json.dumps({"runs": [RUN]}))
    assert _bench(capsys, "report", str(f))[0] == 0


@pytest.mark.parametrize("hive,message", [
    ("{tmp}/nonexist", "--hive {tmp}/nonexist: no such file"),
    ("{tmp}", "--hive {tmp}: not an executable file"),
    ("no-such-hive-cli", "--hive no-such-hive-cli: no such command on PATH; give its path"),
    # the job starts it with no ~ expansion: "--hive=~/bin/hive" passed the check, then Popen raised
    ("~/../../bin/sh", "--hive ~/../../bin/sh: no such file (from {tmp}, where it runs)"),
])
def test_a_hive_that_cannot_run_is_refused_before_the_cluster_is_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                      hive: str, message: str) -> None:
    (tmp_path / "sample-queries-tpcds").mkdir()
    (tmp_path / "sample-queries-tpcds" / "query3.sql").write_text("select 1;\n")
    asked: list[str] = []

    class Watched(SuiteRM):
        def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
            asked.append(path)
            return super().answer(path)

    rm = Watched({})
    try:
        code, _, err = _bench(capsys, "tpcds", "--home", str(tmp_path), "--queries", "3", "--database", "d", "--hive",
                              hive.format(tmp=tmp_path), "--rm", rm.url, "--label", "x", "--out", str(tmp_path / "out"))
    finally:
        rm.stop()
    assert code == 2 and err == f"error: {message.format(tmp=tmp_path)}\n"
    assert asked == [] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv,message", [
    (["hibench", "--home", "{tmp}", "--workloads", "micro/nope", "--rm", "http://127.0.0.1:1", "--label", "x"],
     "no such HiBench run script"),
    (["tpcds", "--home", "{tmp}", "--queries", "99", "--database", "d", "--rm", "http://127.0.0.1:1", "--label", "x"],
     "no such hive-testbench query"),
    (["mr", "--scheduler", "native-bogus"], "unknown stock scheduler 'native-bogus'"),
    (["mr", "--scheduler", "dress,dress"], "--scheduler: give distinct schedulers"),
    (["mr", "--spec", "nope"], "no such file or built-in bench"),
    ([], "bench: give a backend"),
])
def test_bad_bench_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                     message: str) -> None:
    code, _, err = _bench(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_unreachable_rm_fails_before_any_benchmark_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = _fake_hibench(tmp_path / "HiBench", {"micro/wordcount": []})
    code, _, err = _bench(capsys, "hibench", "--home", str(tmp_path / "HiBench"), "--workloads", "micro/wordcount",
                          "--rm", "http://127.0.0.1:1", "--label", "x")
    assert code == 2 and "no ResourceManager answered" in err
    assert not calls.exists()


def test_records_become_the_simulate_report() -> None:
    recs = [AppRecord("a", "sleep", "app_a", "u", "q", T0, T0 + 2000, T0 + 10_000, "SUCCEEDED", 3, 8192 * 5, 10, "history"),
            AppRecord("b", "pi", "app_b", "u", "q", T0 + 1000, T0 + 5000, T0 + 9000, "KILLED", 2, 0, 0, "am")]
    r = result("fifo", recs, 8192, 8)
    assert [(j.id, j.wait_s, j.completion_s, j.state) for j in r.jobs] == [("a", 2.0, 10.0, "succeeded"),
                                                                         ("b", 4.0, None, "killed")]
    assert r.makespan_s is None and r.failed == 1 and r.avg_completion_s == 10.0
    assert r.utilization["memory"] == pytest.approx(8192 * 5 / (8192 * 10))  # MB-seconds over the 10 s span


def test_application_ids_in_client_output() -> None:
    text = ("Submitted application application_1795326552648_0003\n"
            "Running job: job_1795326552648_0003\nStarting Job = job_1795326552648_0004, Tracking URL")
    assert app_ids_in(text) == ["application_1795326552648_0003", "application_1795326552648_0004"]


def test_combine_is_first_submit_to_last_finish_and_fails_if_any_failed() -> None:
    a = AppRecord("q", "tpcds", "a1", "u", "q", T0, T0 + 500, T0 + 4000, "SUCCEEDED", 2, 10, 1, "history")
    b = AppRecord("q", "tpcds", "a2", "u", "q", T0 + 4100, T0 + 4200, T0 + 9000, "FAILED", 3, 20, 2, "history")
    c = combine("query9", "tpcds", [a, b])
    assert (c.submit_ms, c.finish_ms, c.final_status, c.tasks, c.memory_seconds) == (T0, T0 + 9000, "FAILED", 5, 30)


def test_suite_builders_need_the_real_layout(tmp_path: Path) -> None:
    _fake_hibench(tmp_path, {"micro/sort": []})
    jobs = hibench_jobs(tmp_path, ["micro/sort"], interval_s=5.0)
    assert jobs[0].command == ("bash", str(tmp_path / "bin/workloads/micro/sort/hadoop/run.sh"))
    assert jobs[0].prepare == ("bash", str(tmp_path / "bin/workloads/micro/sort/prepare/prepare.sh"))
    (tmp_path / "sample-queries-tpcds").mkdir()
    (tmp_path / "sample-queries-tpcds" / "query19.sql").write_text("select 1;")
    q = tpcds_jobs(tmp_path, ["19"], "db", interval_s=2.0)
    assert q[0].id == "query19" and q[0].command[-1].endswith("query19.sql")


def test_hibench_conf_is_the_checkouts_conf_then_the_clusters_hadoop_conf_then_overrides(tmp_path: Path) -> None:
    home = tmp_path / "HiBench"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "hibench.conf").write_text("hibench.scale.profile large\n")
    (home / "conf" / "hadoop.conf").write_text("hibench.hadoop.home /elsewhere\n")
    (home / "conf" / "hadoop.conf.template").write_text("not read by HiBench\n")
    dest = tmp_path / "out" / "conf"
    dest.mkdir(parents=True)
    (dest / "stale.conf").write_text("from a previous run\n")
    hibench_conf(home, dest, hadoop_home=tmp_path / "cluster" / "hadoop", default_fs="hdfs://127.0.0.1:9000",
                 overrides={"hibench.scale.profile": "tiny"})
    # HiBench reads the folder's *.conf in name order, a later value winning: yarnctl.conf comes last
    assert sorted(p.name for p in dest.glob("*.conf")) == ["hadoop.conf", "hibench.conf", "yarnctl.conf"]
    hadoop = (dest / "hadoop.conf").read_text()
    assert f"hibench.hadoop.home {tmp_path}/cluster/hadoop\n" in hadoop and "hibench.hdfs.master hdfs://127.0.0.1:9000\n" in hadoop
    assert (dest / "hibench.conf").read_text() == "hibench.scale.profile large\n"
    assert (dest / "yarnctl.conf").read_text().splitlines()[-1] == "hibench.scale.profile tiny"
    with pytest.raises(ConfigError, match="not a HiBench checkout"):
        hibench_conf(tmp_path / "nothing", dest)


def _fake_python2(d: Path, code: int) -> None:
    d.mkdir(parents=True)
    (d / "python2").write_text(f"#!/bin/sh\nexit {code}\n")
    (d / "python2").chmod(0o755)


def test_python2_is_a_working_one_on_path_else_the_unpacked_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-in interpreters: one that runs, one that fails as a pyenv shim does without a 2.x selected."""
    _fake_python2(tmp_path / "works", 0)
    _fake_python2(tmp_path / "shim", 127)
    _fake_python2(tmp_path / "home" / "bin", 0)  # unpacked before: python2.sh does not run again
    monkeypatch.setenv("PATH", f"{tmp_path / 'works'}:/usr/bin:/bin")
    assert python2(tmp_path / "home") is None  # PATH stays as it is
    monkeypatch.setenv("PATH", f"{tmp_path / 'shim'}:/usr/bin:/bin")
    said: list[str] = []
    assert python2(tmp_path / "home", say=said.append) == tmp_path / "home" / "bin" and said == []


class BadMirror(HttpStub):
    """A Debian mirror whose InRelease is not signed by Debian's archive key (a fault injected)."""

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "text/plain"}, b"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nforged\n"


def test_python2_sh_refuses_an_unsigned_archive_and_wants_a_destination(tmp_path: Path) -> None:
    mirror = BadMirror()
    try:
        r = subprocess.run(["sh", str(PYTHON2_SH), str(tmp_path / "py2")], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "DEBIAN_MIRROR": mirror.url})
    finally:
        mirror.stop()
    assert r.returncode == 1 and r.stderr.strip() == f"python2.sh: {mirror.url}/dists/bullseye/InRelease: bad signature"
    assert not (tmp_path / "py2" / "bin" / "python2").exists()
    r = subprocess.run(["sh", str(PYTHON2_SH)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == "usage: python2.sh DEST"


def test_bench_hibench_needs_a_cluster_and_a_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fake_hibench(tmp_path, {"micro/wordcount": []})
    base = ["hibench", "--home", str(tmp_path), "--workloads", "micro/wordcount"]
    code, _, err = _bench(capsys, *base)
    assert code == 2 and err.startswith("error: bench hibench: say which cluster: --scheduler")
    code, _, err = _bench(capsys, *base, "--rm", "http://127.0.0.1:1")
    assert code == 2 and err.strip() == "error: bench hibench: --label names the scheduler of this run (e.g. capacity)"
    code, _, err = _bench(capsys, *base, "--cluster", str(tmp_path / "none"))
    assert code == 2 and err.startswith(f"error: no cluster in {tmp_path / 'none'}")
    code, _, err = _bench(capsys, *base, "--scheduler", "native-bogus")
    assert code == 2 and "unknown stock scheduler 'native-bogus'" in err and len(err.strip().splitlines()) == 1
    code, _, err = _bench(capsys, *base, "--scheduler", "dress", "--label", "x")
    assert code == 2 and err.startswith("error: bench hibench: --label goes with --rm or --yarn-site")
    code, _, err = _bench(capsys, *base, "--rm", "http://127.0.0.1:1", "--label", "x", "--nodes", "3")
    assert code == 2 and err.startswith("error: bench hibench: --nodes and --cluster-dir shape the clusters --scheduler")


def test_bench_hibench_refuses_a_local_cluster_without_hdfs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cluster.json as `cluster up --no-hdfs` leaves it (no NameNode); nothing runs, so no daemon is needed."""
    from yarnctl.cluster.info import ClusterInfo, DaemonInfo

    _fake_hibench(tmp_path, {"micro/wordcount": []})
    d = DaemonInfo("resourcemanager", 1, tmp_path / "rm.log", tmp_path / "rm.out", "http://127.0.0.1:1", {"webapp": 1})
    info = ClusterInfo(dir=tmp_path / "c", rm_url="http://127.0.0.1:1", conf_dir=tmp_path / "conf",
                       classpath_file=tmp_path / "cp.txt", java_home="/jdk", scheduler_class="X", policy="fifo",
                       native=None, rm=d, nodes=(), serve=None, history=None, token_file=None, decision_log=None,
                       status_file=None, shim_jar=None, jars={}, nm_memory_mb=4096, nm_vcores=4, started_at=1.0)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "cluster.json").write_text(json.dumps(info.to_json()))
    code, _, err = _bench(capsys, "hibench", "--home", str(tmp_path), "--workloads", "micro/wordcount",
                          "--cluster", str(tmp_path / "c"))
    assert code == 2 and err.startswith(f"error: the cluster in {tmp_path / 'c'} runs no HDFS (started with --no-hdfs)")
