"""Benchmark of PolicyService.decide alone (no py4j): steady-state heartbeats of a large cluster.

`python -m yarnctl.bridge.bench [--nodes 1000] [--apps 200] [--calls 20000] [--policy fifo,fair,drf]`

A tiny stand-in for the ResourceManager keeps the ground truth: every heartbeat it completes a few
containers on the heartbeating node, reports the previous answer's containers as `alloc` rows and
the changed ask tables as `asks` rows, exactly as the shim would, and times only `decide`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarnctl.bridge.decisionlog import DecisionLog
from yarnctl.bridge.response import parse_response
from yarnctl.bridge.service import PolicyService
from yarnctl.bridge.wire import VERSION
from yarnctl.policies import make_policy

_ENC = json.JSONEncoder(separators=(",", ":")).encode
NODE_MB, NODE_VC = 16384, 16


@dataclass
class _FakeRM:
    """Ground truth for the benchmark: nodes, containers and each app's outstanding ANY count."""

    nodes: int
    apps: int
    rng: random.Random
    t: int = 1_700_000_000_000
    seq: int = 0
    cs: dict[str, tuple[str, str, int, int, int]] = field(default_factory=dict)  # id -> app, node, prio, mb, vc
    on_node: list[list[str]] = field(default_factory=list)
    used: list[list[int]] = field(default_factory=list)
    asks: dict[str, list[Any]] = field(default_factory=dict)
    next_c: int = 0
    alloc_rows: list[list[Any]] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    app_rows: list[list[Any]] = field(default_factory=list)

    def node_id(self, i: int) -> str:
        return f"n{i}.example.com:45454"

    def full(self, node: int) -> str:
        """Fill the cluster nearly full and describe it whole: the first full sync."""
        self.on_node = [[] for _ in range(self.nodes)]
        self.used = [[0, 0] for _ in range(self.nodes)]
        self.app_rows = [[f"application_1700000000000_{a:04d}", f"q{a % 4}", f"u{a % 20}", "MAPREDUCE", f"job{a}", [],
                          self.t - 10_000_000 + a * 1000] for a in range(self.apps)]
        for a, app in enumerate(self.app_rows):
            mb = 1024 * (1 + a % 2)
            self.asks[app[0]] = [app[0], 20, mb, 1, 100_000, 1, [[f"n{a % self.nodes}.example.com", 3, 1]]]
        for i in range(self.nodes):  # nearly full nodes, so each heartbeat frees and refills a little
            while self.used[i][0] + 2048 <= NODE_MB - 2048:
                self._allocate(self.rng.choice(self.app_rows)[0], i)
        return self.resync(node)

    def resync(self, node: int) -> str:
        """The whole state as it now is, as the shim sends it after a restart or a resync."""
        self.alloc_rows.clear()
        self.changed.clear()
        nodes = [[self.node_id(i), f"/r{i % 20}", NODE_MB, NODE_VC] for i in range(self.nodes)]
        allocs = [[c, a, n, p, mb, vc, self.t, 0, 0] for c, (a, n, p, mb, vc) in self.cs.items()]
        return self._request(node, full=True, nodes=nodes, apps=self.app_rows, asks=list(self.asks.values()),
                             alloc=allocs)

    def _allocate(self, app: str, node: int) -> None:
        ask = self.asks[app]
        cid = f"container_1700000000000_{self.next_c:08d}"
        self.next_c += 1
        self.cs[cid] = (app, self.node_id(node), 20, ask[2], ask[3])
        self.on_node[node].append(cid)
        self.used[node][0] += ask[2]
        self.used[node][1] += ask[3]
        ask[4] -= 1
        self.changed.add(app)
        self.alloc_rows.append([cid, app, self.node_id(node), 20, ask[2], ask[3], self.t, 0, 0])

    def apply(self, node: int, response: str) -> None:
        for app, _prio, n, _kind in parse_response(response).a:
            for _ in range(n):
                self._allocate(app, node)

    def delta(self, node: int, finishing: int) -> str:
        done = []
        for _ in range(min(finishing, len(self.on_node[node]))):
            cid = self.on_node[node].pop(self.rng.randrange(len(self.on_node[node])))
            _app, _n, _p, mb, vc = self.cs.pop(cid)
            self.used[node][0] -= mb
            self.used[node][1] -= vc
            done.append([cid, self.t, 0])
        asks = [self.asks[a] for a in sorted(self.changed)]
        alloc, self.alloc_rows = self.alloc_rows, []
        self.changed.clear()
        return self._request(node, full=False, asks=asks, alloc=alloc, done=done)

    def _request(self, node: int, full: bool, **rows: Any) -> str:
        self.seq += 1
        self.t += 1
        doc: dict[str, Any] = {"v": VERSION, "seq": self.seq, "full": full, "t": self.t, "node": self.node_id(node),
                               "used": [self.used[node][0], self.used[node][1], len(self.on_node[node])]}
        if full:
            doc["min"] = [1024, 1]
        else:
            doc["base"] = self.seq - 1
        doc.update({k: v for k, v in rows.items() if v})
        return str(_ENC(doc))


