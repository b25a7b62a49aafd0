"""`yarnctl sls` end to end: Hadoop 2.7.7's Scheduler Load Simulator (hadoop-sls from Maven Central) replays
the shipped sls-short trace under the stock FifoScheduler and under the shim with Python fifo (about 65 s
each: SLS runs in wall-clock time), and the report carries real jobs, handle times and the overhead ratio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


@pytest.mark.long  # make test-long: SLS runs in wall-clock time; the queue-tree test below runs it in make test
def test_sls_runs_the_short_trace_native_and_shim(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "sls", "--trace", "sls-short",
                           "--scheduler", "native-fifo,fifo", "--out", str(out), "--no-plots", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    results = doc["results"]
    assert list(results) == ["native-fifo", "fifo"]
    for name, r in results.items():
        assert (len(r["jobs"]), r["failed"], r["unfinished"]) == (8, 0, 0), (name, r["jobs"])
        assert all(j["state"] == "succeeded" and 0 <= j["wait_s"] < j["completion_s"] for j in r["jobs"]), name
        st = r["stats"]
        assert st["containers"] == 8 + 47, name      # one AM container per job + every task of the trace
        assert st["node_updates"] > 100, name        # 4 nodes heartbeating every second for about a minute
        assert 0 < st["node_update_ms"] < 100, name  # SLS's own timer, mean over the whole run
        assert st["containers_per_sched_s"] > 0 and st["timing_exact"] == 1.0, name
        assert st["peak_running_containers"] == 16, name  # 4 nodes x 4 vcores, one-vcore containers
    shim = results["fifo"]["stats"]
    assert shim["policy_ok"] > 0 and shim["policy_errors"] == 0
    assert shim["containers_by_policy"] == shim["containers"]  # Python placed every container, no fallback
    ratio = doc["overhead"]["fifo"]
    assert ratio["handle_time_ratio"] == pytest.approx(shim["node_update_ms"] / results["native-fifo"]["stats"]["node_update_ms"])
    assert ratio["handle_time_ratio"] > 0 and ratio["throughput_ratio"] > 0
    saved = json.loads((out / "sls.json").read_text())
    assert [r["label"] for r in saved["runs"]] == ["native-fifo", "fifo"]
    assert (out / "jobs.csv").read_text().count("\n") == 1 + 16
    left = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
    assert not left, f"SLS or yarnctl serve left running: {left}"


def test_sls_gives_the_shim_an_operators_queue_tree(tmp_path: Path) -> None:
    """`--capacity-scheduler`: the RM inside SLS runs the shim on CapacityScheduler, the policy gets the tree."""
    from yarnctl.sim.workload import json_values
    from yarnctl.sls import trace_path

    # the two small jobs of the trace (2 maps each, done by 11 s), one per queue: about 30 s of SLS
    jobs = [j for j in json_values(trace_path("sls-short").read_text(), "sls-short") if len(j["job.tasks"]) == 2][:2]
    for i, j in enumerate(jobs):
        j["job.queue.name"] = "ab"[i % 2]
    trace = tmp_path / "queues.json"
    trace.write_text("\n".join(json.dumps(j) for j in jobs) + "\n")
    tree = tmp_path / "capacity-scheduler.xml"
    tree.write_text('<?xml version="1.0"?>\n<configuration>\n'
                    + "".join(f"  <property><name>yarn.scheduler.capacity.root.{k}</name><value>{v}</value></property>\n"
                              for k, v in (("queues", "a,b"), ("a.capacity", "70"), ("b.capacity", "30")))
                    + "</configuration>\n")
    work = tmp_path / "work"
    proc = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "sls", "--trace", str(trace), "--scheduler",
                           "capacity", "--capacity-scheduler", str(tree), "--work-dir", str(work), "--json"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout)["results"]["capacity"]
    assert (len(r["jobs"]), r["failed"], r["unfinished"]) == (len(jobs), 0, 0), r["jobs"]
    assert r["stats"]["policy_ok"] > 0 and r["stats"]["policy_errors"] == 0
    assert "YarnctlCapacityScheduler" in proc.stderr
    # the policy saw the operator's tree (wire v3 queue rows: name, path, parent, leaf, running, capacity, ...)
    first = json.loads((work / "capacity" / "decisions.jsonl").read_text().splitlines()[0])
    rows = {q[0]: q for q in first["req"]["queues"]}
    assert set(rows) == {"root", "a", "b"} and (rows["a"][5], rows["b"][5]) == (0.7, 0.3), rows
    # and the RM ran each job in the queue its trace named
    summary = (work / "capacity" / "sls.log").read_text()
    assert summary.count("queue=a,state=FINISHED") == 1 and summary.count("queue=b,state=FINISHED") == 1
