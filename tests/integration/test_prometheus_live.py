"""A real Prometheus scrapes `yarnctl serve --metrics-port` while a SleepJob runs on the real cluster; every
PromQL expression of docker/grafana/yarnctl-dashboard.json returns data through its HTTP API."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard import exprs
from live import Live, wait_until

from yarnctl.cluster.ports import free_ports

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path(PROMETHEUS).is_file(),
                       reason="no prometheus binary: `apt-get install prometheus` (Debian's package) to run this test"),
]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


@pytest.fixture
def metrics_serve(cluster: Live, tmp_path: Path) -> Iterator[int]:
    """The cluster's policy server replaced by `yarnctl serve --policy fifo --metrics-port 0 --rm RM` (control loop
    on, polling every second); yields the metrics port."""
    assert cluster.info.token_file is not None
    cluster.stop_serve()
    log = tmp_path / "serve.log"
    cluster.start_yarnctl_serve(["--no-decision-log", "--no-status-file", "--metrics-port", "0",
                                 "--rm", cluster.info.rm_url, "--tune-interval", "1"], log)
    # port 0: the startup log line names the port the exporter bound
    m = wait_until("serve's metrics line",
                   lambda: re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", log.read_text()), 30)
    try:
        yield int(m.group(1))
    finally:
        cluster.stop_serve()
        cluster.start_serve("fifo")  # the later tests expect a fifo server behind the shim, as up() left it
        assert cluster.info.token_file.read_text().strip() not in log.read_text()


@pytest.fixture
def prometheus(metrics_serve: int, tmp_path: Path) -> Iterator[str]:
    """Debian's prometheus scraping the exporter every second; yields its base URL."""
    port = free_ports(1)[0]
    conf = tmp_path / "prometheus.yml"
    conf.write_text(f"global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n"
                    f"scrape_configs:\n  - job_name: yarnctl\n"
                    f"    static_configs: [{{targets: ['127.0.0.1:{metrics_serve}']}}]\n")
    with (tmp_path / "prometheus.log").open("w") as out:
        proc = subprocess.Popen([PROMETHEUS, f"--config.file={conf}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{port}"], stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until("prometheus ready", lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200, 60)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _query(url: str, expr: str) -> list[dict[str, Any]]:
    doc = _get(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert doc["status"] == "success", (expr, doc)
    return list(doc["data"]["result"])


def test_every_dashboard_query_returns_data(cluster: Live, prometheus: str) -> None:
    wait_until("target up", lambda: any(t["health"] == "up" for t in
                                        _get(f"{prometheus}/api/v1/targets")["data"]["activeTargets"]), 30)
    # 20 s maps: a NodeManager publishes a container's first usage sample about 10 s after it starts
    _app, record = cluster.run(["-m", "2", "-r", "1", "-mt", "20000", "-rt", "1000"], "sleep")
    assert record.final_status == "SUCCEEDED", record.diagnostics
    for expr in exprs():
        result = wait_until(f"data for {expr}", lambda: _query(prometheus, expr), 30)  # rate() needs 2 scrapes
        print(f"{expr} -> {[(r['metric'], r['value'][1]) for r in result]}")
    # the workload really went through the exporter's counters and the RM's nodes are seen
    assert float(_query(prometheus, "yarnctl_containers_assigned_total")[0]["value"][1]) >= 3
    assert float(_query(prometheus, "yarnctl_nodes")[0]["value"][1]) == len(cluster.info.nodes)
    assert float(_query(prometheus, "yarnctl_bridge_up")[0]["value"][1]) == 1
    ok = _query(prometheus, 'yarnctl_decisions_total{outcome="ok"}')
    assert float(ok[0]["value"][1]) > 0
    # the control loop read the RM, the shim's counters and the NodeManagers' container usage while it ran
    assert float(_query(prometheus, "yarnctl_control_loop_stale")[0]["value"][1]) == 0
    assert float(_query(prometheus, 'yarnctl_shim_heartbeats_total{outcome="delegated"}')[0]["value"][1]) > 0
    assert float(_query(prometheus, "yarnctl_shim_breaker_open")[0]["value"][1]) == 0
    used = _query(prometheus, "max_over_time(yarnctl_cluster_used_bytes[10m])")
    assert float(used[0]["value"][1]) > 0, "no container usage measured while the job ran"


def test_the_exporter_never_shows_the_token(cluster: Live, metrics_serve: int) -> None:
    assert cluster.info.token_file is not None
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_serve}/metrics", timeout=10) as r:
        body = r.read().decode()
    assert "yarnctl_info{" in body and cluster.info.token_file.read_text().strip() not in body