def run(policy: str, nodes: int, apps: int, calls: int, finishing: int, log_dir: Path | None) -> dict[str, Any]:
    """Time `calls` steady-state heartbeats of `policy`; the percentiles are over decide() alone."""
    rm = _FakeRM(nodes, apps, random.Random(1))
    dlog = DecisionLog(log_dir / f"{policy}.jsonl") if log_dir else None
    service = PolicyService(make_policy(policy), dlog)
    full = rm.full(0)  # built outside the timing, as the deltas are: full_sync_ms is decide's alone
    service.settle()  # as `yarnctl serve` does before it serves
    t0 = time.perf_counter()
    answer = service.decide(full)
    full_ms = (time.perf_counter() - t0) * 1000
    rm.apply(0, answer)
    lat, sizes = [], []
    warmup = min(2000, calls // 5)
    for k in range(calls + warmup):
        node = (k + 1) % nodes
        req = rm.delta(node, finishing)
        s = time.perf_counter_ns()
        resp = service.decide(req)
        e = time.perf_counter_ns()
        rm.apply(node, resp)
        if k >= warmup:
            lat.append((e - s) / 1000)
            sizes.append(len(req))
    st = service.stats
    assert st.resync == 0 and st.errors == 0, st.as_dict()  # the fake RM and the mirror must agree
    assigned = st.assigned
    # a later full sync (a shim's resync, an RM failover): the state as the deltas left it
    resync = rm.resync(0)
    t0 = time.perf_counter()
    service.decide(resync)
    resync_ms = (time.perf_counter() - t0) * 1000
    assert st.full_syncs == 2 and st.resync == 0 and st.errors == 0, st.as_dict()
    if dlog:
        dlog.close()
    q = statistics.quantiles(lat, n=100)
    return {"policy": policy, "calls": len(lat), "p50_us": round(q[49], 1), "p99_us": round(q[98], 1),
            "mean_us": round(statistics.fmean(lat), 1), "max_us": round(max(lat), 1),
            "request_bytes_mean": round(statistics.fmean(sizes)), "containers_assigned": assigned,
            "full_sync_ms": round(full_ms, 1), "resync_ms": round(resync_ms, 1), "live_containers": len(rm.cs)}


def main() -> None:
    """Run the benchmark and print one line per policy (or JSON)."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.bridge.bench", description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--apps", type=int, default=200)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--finishing", type=int, default=2, help="containers completed per heartbeat (default 2)")
    p.add_argument("--policy", default="fifo,fair,drf")
    p.add_argument("--no-log", action="store_true", help="measure without the decision log")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.policy.split(","):
            r = run(name, args.nodes, args.apps, args.calls, args.finishing, None if args.no_log else Path(tmp))
            if args.json:
                print(json.dumps(r))
            else:
                print(f"{r['policy']:<6} p50 {r['p50_us']:7.1f} µs  p99 {r['p99_us']:7.1f} µs  mean "
                      f"{r['mean_us']:7.1f} µs  max {r['max_us']:8.1f} µs  ({r['calls']:,} calls, request "
                      f"{r['request_bytes_mean']} B avg, {r['containers_assigned']:,} containers assigned, "
                      f"{r['live_containers']:,} live, full sync {r['full_sync_ms']} ms, later {r['resync_ms']} ms)")


if __name__ == "__main__":
    main()
