"""HDFS on the local cluster, live: `yarnctl bench mr --hdfs` puts a text input into HDFS and runs two
wordcounts on it under the shim with Python `fifo`; each NodeManager and its DataNode go by a loopback
address of their own, so the maps' node-local asks name YARN nodes, reach the policy over the wire, and
the jobs count their maps data-local, rack-local and off-switch (Hadoop's JobCounter, from the job
history the bench fetched from HDFS)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from yarnctl.bridge.decisionlog import LogReader

pytestmark = pytest.mark.integration

SPEC = """\
name: hdfs-wordcount
description: "two wordcounts over 4 files on HDFS"
cluster: {nodes: 2, nm_memory_mb: 8192, nm_vcores: 16}
schedule: {interval_s: 5}
inputs:
  - text: {path: text, files: 4, mb: 4}
jobs:
  - {id: w1, program: wordcount, args: ["{work}/text", "{work}/wordcount-{id}"]}
  - {id: w2, program: wordcount, args: ["{work}/text", "{work}/wordcount-{id}"]}
"""


def test_wordcount_on_hdfs_reports_map_locality_and_its_asks_reach_the_policy(tmp_path: Path) -> None:
    spec, out = tmp_path / "spec.yaml", tmp_path / "out"
    spec.write_text(SPEC)
    proc = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "bench", "mr", "--spec", str(spec), "--hdfs",
                           "--scheduler", "fifo", "--cluster-dir", str(tmp_path / "cluster"), "--out", str(out),
                           "--no-plots"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout)
    (run,) = json.loads((out / "bench.json").read_text())["runs"]
    assert [r["final_status"] for r in run["records"]] == ["SUCCEEDED", "SUCCEEDED"]
    for r in run["records"]:
        # one map per 1 MB file, each counted data-local or rack-local (one rack: never off-switch); more than
        # four when MapReduce launched a speculative attempt, as it may on a loaded machine
        assert len(r["maps_local"]) == 3 and sum(r["maps_local"]) >= 4 and r["maps_local"][2] == 0, r
    assert "maps data-local / rack-local / off-switch" in " ".join(proc.stdout.split())  # rich wraps titles
    assert re.search(r"w1\W+\d+/\d+/0 \(\d+%\)", proc.stdout) and re.search(r"all\W+\d+/\d+/0 \(\d+%\)", proc.stdout)
    assert len(list((out / "work" / "fifo" / "history").glob("*.jhist"))) == 2  # fetched from HDFS before `down`

    # Python saw the nodes by their own addresses and the maps' asks by DataNode host, with the rack
    # the copy was taken while the server ran: LogReader ends at a cut-off last line
    reqs = [r["req"] for r in LogReader(out / "work" / "fifo" / "decisions.jsonl") if "req" in r]
    # (a node that registers after the first call comes in a delta's `nodes`, not in a full sync)
    nodes = {n[0].rsplit(":", 1)[0] for r in reqs if r for n in r.get("nodes", [])}
    assert nodes == {"127.0.1.1", "127.0.1.2"}, nodes
    named = {loc[0] for r in reqs if r for a in r.get("asks", []) for loc in (a[6] or [])}
    # the NameNode places each block on a DataNode at random (both registered from 127.0.0.1, the writer's
    # address): usually both hosts are named, all four blocks on one in 1 run of 8
    assert "/default-rack" in named and named & {"127.0.1.1", "127.0.1.2"}, named
