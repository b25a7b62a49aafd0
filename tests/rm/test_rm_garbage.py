"""Garbage from an RM or a NodeManager: one RMError naming the URL and field, never a traceback (found by fuzzing).

The RMs are scripted fake transports (rmfakes) or real HTTP servers in threads (fixturerm's HttpStub)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from fixturerm import HttpStub
from rmfakes import FakeTransport, fixture, fixture_doc, ok

from yarnctl.errors import RMError
from yarnctl.rm import HttpSettings, NodeManager, Reply, ResourceManager
from yarnctl.rm import transport as transport_mod
from yarnctl.rm.observe import ClusterObserver

RM = "http://rm:8088"


def _rm(table: dict[tuple[str, str], Any]) -> ResourceManager:
    return ResourceManager([RM], transport=FakeTransport(table), sleep=lambda s: None,
                           settings=HttpSettings(retries=0))


def _apps_with(**app: Any) -> str:
    doc = fixture_doc("apps_running")
    doc["apps"]["app"][0].update(app)
    return json.dumps(doc)


@pytest.mark.parametrize("body, words", [
    ("[" * 100_000 + "]" * 100_000, "response is JSON nested too deeply to read"),  # a RecursionError
    ('{"apps": {"app": [{"id": ' + "9" * 5000 + "}]}}", "a number of more than 4,300 digits"),
    (_apps_with(progress=float("nan")), "field 'apps.app[0].progress' expected a finite number, got NaN"),
    (_apps_with(progress=float("inf")), "field 'apps.app[0].progress' expected a finite number, got Infinity"),
    (_apps_with(allocatedMB=10**400), "field 'apps.app[0].allocatedMB' expected an integer a Java long holds"),  # OverflowError
    (_apps_with(progress=10**400), "field 'apps.app[0].progress' expected a number a double holds"),  # OverflowError
    (_apps_with(allocatedMB=1e300), "field 'apps.app[0].allocatedMB' expected an integer a Java long holds"),
    ('{"error": "not authorised"}', "field 'apps' missing"),  # it was an empty cluster
], ids=["deep", "5000-digits", "nan", "infinity", "huge-int", "huge-int-as-float", "1e300-as-int", "no-apps-key"])
def test_garbage_in_an_answer_is_one_rm_error(body: str, words: str) -> None:
    rm = _rm({(RM, "/ws/v1/cluster/apps"): ok(body)})
    with pytest.raises(RMError) as e:
        rm.apps()
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_stats_unset_minimum_is_read() -> None:
    """A usage bean's minimum before any sample is Float.MAX_VALUE (seen on a live 2.7.7 NodeManager): finite."""
    assert _rm({(RM, "/ws/v1/cluster/apps"): ok(_apps_with(progress=3.4028234663852886e38))}).apps()[0].progress > 1e38


def test_empty_lists_as_jersey_sends_them_are_still_empty() -> None:
    rm = _rm({(RM, "/ws/v1/cluster/apps"): ok('{"apps": null}'), (RM, "/ws/v1/cluster/nodes"): ok('{"nodes": {}}')})
    assert rm.apps() == () and rm.nodes() == ()


@pytest.mark.parametrize("location", ["http://127.0.0.1:99999/", "http://h:abc/", "http://[::1/x"],
                         ids=["port-out-of-range", "port-not-a-number", "unclosed-ipv6"])
def test_a_redirect_to_an_unreadable_location_is_not_followed(location: str) -> None:
    rm = _rm({(RM, "/ws/v1/cluster/info"): Reply("", 307, "", location=location)})
    with pytest.raises(RMError) as e:  # a ValueError from urlsplit's port before
        rm.cluster_info()
    assert "not a configured RM, not followed" in str(e.value)


def test_the_shim_bean_is_found_by_name_when_jmx_ignores_the_query() -> None:
    beans = fixture_doc("rm_jmx")["beans"] + fixture_doc("rm_jmx_shim")["beans"]  # the shim's last, not first
    rm = _rm({(RM, "/jmx"): ok(json.dumps({"beans": beans}))})
    assert rm.shim_metrics() is not None
    assert _rm({(RM, "/jmx"): ok(fixture("rm_jmx"))}).shim_metrics() is None


def test_one_garbage_node_manager_is_counted_and_the_rest_read() -> None:
    nodes = fixture_doc("nodes_running")
    nodes["nodes"]["node"][0]["nodeHTTPAddress"] = "[::1"  # an unclosed IPv6 bracket: a ValueError before
    table = {(RM, "/ws/v1/cluster/nodes"): ok(json.dumps(nodes)), (RM, "/ws/v1/cluster/apps"): ok(fixture("apps_running")),
             (RM, "/jmx"): ok(fixture("rm_jmx_shim"))}
    nm_fake = FakeTransport({("http://", "/ws/v1/node/containers"): ok('{"containers": null}'),
                             ("http://", "/jmx"): ok('{"beans": [{"name": "x", "v": NaN}]}')})
    made: list[str] = []

    def nm(url: str) -> NodeManager:
        made.append(url)
        return NodeManager(url, transport=nm_fake, sleep=lambda s: None)

    observer = ClusterObserver(_rm(table), usage=True, clock=lambda: 1000.0, node_manager=nm)
    reading = observer.read()
    assert reading.nm_failures == 1 and len(reading.observation.nodes) == len(nodes["nodes"]["node"])
    for _ in range(3):
        observer.read()
    nodes["nodes"]["node"] = nodes["nodes"]["node"][1:]  # the bad node leaves
    table[(RM, "/ws/v1/cluster/nodes")] = ok(json.dumps(nodes))
    observer.read()
    assert len(observer._nms) == len(nodes["nodes"]["node"])  # one client per live node: it grew per address seen


class _Trickle(HttpStub):
    """Sends a valid answer one byte at a time, each well inside the read timeout."""

    def __init__(self) -> None:
        super().__init__()
        handler = self.server.RequestHandlerClass

        def do_get(h: Any) -> None:
            body = fixture("cluster_info").encode()
            h.send_response(200)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            for b in body:
                h.wfile.write(bytes([b]))
                h.wfile.flush()
                time.sleep(0.05)

        handler.do_GET = do_get  # type: ignore[attr-defined]


class _Huge(HttpStub):
    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "application/json"}, b" " * (transport_mod.MAX_BODY_BYTES + 1)


def test_a_trickling_answer_ends_at_the_answer_timeout() -> None:
    stub = _Trickle()
    try:
        rm = ResourceManager([stub.url], settings=HttpSettings(retries=0, answer_timeout_s=0.5), sleep=lambda s: None)
        t0 = time.monotonic()
        with pytest.raises(RMError, match="the answer was not complete within 0.5 s"):
            rm.cluster_info()  # at 1 byte per 50 ms it took minutes; the read timeout never fired
        assert time.monotonic() - t0 < 10
    finally:
        stub.stop()


def test_an_endless_answer_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport_mod, "MAX_BODY_BYTES", 1 << 20)  # 1.5 GB took the process to 3 GB of memory
    stub = _Huge()
    try:
        rm = ResourceManager([stub.url], settings=HttpSettings(retries=0), sleep=lambda s: None)
        with pytest.raises(RMError, match="an answer of more than 1 MiB"):
            rm.cluster_info()
    finally:
        stub.stop()
