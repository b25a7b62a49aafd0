"""Errors a person can act on, yarn-site.xml address discovery, and the requests transport's settings."""

from __future__ import annotations

import builtins
import io
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from rmfakes import FakeTransport, fixture, ok
from yarnctl.errors import YarnctlError
from yarnctl.model import Resources
from yarnctl.rm import (
    HttpSettings,
    HttpTransport,
    NodeManager,
    Reply,
    ResourceManager,
    RMConfigError,
    RMHTTPError,
    RMParseError,
    rm_urls_from_yarn_site,
)

RM = "http://rm:8088"


@pytest.mark.parametrize("body,field,words", [
    ("<html><body>Login required</body></html>", "", "not JSON"),
    ("", "", "empty response"),
    ('{"clusterMetrics": {"appsSubmitted": "many"}}', "clusterMetrics.appsSubmitted", "expected an integer"),
    ('{"clusterMetrics": {}}', "clusterMetrics.appsSubmitted", "missing"),
    ('{"other": 1}', "clusterMetrics", "missing"),
    ('[1, 2]', "", "expected a JSON object"),
], ids=["html", "empty", "wrong-type", "missing-field", "missing-root", "not-object"])
def test_garbage_is_a_parse_error_naming_url_and_field(body: str, field: str, words: str) -> None:
    rm = ResourceManager([RM], transport=FakeTransport({(RM, "/metrics"): ok(body)}))
    with pytest.raises(RMParseError) as e:
        rm.metrics()
    assert e.value.field == field
    assert words in str(e.value) and "/ws/v1/cluster/metrics" in str(e.value)
    assert isinstance(e.value, YarnctlError)


def test_nested_list_item_field_path() -> None:
    doc = fixture("apps_running").replace('"relaxLocality": true', '"relaxLocality": "yes"', 1)
    rm = ResourceManager([RM], transport=FakeTransport({(RM, "/apps"): ok(doc)}))
    with pytest.raises(RMParseError) as e:
        rm.apps()
    assert e.value.field == "apps.app[0].resourceRequests[0].relaxLocality"


@pytest.mark.parametrize("status,words", [
    (500, "HTTP 500: java.lang.NullPointerException"),
    (401, "klist"),
], ids=["server-error", "needs-auth"])
def test_http_errors(status: int, words: str) -> None:
    body = '{"RemoteException": {"exception": "X", "message": "java.lang.NullPointerException"}}'
    rm = ResourceManager([RM], transport=FakeTransport({(RM, "/scheduler"): Reply("", status, body)}))
    with pytest.raises(RMHTTPError) as e:
        rm.scheduler()
    assert e.value.status == status and words in str(e.value)


def test_empty_lists_come_as_null() -> None:
    rm = ResourceManager([RM], transport=FakeTransport({(RM, "/apps"): ok('{"apps": null}')}))
    assert rm.apps() == ()
    nm = NodeManager("nm:8042", transport=FakeTransport({("http://nm:8042", "/containers"): ok('{"containers": {}}')}))
    assert nm.containers() == ()


def test_capacity_and_fair_scheduler_keep_raw_type_and_queues() -> None:
    capacity = ('{"scheduler": {"schedulerInfo": {"type": "capacityScheduler", "capacity": 100.0, "usedCapacity": 12.5,'
                ' "maxCapacity": 100.0, "queueName": "root", "queues": {"queue": [{"type": "capacitySchedulerLeafQueueInfo",'
                ' "capacity": 100.0, "usedCapacity": 12.5, "maxCapacity": 100.0, "queueName": "default",'
                ' "numApplications": 1, "resourcesUsed": {"memory": 1024, "vCores": 2}}]}}}}')
    fair = ('{"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": {"queueName": "root",'
            ' "usedResources": {"memory": 512, "vCores": 1}, "childQueues": [{"queueName": "root.default",'
            ' "usedResources": {"memory": 512, "vCores": 1}, "numActiveApps": 1, "numPendingApps": 2}]}}}}')
    cs = ResourceManager([RM], transport=FakeTransport({(RM, "/scheduler"): ok(capacity)})).scheduler()
    assert cs.type == "capacityScheduler" and cs.fifo is None and cs.root is not None
    leaf = cs.root.children[0]
    assert (leaf.name, leaf.used_capacity, leaf.num_applications, leaf.used) == ("default", 12.5, 1, Resources(1024, 2))
    fs = ResourceManager([RM], transport=FakeTransport({(RM, "/scheduler"): ok(fair)})).scheduler()
    assert fs.type == "fairScheduler" and fs.root is not None
    assert [(q.name, q.num_applications) for q in fs.root.children] == [("root.default", 3)]


# ---------------------------------------------------------------- yarn-site.xml


def site(tmp_path: Path, props: dict[str, str]) -> Path:
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in props.items())
    p = tmp_path / "yarn-site.xml"
    p.write_text(f"<?xml version='1.0'?><configuration>{body}</configuration>")
    return p


