"""Free TCP ports for the daemons of one local cluster."""

from __future__ import annotations

import socket
from contextlib import ExitStack


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """Return `n` distinct ports that were free on `host` a moment ago.

    All sockets stay bound until every port is picked, so the list has no duplicates; another
    process can still take a port before the daemon binds it (the daemon then fails to start and
    `yarnctl cluster up` says so).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    with ExitStack() as stack:
        ports = []
        for _ in range(n):
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
