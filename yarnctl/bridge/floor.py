"""A policy server that decides nothing, after a set busy time: the floor under the shim's delegated heartbeat.

`python -m yarnctl.bridge.floor --token-file F [--port 0] [--busy-us 100]` serves the shim's
`decide` through the real PolicyServer (py4j, token, loopback) and answers every call with an
empty decision after spinning for `--busy-us` (wall clock, the CPU held as a policy holds it), so
`python -m yarnctl.bridge.shimbench --floor-us 0,100,300` measures what a heartbeat costs beside
Python's own work: py4j, the two process switches, and how they grow with the time Python holds
the call.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from pathlib import Path

from yarnctl.bridge.response import encode_decision, encode_error
from yarnctl.bridge.server import SWITCH_INTERVAL_S, PolicyServer, load_token
from yarnctl.errors import ConfigError
from yarnctl.model import Decision

log = logging.getLogger(__name__)


class _Counts:
    """What PolicyServer's login filter counts on its service."""

    auth_failures = 0


class FloorService:
    """decide(String) -> String answering every request with no assignments after `busy_us` of spinning."""

    class Java:
        implements = ["io.yarnctl.shim.PolicyService"]

    def __init__(self, busy_us: int) -> None:
        self.busy_ns = busy_us * 1000
        self.stats = _Counts()
        self.calls = 0

    def decide(self, request: str) -> str:
        """An empty decision for the request's seq, after the busy time (a malformed request gets an error)."""
        end = time.perf_counter_ns() + self.busy_ns
        self.calls += 1
        try:
            seq = json.loads(request)["seq"]
        except (ValueError, TypeError, KeyError):
            return encode_error(1, "bad request: no seq")
        while time.perf_counter_ns() < end:  # CPU held as a policy would hold it, not a sleep
            pass
        return encode_decision(seq, Decision())


def _micros(text: str) -> int:
    """`--busy-us`: an integer, 0 or more."""
    try:
        us = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected microseconds, got {text!r}") from None
    if us < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {us}")
    return us


def main(argv: list[str] | None = None) -> int:
    """Serve the floor until interrupted; prints the line `shimbench` waits for on stderr."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.bridge.floor", description=__doc__.splitlines()[0])
    p.add_argument("--token-file", type=Path, required=True, help="the bridge token file (created if missing)")
    p.add_argument("--port", type=int, default=0, help="loopback port to listen on (default: a free one)")
    p.add_argument("--busy-us", type=_micros, default=0, help="microseconds spent spinning on each call (default 0)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # as `yarnctl serve` runs
    try:
        server = PolicyServer(FloorService(args.busy_us), load_token(args.token_file), port=args.port)  # type: ignore[arg-type]
        port = server.start()
    except ConfigError as e:
        print(f"floor: error: {e}", file=sys.stderr)
        return 2
    log.info("serving policy floor-%dus on 127.0.0.1:%d", args.busy_us, port)
    stop = threading.Event()
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
