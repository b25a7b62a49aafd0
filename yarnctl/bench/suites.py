"""The `hibench` and `tpcds` backends: drive an existing HiBench or hive-testbench checkout against a running cluster.

Each benchmark is a shell command (HiBench's `bin/workloads/<cat>/<wl>/<framework>/run.sh`, or
`hive -f <query>.sql` from hive-testbench) started at its submit offset. The YARN applications it
ran are the application/job ids its output names; their outcome is read from the RM, never from
the suite's own report (HiBench writes a `hibench.report` line even for a failed job).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from yarnctl.bench.collect import AppRecord, missing, record
from yarnctl.errors import ConfigError, RMError
from yarnctl.rm import HistoryServer, ResourceManager

_IDS = re.compile(r"\b(?:application|job)_(\d{10,})_(\d{4,})\b")

Say = Callable[[str], None]
PYTHON2_SH = Path(__file__).with_name("python2.sh")  # HiBench's bin/functions/*.py are Python 2 only


@dataclass(frozen=True, slots=True)
class SuiteJob:
    """One benchmark of a suite: the command that runs it, where, and when it is submitted."""

    id: str
    command: tuple[str, ...]
    cwd: Path
    submit_s: float
    prepare: tuple[str, ...] = ()  # run before the schedule starts, untimed; () when none


def hibench_jobs(home: Path, workloads: Sequence[str], framework: str = "hadoop", interval_s: float = 5.0,
                 prepare: bool = True) -> list[SuiteJob]:
    """HiBench's `<category>/<workload>` run scripts (and prepare scripts) in `home`, one every `interval_s`."""
    jobs = []
    for i, wl in enumerate(workloads):
        base = home / "bin" / "workloads" / wl
        run = base / framework / "run.sh"
        if not run.is_file():
            raise ConfigError(f"{run}: no such HiBench run script (workloads are <category>/<name>, e.g. micro/wordcount)")
        prep = base / "prepare" / "prepare.sh"
        if prepare and not prep.is_file():
            raise ConfigError(f"{prep}: no such HiBench prepare script (pass --skip-prepare if the data exists)")
        jobs.append(SuiteJob(wl.replace("/", "-"), ("bash", str(run)), home, i * interval_s,
                             ("bash", str(prep)) if prepare else ()))
    return jobs


def hibench_conf_source(home: Path) -> Path:
    """The checkout's conf dir; ConfigError when `home` is not a HiBench checkout."""
    src = home / "conf"
    if not (src / "hibench.conf").is_file():
        raise ConfigError(f"{src / 'hibench.conf'}: not a HiBench checkout (no conf/hibench.conf)")
    return src


def hibench_conf(home: Path, dest: Path, *, hadoop_home: Path | None = None, default_fs: str = "",
                 overrides: dict[str, str] | None = None) -> Path:
    """A HiBench conf folder (HIBENCH_CONF_FOLDER) in `dest`: the checkout's conf, a cluster's hadoop.conf, `overrides` last."""
    # HiBench reads every *.conf of the folder in name order, a later value winning: yarnctl.conf is last
    src = hibench_conf_source(home)
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.conf"):
        old.unlink()
    for f in sorted(src.glob("*.conf")):
        shutil.copy2(f, dest / f.name)
    if hadoop_home is not None:
        (dest / "hadoop.conf").write_text(
            "# written by yarnctl bench hibench: the local cluster's Hadoop home and HDFS\n"
            f"hibench.hadoop.home {hadoop_home}\n"
            "hibench.hadoop.executable ${hibench.hadoop.home}/bin/hadoop\n"
            "hibench.hadoop.configure.dir ${hibench.hadoop.home}/etc/hadoop\n"
            f"hibench.hdfs.master {default_fs}\n"
            "hibench.hadoop.release apache\n")
    if overrides:
        (dest / "yarnctl.conf").write_text("# written by yarnctl bench hibench: these win over the files before\n"
                                           + "".join(f"{k} {v}\n" for k, v in sorted(overrides.items())))
    return dest


