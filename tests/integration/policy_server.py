"""A policy server for the integration tests: `yarnctl serve` with a test policy or an injected fault.

Run as `python policy_server.py MODE PORT TOKEN_FILE DECISION_LOG`. Modes:
- `fifo`: the real fifo policy (as `yarnctl serve --policy fifo`);
- `kill-once`: fifo, plus one Kill of the first non-AM container it sees on the heartbeating node;
- `resize`: fifo, plus one NodeResize of the first node it sees to 3072 MB / 3 vcores;
- `chaos`: fault injection: the real fifo answer is replaced, most of the time, by garbage (unknown
  ids, zero/negative/huge counts, more containers than fit, unknown kills and resizes, malformed
  JSON, a stale seq, a late answer) so the tests can check what the shim lets through.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import threading
import time
from pathlib import Path

from yarnctl.bridge.decisionlog import DecisionLog
from yarnctl.bridge.server import PolicyServer, load_token
from yarnctl.bridge.service import PolicyService
from yarnctl.model import ClusterSnapshot, Decision, Kill, NodeId, NodeResize, Resources
from yarnctl.policies import make_policy
from yarnctl.policies.contract import PolicyBase


class KillOnce(PolicyBase):
    """fifo, and once a non-AM container has run for a few seconds, kill it through the shim."""

    name = "kill-once"

    def __init__(self) -> None:
        self.fifo, self.done = make_policy("fifo"), False

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        d = self.fifo.decide(snap, node_id)
        if not self.done:
            for c in snap.node_containers.get(node_id, ()):
                if not c.is_am and snap.now_s - c.start_s > 3:
                    self.done = True
                    return Decision(d.assignments, (Kill(c.id, "integration test: kill path"),), d.resizes)
        return d


class ResizeOnce(PolicyBase):
    """fifo, and once, set the first node's capacity to 3072 MB / 3 vcores."""

    name = "resize"
    resizes_nodes = True  # else the engine would give the node its registered size back

    def __init__(self) -> None:
        self.fifo, self.done = make_policy("fifo"), False

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        d = self.fifo.decide(snap, node_id)
        if not self.done:
            self.done = True
            first = sorted(snap.nodes)[0]
            return Decision(d.assignments, d.kills, (NodeResize(first, Resources(3072, 3)),))
        return d


class ChaosService(PolicyService):
    """Fault injection: keeps the real mirror but answers garbage most of the time."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.rng = random.Random(7)
        self.calls = 0

    def decide(self, request: str) -> str:
        honest = super().decide(request)
        try:
            req = json.loads(request)
        except ValueError:
            return honest
        seq, apps = req["seq"], self.mirror.state.app_ids() or ["application_0_0"]  # noqa: SLF001
        app, nodes = self.rng.choice(apps), sorted(self.mirror.snapshot(0.0).nodes) or ["nowhere:0"]  # noqa: SLF001
        garbage = [
            {"seq": seq, "a": [["application_1_9999", 20, 1]]},
            {"seq": seq, "a": [[app, 20, 0], [app, 10, -3], [app, 0, 2 ** 40]]},
            {"seq": seq, "a": [[app, p, 50] for p in (0, 10, 20)]},  # far more than a 4 GB node holds
            {"seq": seq, "a": [[app, 20, 1], [app, 20, 1], [app, 20, 1], [app, 20, 1], [app, 20, 1]]},
            {"seq": seq, "k": [["container_1_0001_01_000099", "x"]], "r": [["nowhere:1", 1 << 30, 1 << 20]]},
            {"seq": seq, "r": [[self.rng.choice(nodes), -5, 2]]},
            {"seq": seq + 7, "a": [[app, 20, 1]]},
            "{\"seq\": " + str(seq) + ", \"a\": [[",
            "[\"not\", \"an\", \"object\"]",
            "",
        ]
        self.calls += 1
        if self.calls % 10 == 0:  # on a fixed beat, not a draw: a seeded draw came late once in the first 113 calls
            time.sleep(0.5)  # past the test cluster's deadline
            return honest
        if self.rng.random() < 0.3:
            return honest
        g = self.rng.choice(garbage)
        return g if isinstance(g, str) else json.dumps(g)


def main() -> None:
    mode, port, token_file, log_path = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
    policies = {"fifo": lambda: make_policy("fifo"), "kill-once": KillOnce, "resize": ResizeOnce,
                "chaos": lambda: make_policy("fifo")}
    dlog = DecisionLog(log_path)
    service_cls = ChaosService if mode == "chaos" else PolicyService
    service = service_cls(policies[mode](), dlog)
    server = PolicyServer(service, load_token(token_file), "127.0.0.1", port)
    server.start()
    print(f"listening on {server.port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    server.stop()
    dlog.close()


if __name__ == "__main__":
    main()
