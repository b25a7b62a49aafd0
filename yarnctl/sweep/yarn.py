"""The YARN executor: a sweep's cells as a map-only Hadoop streaming job on the local cluster (`yarnctl cluster up`).

Each map task gets `cells_per_task` cells (NLineInputFormat) and runs `python -m yarnctl.sweep.task`
on them; results come back as the job's output files. The Python that runs the cells is this
interpreter (every NodeManager of the local cluster shares this machine), or the `bin/python` of
an archive shipped through the distributed cache (`python_archive`, e.g. made by venv-pack), as a
multi-host cluster needs. Input and output live under OUT/yarn on the default filesystem
(file:// on the local cluster).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from yarnctl.cluster.daemons import app_ids
from yarnctl.errors import ConfigError
from yarnctl.sweep.executors import Done, _why
from yarnctl.sweep.spec import Cell, RunOptions
from yarnctl.sweep.task import encode

STREAMING = "org.apache.hadoop.streaming.HadoopStreaming"


def run_yarn(tasks: Sequence[tuple[str, Cell]], options: RunOptions, done: Done, out: Path, *,
             cluster_dir: Path | None = None, python_archive: Path | None = None, cells_per_task: int = 1,
             timeout_s: float = 24 * 3600.0) -> None:
    """Run the cells as one streaming job on the local cluster in `cluster_dir` (default: the one running)."""
    from yarnctl.cluster.local import LocalCluster, find_running

    lc = LocalCluster(cluster_dir) if cluster_dir else find_running()
    if lc is None or not lc.running():
        where = f" in {cluster_dir}" if cluster_dir else ""
        raise ConfigError(f"--executor yarn: no running cluster{where}; start one with `yarnctl cluster up`")
    info = lc.info()
    if "streaming" not in info.jars:
        raise ConfigError(f"--executor yarn: the cluster in {info.dir} has no hadoop-streaming jar; restart it "
                          f"(`yarnctl cluster down` and `up`) to resolve the current classpath")
    work = out.resolve() / "yarn" / time.strftime("%Y%m%d-%H%M%S")
    work.mkdir(parents=True, exist_ok=True)
    (work / "cells.jsonl").write_text("".join(encode(k, c, options) + "\n" for k, c in tasks))
    by_key = dict(tasks)
    cmd = lc.client_command(_streaming_args(work, cells_per_task, python_archive), STREAMING)
    with open(work / "client.log", "w") as log:
        proc = subprocess.Popen(cmd, env=lc.client_env(), cwd=work, stdout=log, stderr=subprocess.STDOUT)
        try:
            rc = proc.wait(timeout=timeout_s)
        except (subprocess.TimeoutExpired, KeyboardInterrupt) as e:
            proc.kill()
            killed = _kill_job(lc, work / "client.log")
            if isinstance(e, KeyboardInterrupt):
                raise
            raise ConfigError(f"the streaming job did not finish in {timeout_s:.0f} s; {killed}") from None
    seen = _collect(work / "output", by_key, done)
    if rc != 0 and not seen:
        raise ConfigError(f"the streaming job failed (exit {rc}): {_last_error(work / 'client.log')}; "
                          f"read {work / 'client.log'}")
    for key, cell in tasks:  # a job that failed part-way: what did not come back is a failed cell
        if key not in seen:
            done(key, cell, None, f"no result from the streaming job (exit {rc}); read {work / 'client.log'}")


def _streaming_args(work: Path, per_task: int, archive: Path | None) -> list[str]:
    """The HadoopStreaming arguments: generic -D options first, then the job's."""
    if per_task < 1:
        raise ConfigError(f"--cells-per-task {per_task}: give at least 1")
    python = sys.executable
    args = ["-D", "mapreduce.job.reduces=0", "-D", f"mapreduce.input.lineinputformat.linespermap={per_task}",
            "-D", "mapreduce.job.name=yarnctl sweep", "-D", "mapreduce.map.maxattempts=2",
            "-D", "mapreduce.task.timeout=3600000"]
    if archive is not None:
        if not archive.is_file():
            raise ConfigError(f"--python-archive {archive}: no such file")
        args += ["-archives", f"{archive.resolve().as_uri()}#pyenv"]
        python = "pyenv/bin/python"
    args += ["-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
             "-input", (work / "cells.jsonl").as_uri(), "-output", (work / "output").as_uri(),
             "-mapper", f"{python} -m yarnctl.sweep.task",
             # the map task's working dir is not this one: say where yarnctl is when it is not installed
             "-cmdenv", f"PYTHONPATH={Path(__file__).resolve().parents[2]}"]
    return args


def _collect(output: Path, by_key: dict[str, Cell], done: Done) -> set[str]:
    """Report every cell the job's output files hold; the keys seen."""
    seen: set[str] = set()
    for part in sorted(output.glob("part-*")) if output.is_dir() else []:
        for line in part.read_text().splitlines():
            key, _, payload = line.partition("\t")
            if key not in by_key or key in seen:
                continue  # a retried task's duplicate, or not ours
            seen.add(key)
            try:
                result = json.loads(payload)
            except ValueError as e:
                done(key, by_key[key], None, _why(e))
                continue
            done(key, by_key[key], result.get("row"), result.get("error"))
    return seen


def _kill_job(lc: Any, client_log: Path) -> str:
    """Kill the job the client submitted (it outlives its client); what was done, in words."""
    ids = app_ids(client_log.read_text(errors="replace")) if client_log.exists() else []
    if not ids:
        return "no application was submitted"
    cmd = lc.client_command(["application", "-kill", ids[-1]], "org.apache.hadoop.yarn.client.cli.ApplicationCLI")
    done = subprocess.run(cmd, env=lc.client_env(), capture_output=True, text=True, timeout=120)
    return f"killed {ids[-1]}" if done.returncode == 0 else f"could not kill {ids[-1]}: {done.stderr.strip()[-200:]}"


def _last_error(log: Path) -> str:
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if "ERROR" in ln or "Exception" in ln]
    return lines[-1][:240] if lines else "no error logged"
