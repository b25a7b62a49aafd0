"""`yarnctl status` against the real cluster while a SleepJob runs, with `yarnctl serve --rm` behind the shim."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live import Live

pytestmark = pytest.mark.integration


@pytest.fixture
def status_serve(cluster: Live, tmp_path: Path) -> Iterator[Path]:
    """`yarnctl serve --rm RM --tune-interval 1` behind the shim; yields its status file."""
    status = tmp_path / "serve-status.json"
    cluster.stop_serve()
    cluster.start_yarnctl_serve(["--no-decision-log", "--status-file", str(status), "--rm", cluster.info.rm_url,
                                 "--tune-interval", "1"], tmp_path / "serve.log")
    try:
        cluster.wait_delegating()
        yield status
    finally:
        cluster.stop_serve()
        cluster.start_serve("fifo")  # the later tests expect a fifo server behind the shim, as up() left it


def _status(cluster: Live, status: Path, *extra: str) -> str:
    done = subprocess.run([sys.executable, "-m", "yarnctl.cli.main", "status", "--rm", cluster.info.rm_url,
                           "--serve-status", str(status), *extra], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _running_app(cluster: Live, status: Path, timeout_s: float = 90) -> dict[str, Any]:
    """`status --json` once the job's maps run and the control loop has measured a container."""
    deadline = time.monotonic() + timeout_s
    while True:
        doc = json.loads(_status(cluster, status, "--json"))
        loop = (doc["serve"] or {}).get("control_loop") or {}
        apps = [a for a in doc["apps"] if a["running_containers"] >= 2]
        if apps and (loop.get("containers_measured") or 0) >= 1:
            return doc
        assert time.monotonic() < deadline, f"no running app with a measured container: {doc['apps']}, {loop}"
        time.sleep(1)


def test_status_shows_the_running_cluster_and_the_policy_server(cluster: Live, status_serve: Path) -> None:
    job = cluster.start(["-m", "2", "-r", "1", "-mt", "25000", "-rt", "1000"], "sleep")
    try:
        doc = _running_app(cluster, status_serve)
        text = _status(cluster, status_serve)
    finally:
        out, _ = job.communicate(timeout=300)
    assert job.returncode == 0, out[-3000:]
    print(text)
    assert len(doc["nodes"]) == len(cluster.info.nodes)
    assert doc["serve"]["running"] is True and doc["serve"]["policy"] == "fifo"
    assert doc["serve"]["control_loop"]["stale"] is False
    assert doc["shim"]["delegated"] > 0 and doc["shim"]["breaker_open"] is False
    app = next(a for a in doc["apps"] if a["running_containers"] >= 2)
    assert app["allocated"]["memory_mb"] > 0 and app["memory_seconds"] > 0
    # the text view: every node, the app with its user and queue, the server's lines
    for node in doc["nodes"]:
        assert node["id"] in text
    assert re.search(rf"{app['id']}\s+{app['user']}\s+default\s+RUNNING", text), text
    assert "fifo serving" in text and "fresh · polls" in text and "containers measured" in text
    assert "breaker closed" in text
