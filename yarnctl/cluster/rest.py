"""The few ResourceManager REST calls the local cluster needs (stdlib HTTP, explicit timeouts)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from yarnctl.errors import ClusterError

TERMINAL_STATES = ("FINISHED", "FAILED", "KILLED")


class RMRest:
    """GETs against one RM's /ws/v1/cluster API; every response is a parsed JSON dict."""

    def __init__(self, base_url: str, timeout_s: float = 5.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def get(self, path: str) -> dict[str, Any]:
        """GET base_url + path as JSON; ClusterError when unreachable or not JSON."""
        url = self.base_url + path
        req = urllib.request.Request(url, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                doc = json.loads(resp.read().decode())
        except urllib.error.HTTPError as e:
            raise ClusterError(f"GET {url}: HTTP {e.code}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ClusterError(f"GET {url}: {getattr(e, 'reason', e)}") from None
        except ValueError:
            raise ClusterError(f"GET {url}: response is not JSON") from None
        if not isinstance(doc, dict):
            raise ClusterError(f"GET {url}: expected a JSON object")
        return doc

    def info(self) -> dict[str, Any]:
        """/ws/v1/cluster/info: id, startedOn, state (STARTED once up), haState, hadoopVersion."""
        return dict(self.get("/ws/v1/cluster/info")["clusterInfo"])

    def metrics(self) -> dict[str, Any]:
        """/ws/v1/cluster/metrics: apps submitted/pending/running, MB and vcores allocated/available, nodes."""
        return dict(self.get("/ws/v1/cluster/metrics")["clusterMetrics"])

    def nodes(self) -> list[dict[str, Any]]:
        """/ws/v1/cluster/nodes: id, state, nodeHTTPAddress, used/availMemoryMB, used/availableVirtualCores."""
        return list((self.get("/ws/v1/cluster/nodes").get("nodes") or {}).get("node") or [])

    def apps(self, states: str | None = None) -> list[dict[str, Any]]:
        """/ws/v1/cluster/apps[?states=A,B]: id, name, state, finalStatus, progress, elapsedTime..."""
        path = "/ws/v1/cluster/apps" + (f"?states={states}" if states else "")
        return list((self.get(path).get("apps") or {}).get("app") or [])

    def app(self, app_id: str) -> dict[str, Any]:
        """/ws/v1/cluster/apps/{id}."""
        return dict(self.get(f"/ws/v1/cluster/apps/{app_id}")["app"])