def python2(home: Path, say: Say = lambda s: None) -> Path | None:
    """The directory to put first on PATH for HiBench's `python2`: None when one runs from PATH, else one unpacked under `home`."""
    found = shutil.which("python2")
    # a pyenv shim is on PATH without a 2.x selected: it exists but does not run
    if found and subprocess.run([found, "-c", "import urllib, socket"], capture_output=True).returncode == 0:
        return None
    if not (home / "bin" / "python2").exists():
        say(f"HiBench's scripts need python2 (none runs from PATH): unpacking Debian 11's python2.7 into {home}")
    # python2.sh returns at once when the unpacked interpreter runs, and repairs it when it does not
    done = subprocess.run(["sh", str(PYTHON2_SH), str(home)], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ConfigError(f"no python2 for HiBench's scripts: {PYTHON2_SH.name} failed: {last}")
    return home / "bin"


def tpcds_jobs(testbench: Path, queries: Sequence[str], database: str, hive: str = "hive",
               interval_s: float = 5.0) -> list[SuiteJob]:
    """hive-testbench TPC-DS queries (`sample-queries-tpcds/queryN.sql`) against `database`, one every `interval_s`."""
    jobs = []
    for i, q in enumerate(queries):
        name = q if q.startswith("query") else f"query{q}"
        sql = testbench / "sample-queries-tpcds" / f"{name}.sql"
        if not sql.is_file():
            raise ConfigError(f"{sql}: no such hive-testbench query")
        settings = testbench / "sample-queries-tpcds" / "testbench.settings"
        init = ("-i", str(settings)) if settings.is_file() else ()
        jobs.append(SuiteJob(name, (hive, *init, "--database", database, "-f", str(sql)), testbench, i * interval_s))
    return jobs


def check_program(program: str, cwd: Path, flag: str) -> None:
    """ConfigError naming `flag` unless `program` runs from `cwd`: an executable file there, or a command on PATH."""
    if os.sep not in program:
        if shutil.which(program) is None:
            raise ConfigError(f"{flag} {program}: no such command on PATH; give its path")
        return
    # a relative path runs from cwd, as the job will start it; no ~ expansion, as the job gets none
    path = cwd / program
    where = "" if Path(program).is_absolute() else f" (from {cwd}, where it runs)"
    if not path.exists():
        raise ConfigError(f"{flag} {program}: no such file{where}")
    if not path.is_file() or not os.access(path, os.X_OK):
        raise ConfigError(f"{flag} {program}: not an executable file{where}")


def app_ids_in(text: str) -> list[str]:
    """Application ids named in a client's output (job_ ids are mapped to application_), first-seen order."""
    seen: dict[str, None] = {}
    for ts, seq in _IDS.findall(text):
        seen.setdefault(f"application_{ts}_{seq}", None)
    return list(seen)


def combine(job_id: str, program: str, records: Sequence[AppRecord]) -> AppRecord:
    """One benchmark that ran several applications: first submit to last finish; succeeded only if all did."""
    ok = all(r.final_status == "SUCCEEDED" for r in records)
    worst = next((r.final_status for r in records if r.final_status != "SUCCEEDED"), "SUCCEEDED")
    starts = [r.first_task_ms for r in records if r.first_task_ms]
    return replace(records[0], job_id=job_id, program=program, app_id=",".join(r.app_id for r in records),
                   submit_ms=min(r.submit_ms for r in records), first_task_ms=min(starts) if starts else 0,
                   finish_ms=max(r.finish_ms for r in records) if all(r.finish_ms for r in records) else 0,
                   final_status="SUCCEEDED" if ok else worst, tasks=sum(r.tasks for r in records),
                   memory_seconds=sum(r.memory_seconds for r in records),
                   vcore_seconds=sum(r.vcore_seconds for r in records))


def run(jobs: Sequence[SuiteJob], rm: ResourceManager, history: HistoryServer | None, logs: Path, *,
        program: str, timeout_s: float = 7200.0, say: Say = lambda s: None,
        env: dict[str, str] | None = None) -> list[AppRecord]:
    """Prepare, then start each job's command on schedule, wait for all, and read its applications from the RM."""
    logs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **(env or {})}
    for job in jobs:
        if job.prepare:
            say(f"{job.id}: preparing ({' '.join(job.prepare)})")
            with (logs / f"{job.id}.prepare.log").open("wb") as out:
                code = subprocess.call(job.prepare, cwd=job.cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
            if code != 0:
                raise ConfigError(f"{job.id}: prepare exited {code}; see {logs / (job.id + '.prepare.log')}")
    procs: list[tuple[SuiteJob, subprocess.Popen[bytes], Path, int]] = []
    t0 = time.monotonic()
    for job in jobs:
        delay = t0 + job.submit_s - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        log = logs / f"{job.id}.log"
        with log.open("wb") as out:
            procs.append((job, subprocess.Popen(job.command, cwd=job.cwd, env=env, stdout=out,
                                                stderr=subprocess.STDOUT), log, int(time.time() * 1000)))
        say(f"t={time.monotonic() - t0:5.1f} s started {job.id}")
    records = []
    for job, proc, log, submit_ms in procs:
        try:
            code = proc.wait(timeout=max(1.0, t0 + timeout_s - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        ids = app_ids_in(log.read_text(errors="replace"))
        found = []
        for app_id in ids:
            try:
                found.append(record(job.id, program, rm.app(app_id), rm, history))
            except RMError as e:
                say(f"{job.id}: {app_id}: {e}")
        if not found:
            say(f"{job.id}: no YARN application found (exit {code}); see {log}")
            records.append(missing(job.id, program, submit_ms))
            continue
        rec = combine(job.id, program, found)
        if code != 0 and rec.final_status == "SUCCEEDED":
            rec = replace(rec, final_status="FAILED")  # the benchmark failed after its applications ended
        if rec.final_status != "SUCCEEDED":
            say(f"{job.id}: {rec.final_status} (exit {code}); see {log}")
        records.append(rec)
    return records
