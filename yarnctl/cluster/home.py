"""A Hadoop home for the local cluster: `bin/hadoop`, `bin/yarn`, `bin/hdfs`, `etc/hadoop` and the stock jar paths.

Tools written for a Hadoop installation (HiBench, scripts that call `hadoop jar` or `yarn node -list`)
find what they expect under `<cluster>/hadoop`: the bin scripts run docker/bin/hadoop with this
cluster's conf, jars and JDK; the jars are links to the Maven Central ones the cluster runs.
"""

from __future__ import annotations

import shlex
from pathlib import Path

TOOLS = ("hadoop", "yarn", "hdfs")
# where a Hadoop 2.7.7 binary tarball keeps the jars tools look for, by ClusterInfo.jars key
SHARE = {"examples": "share/hadoop/mapreduce", "jobclient-tests": "share/hadoop/mapreduce",
         "distributedshell": "share/hadoop/yarn", "streaming": "share/hadoop/tools/lib"}


def write_hadoop_home(home: Path, *, cluster_dir: Path, conf_dir: Path, classpath_file: Path, java_home: str,
                      jars: dict[str, Path], bin_dir: Path) -> Path:
    """Write (or refresh) the Hadoop home in `home` for the cluster in `cluster_dir`; return `home`."""
    q = shlex.quote
    (home / "bin").mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        script = home / "bin" / tool
        script.write_text(
            "#!/bin/sh\n"
            f"# `{tool}` for the yarnctl cluster in {str(cluster_dir)!r} (written by `yarnctl cluster up`)\n"
            "unset YARNCTL_CLASSPATH\n"
            f"export HADOOP_CONF_DIR={q(str(conf_dir))} YARNCTL_CLASSPATH_FILE={q(str(classpath_file))}\n"
            f"export JAVA_HOME={q(java_home)} YARNCTL_TOOL={tool} YARNCTL_LOG_DIR={q(str(cluster_dir / 'logs'))}\n"
            # -Dyarnctl.cluster.dir marks the client as this cluster's (`down` stops it too); its own
            # variable, as YARNCTL_JAVA_OPTS is split on spaces
            f"export YARNCTL_CLUSTER_DIR={q(str(cluster_dir))} YARNCTL_JAVA_OPTS=-XX:TieredStopAtLevel=1\n"
            f"exec {q(str(bin_dir / 'hadoop'))} \"$@\"\n")
        script.chmod(0o755)
    _link(home / "etc" / "hadoop", conf_dir)
    for key, sub in SHARE.items():
        if key in jars:
            _link(home / sub / jars[key].name, jars[key])
    return home


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)
