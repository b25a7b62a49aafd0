"""Free TCP ports for the daemons of one local cluster."""

from __future__ import annotations

import errno
import random
import socket
from contextlib import ExitStack
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 10000  # below: well-known and registered services' ports
_RANDOM = random.SystemRandom()


def ephemeral_range(path: Path = EPHEMERAL_RANGE) -> tuple[int, int] | None:
    """The kernel's range of ports for outgoing connections (Linux), None where it cannot be read."""
    try:
        low, high = (int(x) for x in path.read_text().split())
    except (OSError, ValueError):
        return None
    return low, high


def free_ports(n: int, host: str = "127.0.0.1", ephemeral: tuple[int, int] | None = None) -> list[int]:
    """Return `n` distinct ports that were free on `host` a moment ago, below the ephemeral range if there is room.

    All sockets stay bound until every port is picked, so the list has no duplicates. A port the
    kernel handed out (bind to 0) is from the ephemeral range, where any process's next outgoing
    connection may take it before the daemon binds it: one of a cluster's first daemons, connecting
    out, once took a port picked for a NodeManager started seconds later ("Failed to bind"). So the
    ports are drawn at random below that range, where no outgoing connection lands, each free on
    every address; another process binding the same port on purpose can still win (the daemon then
    fails and `cluster up` says so). `host` is where the kernel picks when there is no such room.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    low = (ephemeral or ephemeral_range() or (LOWEST, LOWEST))[0]
    below = range(LOWEST, low) if low - LOWEST >= 8 * n else range(0)  # room enough that few draws are taken
    draws = _RANDOM.sample(below, len(below))  # not the global generator: a seeded caller would draw alike
    with ExitStack() as stack:
        ports: list[int] = []
        for port in draws:
            if len(ports) == n:
                break
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                # the wildcard address: free on it is free on every address (the NodeManagers bind 0.0.0.0)
                s.bind(("0.0.0.0", port))
            except OSError as e:
                s.close()
                if e.errno in (errno.EADDRINUSE, errno.EACCES):
                    continue
                raise
            stack.enter_context(s)
            ports.append(port)
        while len(ports) < n:  # no room below the ephemeral range: the kernel picks
            s = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            s.bind((host, 0))
            ports.append(s.getsockname()[1])
        return ports


def is_listening(host: str, port: int, timeout_s: float = 0.2) -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False
