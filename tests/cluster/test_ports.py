"""Free-port picking for the local cluster."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from yarnctl.cluster.ports import LOWEST, ephemeral_range, free_ports, is_listening


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert all(1024 <= p <= 65535 for p in ports)
    for p in ports[:5]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))


def test_free_ports_are_below_the_ephemeral_range_where_no_outgoing_connection_takes_them() -> None:
    ports = free_ports(30, ephemeral=(32768, 60999))
    assert len(set(ports)) == 30 and all(LOWEST <= p < 32768 for p in ports)


def test_a_port_in_use_below_the_range_is_not_handed_out() -> None:
    # a window of 16 ports from LOWEST (room for 2 draws): all of them held but two, and those two come back
    held: list[socket.socket] = []
    try:
        for p in range(LOWEST, LOWEST + 16):
            s = socket.socket()
            try:
                s.bind(("127.0.0.2", p))  # another address than free_ports' host: held all the same
            except OSError:
                s.close()  # in use on this machine already: held just as well
                continue
            held.append(s)
        assert len(held) >= 2, "this machine uses the window the test needs"
        left = sorted(s.getsockname()[1] for s in held[:2])
        for s in held[:2]:
            s.close()
        assert sorted(free_ports(2, ephemeral=(LOWEST + 16, 60999))) == left
    finally:
        for s in held:
            s.close()


def test_a_host_that_cannot_be_bound_fails_at_once() -> None:
    with pytest.raises(OSError):
        free_ports(2, "10.255.255.1", ephemeral=(LOWEST, 60999))  # no room below: the kernel's pick on that host


def test_no_room_below_the_range_falls_back_to_the_kernels_pick() -> None:
    ports = free_ports(5, ephemeral=(LOWEST + 10, 60999))  # 10 ports below: not room enough for 5 draws
    assert len(set(ports)) == 5 and all(p >= LOWEST + 10 for p in ports)


def test_the_ephemeral_range_is_read_or_none(tmp_path: Path) -> None:
    (tmp_path / "range").write_text("32768\t60999\n")
    assert ephemeral_range(tmp_path / "range") == (32768, 60999)
    (tmp_path / "bad").write_text("garbage\n")
    assert ephemeral_range(tmp_path / "bad") is None and ephemeral_range(tmp_path / "missing") is None


def test_free_ports_zero() -> None:
    assert free_ports(0) == []


def test_is_listening() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert is_listening("127.0.0.1", port)
    assert not is_listening("127.0.0.1", port)
