"""`yarnctl bench hibench --scheduler` live: a local cluster with HDFS is started for the scheduler, HiBench's
scripts find a Hadoop installation in it (`<cluster>/hadoop`: bin/hadoop, bin/yarn, etc/hadoop, the
examples jar) through the conf folder yarnctl writes, and each job's map locality comes from the
JobHistoryServer's counters.

HiBench itself cannot be fetched on a CI machine (its repository is not reachable there), so the checkout
is a stand-in in HiBench's layout: its scripts read `$HIBENCH_CONF_FOLDER` as HiBench's load_config.py
does and call the same commands HiBench's micro/wordcount does (`hadoop fs`, `hadoop jar ... wordcount`).
They also run `python2`, which HiBench's scripts need and yarnctl provides. A real HiBench run is in
docs/bench.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

# what HiBench's load_config.py would export, read the way it reads the folder: every *.conf in name order
CONF = """\
set -eu
python2 -c 'import urllib, socket'  # HiBench's bin/functions/*.py are Python 2
conf() { cat "$HIBENCH_CONF_FOLDER"/*.conf | awk -v k="$1" '$1 == k { v = $2 } END { print v }'; }
HOME_=$(conf hibench.hadoop.home)
MASTER=$(conf hibench.hdfs.master)
HADOOP="$HOME_/bin/hadoop --config $HOME_/etc/hadoop"
DATA=$MASTER/HiBench/Wordcount
"""
PREPARE = CONF + """\
echo "profile $(conf hibench.scale.profile)"
for i in 1 2 3 4; do seq 1 20000 | sed "s/^/word$i /" > "$TMPDIR_/part-$i"; done
$HADOOP fs -rm -r -f $DATA/Input
$HADOOP fs -mkdir -p $DATA/Input
$HADOOP fs -put "$TMPDIR_"/part-* $DATA/Input/
"""
RUN = CONF + """\
$HOME_/bin/yarn node -list
$HADOOP fs -du -s $DATA/Input
$HADOOP jar "$HOME_"/share/hadoop/mapreduce/hadoop-mapreduce-examples-*.jar wordcount $DATA/Input $DATA/Output
"""


def test_hibench_layout_runs_on_a_local_hdfs_cluster_under_a_paper_policy(tmp_path: Path) -> None:
    home, out = tmp_path / "HiBench", tmp_path / "out"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "hibench.conf").write_text("hibench.scale.profile large\n")
    wl = home / "bin" / "workloads" / "micro" / "wordcount"
    (wl / "prepare").mkdir(parents=True)
    (wl / "hadoop").mkdir(parents=True)
    (wl / "prepare" / "prepare.sh").write_text(PREPARE.replace("$TMPDIR_", str(tmp_path)))
    (wl / "hadoop" / "run.sh").write_text(RUN)
    proc = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "bench", "hibench", "--home", str(home),
                           "--workloads", "micro/wordcount", "--scheduler", "dress", "--profile", "tiny",
                           "--cluster-dir", str(tmp_path / "cluster"), "--out", str(out), "--no-plots"],
                          capture_output=True, text=True, timeout=900)
    print(proc.stdout, proc.stderr[-3000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    prepared = (out / "logs" / "dress" / "micro-wordcount.prepare.log").read_text()
    assert "profile tiny" in prepared  # --profile went into the conf folder, after the checkout's own
    ran = (out / "logs" / "dress" / "micro-wordcount.log").read_text()
    assert re.search(r"Total Nodes:2", ran) and "127.0.1.1:" in ran and "127.0.1.2:" in ran  # bin/yarn node -list
    (run,) = json.loads((out / "bench.json").read_text())["runs"]
    assert run["label"] == "dress"
    (rec,) = run["records"]
    assert rec["final_status"] == "SUCCEEDED" and rec["app_id"].startswith("application_")
    # four input files of one block each on HDFS: four maps (more with a speculative attempt), each data-local
    # or rack-local (one rack); read from the JobHistoryServer's counters, not from kept .jhist files
    assert len(rec["maps_local"]) == 3 and sum(rec["maps_local"]) >= 4 and rec["maps_local"][2] == 0, rec
    assert "maps data-local / rack-local / off-switch" in " ".join(proc.stdout.split())
