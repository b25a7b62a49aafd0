"""Free-port picking for the local cluster."""

from __future__ import annotations

import socket

from yarnctl.cluster.ports import free_ports, is_listening


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert all(1024 <= p <= 65535 for p in ports)
    for p in ports[:5]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))


def test_free_ports_zero() -> None:
    assert free_ports(0) == []


def test_is_listening() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert is_listening("127.0.0.1", port)
    assert not is_listening("127.0.0.1", port)