@pytest.mark.parametrize("props,urls", [
    ({"yarn.resourcemanager.webapp.address": "rm:8088"}, ["http://rm:8088"]),
    ({"yarn.resourcemanager.hostname": "rmhost"}, ["http://rmhost:8088"]),
    ({"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1, rm2",
      "yarn.resourcemanager.webapp.address.rm1": "a:8088", "yarn.resourcemanager.webapp.address.rm2": "b:8088"},
     ["http://a:8088", "http://b:8088"]),
    ({"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
      "yarn.http.policy": "HTTPS_ONLY",
      "yarn.resourcemanager.webapp.https.address.rm1": "a:8090", "yarn.resourcemanager.hostname.rm2": "b"},
     ["https://a:8090", "https://b:8090"]),
    ({"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "x,y",
      "yarn.resourcemanager.hostname.x": "hx", "yarn.resourcemanager.hostname.y": "hy",
      "yarn.resourcemanager.webapp.address.x": "${yarn.resourcemanager.hostname.x}:18088",
      "yarn.resourcemanager.webapp.address.y": "0.0.0.0:18088"},
     ["http://hx:18088", "http://hy:18088"]),
], ids=["single", "hostname-default-port", "ha", "ha-https-only", "ha-variables-and-bind-all"])
def test_yarn_site_addresses(tmp_path: Path, props: dict[str, str], urls: list[str]) -> None:
    path = site(tmp_path, props)
    assert rm_urls_from_yarn_site(path) == urls
    assert ResourceManager.from_yarn_site(path).urls == tuple(urls)


@pytest.mark.parametrize("props,words", [
    ({}, "neither yarn.resourcemanager.webapp.address nor yarn.resourcemanager.hostname"),
    ({"yarn.resourcemanager.ha.enabled": "true"}, "rm-ids is empty"),
    ({"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1"},
     "yarn.resourcemanager.webapp.address.rm1"),
    ({"yarn.resourcemanager.webapp.address": "nonsense"}, "is not host:port"),
], ids=["nothing", "ha-no-ids", "ha-id-without-address", "bad-address"])
def test_yarn_site_errors_name_the_file_and_key(tmp_path: Path, props: dict[str, str], words: str) -> None:
    path = site(tmp_path, props)
    with pytest.raises(RMConfigError) as e:
        rm_urls_from_yarn_site(path)
    assert str(path) in str(e.value) and words in str(e.value)


def test_unreadable_yarn_site(tmp_path: Path) -> None:
    with pytest.raises(RMConfigError, match="cannot read"):
        rm_urls_from_yarn_site(tmp_path / "missing.xml")


# ---------------------------------------------------------------- transport settings


class RecordingSession:
    """Stands in for requests.Session: records what the transport asks for."""

    def __init__(self) -> None:
        self.headers: dict[str, str] = {}
        self.verify: Any = None
        self.auth: Any = None
        self.kwargs: dict[str, Any] = {}

    def get(self, url: str, **kwargs: Any) -> Any:
        self.kwargs = kwargs
        class Raw(io.BytesIO):
            def read1(self, amt: int = -1, decode_content: bool = True) -> bytes:  # urllib3's signature
                return super().read1(amt)

        r = requests.Response()
        r.status_code, r.url, r.encoding, r.raw = 200, url, "utf-8", Raw(b"{}")
        return r


def test_transport_sends_timeouts_verify_and_never_follows_redirects() -> None:
    s = RecordingSession()
    t = HttpTransport(HttpSettings(connect_timeout_s=1.5, read_timeout_s=7, verify="/etc/ca.pem"), session=s)  # type: ignore[arg-type]
    t.get("http://rm:8088/ws/v1/cluster/apps", {"states": "RUNNING"})
    assert s.kwargs == {"params": {"states": "RUNNING"}, "allow_redirects": False, "stream": True, "timeout": (1.5, 7)}
    assert s.verify == "/etc/ca.pem" and s.headers["Accept"] == "application/json"


def test_kerberos_without_the_extra_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_kerberos(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "requests_kerberos":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "requests_kerberos", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_kerberos)
    with pytest.raises(RMConfigError, match=r"pip install 'yarnctl\[kerberos\]'"):
        HttpTransport(HttpSettings(auth="kerberos"), session=RecordingSession())  # type: ignore[arg-type]


def test_kerberos_with_the_extra_uses_spnego(monkeypatch: pytest.MonkeyPatch) -> None:
    import types
    fake = types.ModuleType("requests_kerberos")
    fake.OPTIONAL = "optional"  # type: ignore[attr-defined]
    fake.HTTPKerberosAuth = lambda mutual_authentication: ("spnego", mutual_authentication)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "requests_kerberos", fake)
    s = RecordingSession()
    HttpTransport(HttpSettings(auth="kerberos"), session=s)  # type: ignore[arg-type]
    assert s.auth == ("spnego", "optional")


def test_real_connection_refused_reads_well() -> None:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    nm = NodeManager(f"127.0.0.1:{port}", settings=HttpSettings(retries=0, connect_timeout_s=1))
    with pytest.raises(YarnctlError) as e:
        nm.info()
    assert f"http://127.0.0.1:{port}: connection failed ([Errno 111] Connection refused)" in str(e.value)
    assert "no NodeManager answered GET /ws/v1/node/info" in str(e.value)


@pytest.mark.parametrize("url, words", [
    ("ftp://rm1:8088", "is not an http(s)://host:port address"),
    ("http://:8088", "is not an http(s)://host:port address"),
    ("rm1:80x88", "has a bad port"),
    ("  ", "empty ResourceManager/NodeManager address"),
    ("http://", "'http://' is not an http(s)://host:port address"),  # was read as the host "http"
], ids=["not-http", "no-host", "bad-port", "empty", "scheme-only"])
def test_bad_addresses_are_refused_before_any_call(url: str, words: str) -> None:
    with pytest.raises(RMConfigError, match=re.escape(words)):
        ResourceManager([url])
