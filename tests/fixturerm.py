"""Real HTTP servers in threads for RM client tests: a stub base, and one answering the RM paths `yarnctl status`
and the control loop read from tests/rm/fixtures (recorded from a live 2.7.7 RM)."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "rm" / "fixtures"
ROUTES = {"/ws/v1/cluster/nodes": "nodes_running", "/ws/v1/cluster/apps": "apps_running", "/jmx": "rm_jmx_shim",
          "/ws/v1/cluster/info": "cluster_info", "/ws/v1/cluster/metrics": "cluster_metrics_running",
          "/ws/v1/cluster/scheduler": "scheduler_running"}
JSON = {"Content-Type": "application/json"}


class HttpStub:
    """Serves GETs on 127.0.0.1 (`port` 0: any free port) with `answer`; `stop()` makes it unreachable."""

    def __init__(self, port: int = 0) -> None:
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                status, headers, body = stub.answer(self.path)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for a GET of `path` (query string included)."""
        raise NotImplementedError

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FixtureRM(HttpStub):
    """An RM that answers ROUTES with the recorded responses and 404 otherwise."""

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        name = ROUTES.get(path.split("?")[0])
        return (200, JSON, (FIXTURES / f"{name}.json").read_bytes()) if name else (404, JSON, b"{}")
