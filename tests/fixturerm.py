"""A real HTTP server answering the RM paths `yarnctl status` and the control loop read, from tests/rm/fixtures."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "rm" / "fixtures"
ROUTES = {"/ws/v1/cluster/nodes": "nodes_running", "/ws/v1/cluster/apps": "apps_running", "/jmx": "rm_jmx_shim",
          "/ws/v1/cluster/info": "cluster_info", "/ws/v1/cluster/metrics": "cluster_metrics_running",
          "/ws/v1/cluster/scheduler": "scheduler_running"}


class FixtureRM:
    """Serves ROUTES on 127.0.0.1 (`port` 0: any free port); `stop()` makes it unreachable, as a dead RM."""

    def __init__(self, port: int = 0) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                name = ROUTES.get(self.path.split("?")[0])
                body = (FIXTURES / f"{name}.json").read_bytes() if name else b"{}"
                self.send_response(200 if name else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
