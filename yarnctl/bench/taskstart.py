"""Where a MapReduce task's start-up goes, read from its container's syslog (Hadoop 2.7.7's YarnChild).

The job history says when a task attempt's container was launched and when it finished; between the
two the task JVM starts, asks its AM for its task over the umbilical, loads its job's configuration
and runs. YarnChild logs each step, so the container's own log splits the start-up into:
- `jvm_ms`: the first line it logs (the JVM is up and log4j configured; before it: localisation and
  the JVM's own start);
- `task_ms`: the AM has handed it its task (`mapreduce.cluster.local.dir for child`, logged right after
  YarnChild's getTask loop);
- `work_ms`: the task's own work begins (a map's `Processing split`, a reduce's shuffle plugin);
- `done_ms`: the task is done (`Task '<attempt>' done.`, logged after its AM took the done call, so
  up to tens of ms after the finish the job history records; a container the AM stops first has none).
Times are ms since the epoch, read in this machine's time zone: the local cluster's JVMs run here with
its environment. An uber job's tasks run inside the AM and have no steps.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

log = logging.getLogger(__name__)

_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
_TASK = "mapreduce.cluster.local.dir for child"
_WORK = ("org.apache.hadoop.mapred.MapTask: Processing split", "Using ShuffleConsumerPlugin")
_DONE = re.compile(r"Task '(attempt_\S+)' done\.")
FILE = "task-startup.json"  # what `keep` writes into a run's work directory


@dataclass(frozen=True, slots=True)
class TaskStart:
    """One task JVM's steps, ms since the epoch (0: the log never reached that step)."""

    container_id: str
    attempt_id: str
    jvm_ms: int
    task_ms: int
    work_ms: int
    done_ms: int


def _ms(stamp: str) -> int:
    return int(datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000)


def read(container_id: str, lines: Iterable[str]) -> TaskStart | None:
    """The steps in one container's syslog lines, or None when it is not a task JVM's (an AM's, or empty)."""
    jvm = task = work = done = 0
    attempt = ""
    for line in lines:
        m = _STAMP.match(line)
        if m is None:
            continue  # a continuation line (counters, a stack trace)
        if "MRAppMaster" in line and not jvm:
            return None  # the job's AM, not a task
        if not jvm:
            jvm = _ms(m.group(1))
        if not task and _TASK in line:
            task = _ms(m.group(1))
        elif not work and any(w in line for w in _WORK):
            work = _ms(m.group(1))
        elif not done and (d := _DONE.search(line)) is not None:
            done, attempt = _ms(m.group(1)), d.group(1)
            break  # the rest is the JVM shutting down; a task's log has no size limit
    if not task:
        return None  # never a task: an AM whose first line did not name it, or a JVM that died starting
    return TaskStart(container_id, attempt, jvm, task, work, done)


def _dirs(parent: Path, prefix: str) -> list[Path]:
    """`parent`'s subfolders named `prefix`*, sorted; none when it is gone (a NodeManager cleans up as it likes)."""
    try:
        with os.scandir(parent) as entries:
            return sorted(Path(e.path) for e in entries if e.name.startswith(prefix) and e.is_dir())
    except OSError:
        return []


def scan(cluster_dir: Path) -> Iterator[TaskStart]:
    """Every task container's steps under the local cluster's NodeManager log dirs (nm-*/logs)."""
    for nm in _dirs(cluster_dir, "nm-"):
        for app in _dirs(nm / "logs", "application_"):
            for container in _dirs(app, "container_"):
                try:
                    with (container / "syslog").open(errors="replace") as f:
                        found = read(container.name, f)
                except OSError:
                    continue  # none yet, or cleaned up meanwhile: the attempt simply has no steps
                if found is not None:
                    yield found


def keep(cluster_dir: Path, dest: Path) -> int:
    """Write every task container's steps into `dest`/task-startup.json before `down` clears the logs; how many."""
    found = [asdict(s) for s in scan(cluster_dir)]
    dest.mkdir(parents=True, exist_ok=True)
    part = dest / (FILE + ".part")
    part.write_text(json.dumps(found, indent=0) + "\n")
    part.replace(dest / FILE)  # whole or not at all
    return len(found)


def load(work: Path) -> dict[str, TaskStart]:
    """What `keep` wrote into `work`, by container id (empty, with a warning, when it is missing or unreadable)."""
    path = work / FILE
    if not path.is_file():
        return {}
    try:
        return {d["container_id"]: TaskStart(**d) for d in json.loads(path.read_text())}
    except (OSError, ValueError, TypeError, KeyError) as e:
        log.warning("%s: not a task start-up file (%s); the tasks' steps are left blank", path, e)
        return {}
