"""RM HA failover: a fake transport for the rules (two real RMs in HA need ZooKeeper and a second RM
process, which the local cluster does not run), then real HTTP servers in threads for the wire."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from fixturerm import HttpStub
from rmfakes import FakeTransport, fixture, info, ok, standby_redirect
from yarnctl.rm import HttpSettings, Reply, ResourceManager, RMUnreachable, TransportFailure

RM1, RM2, RM3 = "http://rm1:8088", "http://rm2:8088", "http://rm3:8088"
NO_SLEEP = HttpSettings(retries=0)


def refused() -> TransportFailure:
    return TransportFailure("connection failed ([Errno 111] Connection refused)")


def client(table: dict[tuple[str, str], Any], bases: list[str] | None = None,
           settings: HttpSettings = NO_SLEEP) -> tuple[ResourceManager, FakeTransport]:
    t = FakeTransport(table)
    return ResourceManager(bases or [RM1, RM2], transport=t, settings=settings, sleep=lambda s: None), t


@pytest.mark.parametrize("first", [
    refused(),
    TransportFailure("no answer within the 10 s read timeout"),
    Reply("", 503, "Service Unavailable"),
    standby_redirect(RM2 + "/ws/v1/cluster/metrics"),
], ids=["first-down", "first-times-out", "first-503", "first-standby-307"])
def test_call_succeeds_against_the_second_rm_and_remembers_it(first: Any) -> None:
    rm, t = client({(RM1, "/metrics"): first, (RM2, "/metrics"): ok(fixture("cluster_metrics"))})
    assert rm.metrics().total_nodes == 2
    assert rm.active_url == RM2
    t.calls.clear()
    rm.metrics()
    assert t.calls == [RM2 + "/ws/v1/cluster/metrics"]  # straight to the remembered active


def test_failover_mid_sequence_when_the_active_goes_away() -> None:
    table: dict[tuple[str, str], Any] = {(RM1, "/metrics"): ok(fixture("cluster_metrics")),
                                         (RM2, "/metrics"): standby_redirect(RM1 + "/ws/v1/cluster/metrics")}
    rm, t = client(table)
    rm.metrics()
    assert rm.active_url == RM1
    # RM1 dies, RM2 takes over (and stops redirecting)
    table[(RM1, "/metrics")] = refused()
    table[(RM2, "/metrics")] = ok(fixture("cluster_metrics"))
    t.calls.clear()
    assert rm.metrics().active_nodes == 2
    assert t.calls == [RM1 + "/ws/v1/cluster/metrics", RM2 + "/ws/v1/cluster/metrics"]
    assert rm.active_url == RM2


def test_redirect_to_an_unconfigured_host_is_not_followed() -> None:
    rm, t = client({(RM1, "/metrics"): standby_redirect("http://evil:8088/ws/v1/cluster/metrics"),
                    (RM2, "/metrics"): ok(fixture("cluster_metrics"))})
    rm.metrics()
    assert not any("evil" in c for c in t.calls)
    assert rm.active_url == RM2


def test_redirect_is_followed_ahead_of_list_order() -> None:
    rm, t = client({(RM1, "/metrics"): standby_redirect(RM3 + "/ws/v1/cluster/metrics"),
                    (RM3, "/metrics"): ok(fixture("cluster_metrics"))}, bases=[RM1, RM2, RM3])
    rm.metrics()
    assert t.calls == [RM1 + "/ws/v1/cluster/metrics", RM3 + "/ws/v1/cluster/metrics"]


def test_cluster_info_skips_a_standby_that_answers_itself() -> None:
    rm, _ = client({(RM1, "/info"): info("STANDBY"), (RM2, "/info"): info("ACTIVE")})
    assert rm.cluster_info().ha_state == "ACTIVE"
    assert rm.active_url == RM2
    assert rm.ha_states() == {RM1: "STANDBY", RM2: "ACTIVE"}


def test_jmx_checks_ha_state_first_because_a_standby_serves_jmx() -> None:
    rm, t = client({(RM1, "/info"): info("STANDBY"), (RM2, "/info"): info("ACTIVE"),
                    (RM1, "/jmx"): ok('{"beans": [{"name": "Hadoop:service=ResourceManager,name=X"}]}'),
                    (RM2, "/jmx"): ok(fixture("rm_jmx_shim"))})
    shim = rm.shim_metrics()
    assert shim is not None and shim.heartbeats == 11
    assert RM1 + "/jmx" not in t.calls


def test_all_down_is_one_error_naming_every_url_and_what_each_said() -> None:
    rm, t = client({(RM1, "/metrics"): refused(), (RM2, "/metrics"): standby_redirect("http://elsewhere:1/x")},
                   settings=HttpSettings(retries=2, backoff_s=0.5))
    slept: list[float] = []
    rm._failover._sleep = slept.append  # the backoff is observable without waiting
    with pytest.raises(RMUnreachable) as e:
        rm.metrics()
    msg = str(e.value)
    assert RM1 in msg and "Connection refused" in msg
    assert RM2 in msg and "elsewhere" in msg and "not followed" in msg
    assert "3 rounds" in msg and "/ws/v1/cluster/metrics" in msg
    assert slept == [0.5, 1.0]  # exponential backoff between rounds
    assert len(t.calls) == 6


@pytest.mark.parametrize("round_no,expected", [(1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0)],
                         ids=["first", "second", "third", "capped"])
def test_backoff(round_no: int, expected: float) -> None:
    assert HttpSettings(backoff_s=0.5, backoff_max_s=8.0).backoff(round_no) == expected


# ---------------------------------------------------------------- real HTTP servers


class FakeRM(HttpStub):
    """A real HTTP server in a thread that answers like an active or a standby Hadoop 2.7 RM."""

    def __init__(self) -> None:
        self.mode = "active"          # active | standby
        self.redirect_to = ""
        self.hits: list[str] = []
        super().__init__()

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        self.hits.append(path)
        if self.mode == "standby" and not path.startswith("/ws/v1/cluster/info"):
            body = f"This is standby RM. The redirect url is: {self.redirect_to}{path}\n".encode()
            return 307, {"Location": self.redirect_to + path}, body
        name = {"/ws/v1/cluster/info": "cluster_info"}.get(path.split("?")[0], "cluster_metrics")
        doc = json.loads(fixture(name))
        if name == "cluster_info":
            doc["clusterInfo"]["haState"] = self.mode.upper()
        return 200, {"Content-Type": "application/json"}, json.dumps(doc).encode()


@pytest.fixture
def two_rms() -> Iterator[tuple[FakeRM, FakeRM]]:
    a, b = FakeRM(), FakeRM()
    yield a, b
    for s in (a, b):
        try:
            s.stop()
        except OSError:
            pass


def test_real_servers_standby_redirect_then_active_dies(two_rms: tuple[FakeRM, FakeRM]) -> None:
    standby, active = two_rms
    standby.mode, standby.redirect_to = "standby", active.url
    rm = ResourceManager([standby.url, active.url], settings=HttpSettings(retries=0, connect_timeout_s=1,
                                                                          read_timeout_s=2))
    assert rm.metrics().total_nodes == 2
    assert rm.active_url == active.url
    assert standby.hits == ["/ws/v1/cluster/metrics"] and active.hits == ["/ws/v1/cluster/metrics"]
    rm.metrics()
    assert len(standby.hits) == 1  # remembered: the standby is not asked again

    # the active goes away mid-sequence; the former standby takes over
    active.stop()
    standby.mode = "active"
    assert rm.metrics().total_nodes == 2
    assert rm.active_url == standby.url
    assert rm.cluster_info().ha_state == "ACTIVE"


def test_real_servers_first_down(two_rms: tuple[FakeRM, FakeRM]) -> None:
    down, up = two_rms
    down.stop()
    rm = ResourceManager([down.url, up.url], settings=HttpSettings(retries=0, connect_timeout_s=1))
    assert rm.metrics().active_nodes == 2 and rm.active_url == up.url


def test_real_servers_all_down_one_clear_error(two_rms: tuple[FakeRM, FakeRM]) -> None:
    a, b = two_rms
    a.stop()
    b.stop()
    rm = ResourceManager([a.url, b.url], settings=HttpSettings(retries=1, backoff_s=0.01, connect_timeout_s=1))
    with pytest.raises(RMUnreachable) as e:
        rm.metrics()
    assert a.url in str(e.value) and b.url in str(e.value) and "Connection refused" in str(e.value)
    assert [u for u, _ in e.value.attempts] == [a.url, b.url, a.url, b.url]
