"""A Hadoop-install stand-in over a running local cluster, for following docs/deploy.md literally.

docs/deploy.md is written for a Hadoop tarball install: `$HADOOP_HOME/sbin/yarn-daemon.sh
stop|start resourcemanager`, `$HADOOP_HOME/bin/yarn jar ...`, jars in `share/hadoop/yarn/lib`,
`yarn-env.sh` in the conf dir. The local cluster has none of that, so this module writes a
HADOOP_HOME whose two scripts do what Hadoop's do, through docker/bin/yarnctl-daemon: the RM is
restarted with `share/hadoop/yarn/lib/*` on its classpath and `$YARN_RESOURCEMANAGER_OPTS` from
`yarn-env.sh`, as Hadoop's scripts would; `yarn jar` runs RunJar with the cluster's classpath.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from yarnctl.cluster.local import ClusterInfo

YARN_DAEMON = """#!/bin/sh
# stand-in for Hadoop 2.7's sbin/yarn-daemon.sh: (start|stop) resourcemanager
set -eu
[ "$#" -eq 2 ] && [ "$2" = resourcemanager ] || {{ echo "usage: yarn-daemon.sh start|stop resourcemanager" >&2; exit 2; }}
pidfile={pidfile}
if [ -f "$HADOOP_CONF_DIR/yarn-env.sh" ]; then . "$HADOOP_CONF_DIR/yarn-env.sh"; fi
case $1 in
  stop)
    pid=$(cat "$pidfile")
    echo "stopping resourcemanager"
    kill "$pid" 2>/dev/null || true
    i=0
    # the RM `cluster up` started is the test's child: once it has exited it stays a zombie until reaped
    while kill -0 "$pid" 2>/dev/null && ! ps -o stat= -p "$pid" | grep -q Z; do
      i=$((i + 1)); [ "$i" -lt 300 ] || {{ kill -9 "$pid"; break; }}
      sleep 0.1
    done
    rm -f "$pidfile" ;;
  start)
    echo "starting resourcemanager, logging to {log_dir}/resourcemanager.log"
    HADOOP_CONF_DIR=$HADOOP_CONF_DIR YARNCTL_CLASSPATH_FILE={cp_file} JAVA_HOME={java_home} \\
      YARNCTL_LOG_DIR={log_dir} YARNCTL_DAEMON_NAME=resourcemanager \\
      YARNCTL_EXTRA_CLASSPATH="$HADOOP_HOME/share/hadoop/yarn/lib/*" \\
      YARNCTL_JAVA_OPTS="${{YARN_RESOURCEMANAGER_OPTS:-}}" \\
      setsid {daemon} resourcemanager >>{log_dir}/resourcemanager.out 2>&1 </dev/null &
    echo $! >"$pidfile" ;;
  *) exit 2 ;;
esac
"""

YARN = """#!/bin/sh
# stand-in for Hadoop 2.7's bin/yarn: only `yarn jar JAR [MAIN] ARGS...`
set -eu
[ "${{1:-}}" = jar ] || {{ echo "stand-in: only 'yarn jar' is here" >&2; exit 2; }}
shift
HADOOP_CONF_DIR=$HADOOP_CONF_DIR YARNCTL_CLASSPATH_FILE={cp_file} JAVA_HOME={java_home} YARNCTL_LOG_DIR={log_dir} \\
  YARNCTL_DAEMON_NAME=client exec {daemon} client org.apache.hadoop.util.RunJar "$@"
"""


def make_hadoop_home(home: Path, info: ClusterInfo, daemon_script: Path) -> Path:
    """Write the stand-in install into `home` for the cluster `info`; return `home`."""
    q = {"cp_file": shlex.quote(str(info.classpath_file)), "java_home": shlex.quote(info.java_home),
         "log_dir": shlex.quote(str(info.dir / "logs")), "daemon": shlex.quote(str(daemon_script)),
         "pidfile": shlex.quote(str(home / "pids" / "yarn-resourcemanager.pid"))}
    for d in ("sbin", "bin", "pids", "share/hadoop/yarn/lib", "share/hadoop/mapreduce"):
        (home / d).mkdir(parents=True, exist_ok=True)
    (home / "pids" / "yarn-resourcemanager.pid").write_text(f"{info.rm.pid}\n")
    for path, text in (("sbin/yarn-daemon.sh", YARN_DAEMON), ("bin/yarn", YARN)):
        (home / path).write_text(text.format(**q))
        (home / path).chmod(0o755)
    (home / "share/hadoop/mapreduce/hadoop-mapreduce-examples-2.7.7.jar").symlink_to(info.jars["examples"])
    return home


def rm_pid(home: Path) -> int | None:
    """The pid of the RM the stand-in started last, if it recorded one."""
    try:
        return int((home / "pids" / "yarn-resourcemanager.pid").read_text())
    except (OSError, ValueError):
        return None
