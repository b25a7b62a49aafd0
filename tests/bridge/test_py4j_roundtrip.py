"""A real py4j round trip: PolicyServer on an ephemeral port, called the way Java's CallbackClient calls it.

The raw-socket client below stands in for the Java shim: it authenticates with py4j's `A` command and
calls `decide` on object "t" (what CallbackClient.getPythonServerEntryPoint proxies). The real shim
is exercised by tests/integration.
"""

from __future__ import annotations

import json
import logging
import socket
import struct
import time
from collections.abc import Iterator

import pytest
from wirefixtures import STATE, text

from yarnctl.bridge.gilbench import CallbackCaller
from yarnctl.bridge.server import PolicyServer
from yarnctl.bridge.service import PolicyService
from yarnctl.policies import make_policy

TOKEN = "s3cret-token_for-tests"


FakeShim = CallbackCaller  # py4j's callback protocol as Java's CallbackConnection speaks it


@pytest.fixture
def server() -> Iterator[PolicyServer]:
    srv = PolicyServer(PolicyService(make_policy("fifo")), TOKEN, "127.0.0.1", 0)
    srv.start()
    yield srv
    srv.stop()


def test_entry_point_answers_decide(server: PolicyServer) -> None:
    assert server.port > 0
    shim = FakeShim(server.port, TOKEN)
    assert shim.auth_answer == "!yv\n"
    answers = [json.loads(shim.decide(text(n))) for n in STATE]  # multi-line JSON crosses the escaping
    assert [a["seq"] for a in answers] == [1, 2, 3] and all("a" in a for a in answers)
    assert server.service.stats.ok == 3
    shim.close()


def test_a_second_connection_shares_the_mirror(server: PolicyServer) -> None:
    # the shim may call from several RM threads: each gets its own py4j connection, one service behind them
    a, b = FakeShim(server.port, TOKEN), FakeShim(server.port, TOKEN)
    a.decide(text("request-full.json"))
    assert json.loads(b.decide(text("request-delta.json")))["seq"] == 2
    a.close()
    b.close()


@pytest.mark.parametrize("token", ["wrong", ""], ids=["wrong-token", "empty-token"])
def test_wrong_token_is_refused(server: PolicyServer, token: str) -> None:
    shim = FakeShim(server.port, token)
    assert shim.auth_answer == "!xn\n"
    with pytest.raises((ConnectionError, OSError)):
        shim.decide(text("request-full.json"))
    assert server.service.stats.calls == 0
    shim.close()


def test_no_auth_is_refused(server: PolicyServer) -> None:
    shim = FakeShim(server.port, None)
    with pytest.raises((ConnectionError, OSError)):
        shim.decide(text("request-full.json"))
    assert server.service.stats.calls == 0
    shim.close()


def test_a_refused_connection_is_one_counted_warning_without_a_stack(server: PolicyServer,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    """A port probe (connect, close) or a wrong token: py4j's ERROR traceback becomes one WARNING line, counted."""
    caplog.set_level(logging.WARNING, logger="py4j")
    socket.create_connection(("127.0.0.1", server.port), timeout=5).close()  # what a readiness probe does
    FakeShim(server.port, "wrong").close()
    deadline = time.monotonic() + 5  # py4j authenticates on its own connection threads

    def lines() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "without the bridge token" in r.getMessage()]

    # a failure is counted just before its line is logged: wait for both (once the line came too late)
    while (server.service.stats.auth_failures < 2 or len(lines()) < 2) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.service.stats.auth_failures == 2
    refused = lines()
    assert [r.levelname for r in refused] == ["WARNING", "WARNING"]
    assert all(r.exc_info is None for r in refused) and "2 so far" in refused[-1].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert TOKEN not in caplog.text and "wrong" not in caplog.text
    assert server.service.stats.as_dict()["auth_failures"] == 2


def test_a_login_broken_by_the_peer_is_one_counted_warning_naming_the_cause(
        server: PolicyServer, caplog: pytest.LogCaptureFixture) -> None:
    """A shim that gives up on a connection mid-login (here: the token sent, then a reset) is not a wrong token."""
    caplog.set_level(logging.WARNING, logger="py4j")
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    sock.sendall(f"A\n{TOKEN}\n".encode())  # no end marker: py4j reads on, and meets the reset
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
    sock.close()
    deadline = time.monotonic() + 5
    while not caplog.records and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)  # py4j's second record (the refusal) comes just after the first, on the same thread
    (line,) = [r for r in caplog.records if r.name.startswith("py4j")]
    assert line.levelname == "WARNING" and line.exc_info is None
    assert line.getMessage().startswith("a connection broke during its login (ConnectionResetError: "), line.getMessage()
    assert "1 failed logins so far" in line.getMessage() and TOKEN not in caplog.text
    assert server.service.stats.auth_failures == 1
    FakeShim(server.port, "wrong").close()  # a refusal after it is still one
    while server.service.stats.auth_failures < 2 and time.monotonic() < deadline + 5:
        time.sleep(0.02)
    time.sleep(0.2)
    assert [r.getMessage()[:42] for r in caplog.records if r.name.startswith("py4j")][1:] == \
        ["refused a connection without the bridge to"]


def test_port_in_use_is_one_clear_error(server: PolicyServer) -> None:
    from yarnctl.errors import ConfigError
    other = PolicyServer(PolicyService(make_policy("fifo")), TOKEN, "127.0.0.1", server.port)
    with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{server.port}: "):
        other.start()
