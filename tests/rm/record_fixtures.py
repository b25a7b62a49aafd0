"""Record real RM, NM and JobHistoryServer REST and JMX responses from the local cluster into fixtures/.

    .venv/bin/python tests/rm/record_fixtures.py            # stock FIFO cluster + a shim cluster for its JMX bean
    .venv/bin/python tests/rm/record_fixtures.py --no-shim  # skip the second cluster

Starts `LocalCluster(tmp).up(nodes=2, native="fifo")`, runs `pi 2 10`, polls every endpoint the
rm/ client reads while the job runs and after it finishes, keeps the richest response of each
(a running app with pending resourceRequests, the NM with the most containers, JMX with
ContainerResource_* beans that carry attributes) and writes them, unmodified apart from indentation,
to tests/rm/fixtures/*.json. Every cluster is stopped with `down()`, also on failure. The
ContainerResource_* beans exist because hadoop-conf/yarn-site.xml runs the NM container monitor
and publishes running containers' metrics every second.

HTTP here is stdlib urllib on purpose: the fixtures must be what the daemons sent, independent
of the client under test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from yarnctl.cluster import LocalCluster, app_ids
from yarnctl.rm import SHIM_BEAN

FIXTURES = Path(__file__).resolve().parent / "fixtures"
UNKNOWN_APP = "application_1000000000000_9999"


def get(url: str) -> tuple[int, Any]:
    """GET url as JSON: (status, parsed body); (0, error text) when unreachable or not JSON."""
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read().decode())
        except ValueError:
            return e.code, None
    except (OSError, ValueError) as e:
        return 0, str(e)


class Recorder:
    """Polls the endpoints in a thread and keeps the best response seen of each."""

    def __init__(self, rm: str, nms: list[str]) -> None:
        self.rm, self.nms = rm, nms
        self.best: dict[str, tuple[float, Any]] = {}
        self.stop = threading.Event()

    def keep(self, name: str, score: float, doc: Any) -> None:
        if name not in self.best or score > self.best[name][0]:
            self.best[name] = (score, doc)

    def poll_once(self) -> None:
        st, apps = get(self.rm + "/ws/v1/cluster/apps")
        for app in ((apps or {}).get("apps") or {}).get("app") or [] if st == 200 else []:
            if app["state"] == "RUNNING":
                reqs = app.get("resourceRequests") or []
                score = (len(reqs) > 0) * 10 + (app.get("allocatedMB", 0) > 0) * 5 + app.get("runningContainers", 0)
                self.keep("apps_running", score, apps)
                _, one = get(f"{self.rm}/ws/v1/cluster/apps/{app['id']}")
                self.keep("app_running", score, one)
        st, metrics = get(self.rm + "/ws/v1/cluster/metrics")
        if st == 200:
            self.keep("cluster_metrics_running", metrics["clusterMetrics"]["containersAllocated"], metrics)
        st, sched = get(self.rm + "/ws/v1/cluster/scheduler")
        if st == 200:
            self.keep("scheduler_running", sched["scheduler"]["schedulerInfo"].get("numContainers", 0), sched)
        st, nodes = get(self.rm + "/ws/v1/cluster/nodes")
        if st == 200:
            n = sum(x.get("numContainers", 0) for x in nodes["nodes"]["node"])
            self.keep("nodes_running", n, nodes)
        for i, nm in enumerate(self.nms):
            st, cont = get(nm + "/ws/v1/node/containers")
            if st == 200:
                c = (cont.get("containers") or {}).get("container") or []
                self.keep(f"nm_containers@{i}", len(c) + sum(x["state"] == "RUNNING" for x in c), cont)
            st, jmx = get(nm + "/jmx?qry=Hadoop:service=NodeManager,name=*")
            if st == 200:
                beans = [b for b in jmx["beans"] if b["name"].split("name=")[-1].startswith("ContainerResource_")]
                sampled = sum(len(b) - 2 for b in beans)  # attributes beyond name and modelerType
                self.keep(f"nm_jmx@{i}", sampled + len(beans), jmx)

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.poll_once()
            except Exception as e:  # keep polling through a daemon's hiccup
                print(f"poll: {e!r}", file=sys.stderr)
            self.stop.wait(0.4)


def write(name: str, doc: Any) -> None:
    FIXTURES.mkdir(exist_ok=True)
    (FIXTURES / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    print(f"  wrote fixtures/{name}.json", file=sys.stderr)


def record_fifo(tmp: Path) -> None:
    cluster = LocalCluster(tmp / "fifo", progress=lambda s: print(s, file=sys.stderr))
    try:
        info = cluster.up(nodes=2, native="fifo")
        rm, nms = info.rm_url, list(info.nm_urls)
        idle_nodes = get(rm + "/ws/v1/cluster/nodes")[1]
        rec = Recorder(rm, nms)
        poller = threading.Thread(target=rec.run, daemon=True)
        poller.start()
        cp = cluster.run(["pi", "2", "10"], timeout=300, cwd=tmp)  # pi's scratch dir goes to cwd
        app_id = app_ids(cp.stderr)[-1]
        print(f"pi rc {cp.returncode} {app_id}", file=sys.stderr)
        final = cluster.wait_app(app_id)
        time.sleep(1.5)  # one more poll of the NMs while the finished containers' beans linger (10 s)
        rec.stop.set()
        poller.join()

        for name in ("apps_running", "app_running", "cluster_metrics_running", "scheduler_running",
                     "nodes_running"):
            write(name, rec.best[name][1])
        # one NM for all NM fixtures: the one whose containers and beans were richest
        i = max(range(len(nms)), key=lambda i: sum(rec.best.get(f"nm_{k}@{i}", (0.0, None))[0]
                                                   for k in ("containers", "jmx")))
        nm_url = nms[i]
        write("nm_containers", rec.best[f"nm_containers@{i}"][1])
        write("nm_jmx", rec.best[f"nm_jmx@{i}"][1])
        write("nm_info", get(nm_url + "/ws/v1/node/info")[1])
        write("nodes_idle", idle_nodes)
        write("cluster_info", get(rm + "/ws/v1/cluster/info")[1])
        write("cluster_metrics", get(rm + "/ws/v1/cluster/metrics")[1])
        write("scheduler", get(rm + "/ws/v1/cluster/scheduler")[1])
        write("apps_finished", get(rm + "/ws/v1/cluster/apps?states=FINISHED")[1])
        write("app_finished", get(f"{rm}/ws/v1/cluster/apps/{app_id}")[1])
        write("app_attempts", get(f"{rm}/ws/v1/cluster/apps/{app_id}/appattempts")[1])
        write("rm_jmx", get(rm + "/jmx?qry=Hadoop:service=ResourceManager,name=*")[1])
        assert info.history is not None
        write("history_info", get(info.history.url + "/ws/v1/history/info")[1])
        job = app_id.replace("application_", "job_")
        write("history_tasks", get(f"{info.history.url}/ws/v1/history/mapreduce/jobs/{job}/tasks")[1])
        status, body = get(f"{rm}/ws/v1/cluster/apps/{UNKNOWN_APP}")
        write("app_not_found", {"status": status, "body": body})
        print(f"final {final.state} {final.final_status}; NM fixtures from {nm_url}",
              file=sys.stderr)
    finally:
        print(cluster.down(), file=sys.stderr)


def record_shim(tmp: Path) -> None:
    cluster = LocalCluster(tmp / "shim", progress=lambda s: print(s, file=sys.stderr))
    try:
        info = cluster.up(nodes=1, policy="fifo")
        time.sleep(3)  # a few heartbeats for the counters
        write("rm_jmx_shim", get(f"{info.rm_url}/jmx?qry={SHIM_BEAN}")[1])
    finally:
        print(cluster.down(), file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-shim", action="store_true", help="skip the shim cluster (YarnctlShim JMX bean)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="yarnctl-rec-") as d:
        record_fifo(Path(d))
        if not args.no_shim:
            record_shim(Path(d))


if __name__ == "__main__":
    main()
