"""Benchmark: py4j round trips to the policy server while another of its threads computes, per GIL switch interval.

`python -m yarnctl.bridge.gilbench [--calls 300] [--intervals 0.005,0.0005]`

A CPython thread waiting for the GIL gets it only when the holder blocks or its switch interval
(5 ms by default) runs out, and a py4j call takes the GIL several times (read the command, decide,
write the answer). So while one thread of `yarnctl serve` computes in Python — the control loop
reading an observation, a metrics scrape — each heartbeat's answer waits in 5 ms steps, past the
shim's 10 ms deadline. This measures the round trip the shim sees through the real PolicyServer,
idle and beside a busy thread, at each switch interval; `yarnctl serve` sets SWITCH_INTERVAL_S.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from pathlib import Path

from py4j.protocol import escape_new_line, unescape_new_line  # type: ignore[import-untyped]

from yarnctl.bridge.server import SWITCH_INTERVAL_S

_TOKEN = "gilbench-token"
# the wire schema's full-state example (two nodes, two apps, their asks), in the source tree only
_REQUEST_FILE = Path(__file__).resolve().parents[2] / "schema" / "fixtures" / "request-full.json"


class CallbackCaller:
    """py4j's callback protocol as the shim's CallbackConnection speaks it: authenticate, call `decide` on "t"."""

    def __init__(self, port: int, token: str | None) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.f = self.sock.makefile("rb")
        self.auth_answer: str | None = None
        if token is not None:
            self.sock.sendall(f"A\n{token}\ne\n".encode())
            self.auth_answer = self.f.readline().decode()

    def decide(self, request: str) -> str:
        """One call of PolicyService.decide; its answer."""
        self.sock.sendall(f"c\nt\ndecide\ns{escape_new_line(request)}\ne\n".encode())
        line = self.f.readline().decode()
        if not line.startswith("!ys"):
            raise ConnectionError(f"py4j answered {line!r}")
        return str(unescape_new_line(line[3:-1]))

    def close(self) -> None:
        """Close the connection."""
        self.f.close()
        self.sock.close()


def _busy(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(i * i for i in range(20_000))  # pure Python, as parsing an observation is


def round_trips(calls: int, interval_s: float, busy: bool) -> list[float]:
    """Milliseconds of `calls` round trips through a PolicyServer (fifo), with or without a busy thread."""
    from yarnctl.bridge.server import PolicyServer
    from yarnctl.bridge.service import PolicyService
    from yarnctl.policies import make_policy

    if not _REQUEST_FILE.is_file():
        raise SystemExit(f"gilbench: {_REQUEST_FILE}: missing; run it from a yarnctl source checkout")
    request = json.loads(_REQUEST_FILE.read_text())
    old = sys.getswitchinterval()
    sys.setswitchinterval(interval_s)
    server = PolicyServer(PolicyService(make_policy("fifo")), _TOKEN, "127.0.0.1", 0)
    port = server.start()
    caller = CallbackCaller(port, _TOKEN)
    stop = threading.Event()
    worker = threading.Thread(target=_busy, args=(stop,), daemon=True)
    if busy:
        worker.start()
    out: list[float] = []
    try:
        for i in range(calls):
            req = json.dumps({**request, "seq": i + 1})  # full state every call: no resync, same work each time
            t0 = time.perf_counter()
            caller.decide(req)
            out.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.002)  # heartbeats come apart; the busy thread runs in between
    finally:
        stop.set()
        caller.close()
        server.stop()
        sys.setswitchinterval(old)
    return out


def _q(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def main(argv: list[str] | None = None) -> int:
    """Print the round-trip percentiles per switch interval, idle and beside a busy thread."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.bridge.gilbench", description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=300, help="round trips per case (default: %(default)s)")
    p.add_argument("--intervals", default=f"0.005,{SWITCH_INTERVAL_S}",
                   help="switch intervals to compare, seconds (default: %(default)s: CPython's and serve's)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the results here")
    args = p.parse_args(argv)
    intervals = [float(x) for x in args.intervals.split(",")]
    rows = []
    print(f"{'switch interval':>16} {'other thread':>12} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8} "
          f"{'> 10 ms':>8}")
    for interval in intervals:
        for busy in (False, True):
            ms = round_trips(args.calls, interval, busy)
            row = {"interval_s": interval, "busy": busy, "p50": _q(ms, 0.5), "p90": _q(ms, 0.9),
                   "p99": _q(ms, 0.99), "max": max(ms), "over_10ms": sum(m > 10 for m in ms) / len(ms)}
            rows.append(row)
            print(f"{interval * 1000:>13g} ms {'busy' if busy else 'idle':>12} {row['p50']:>8.2f} {row['p90']:>8.2f} "
                  f"{row['p99']:>8.2f} {row['max']:>8.2f} {row['over_10ms']:>8.0%}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
