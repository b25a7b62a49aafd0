"""`make bench-shim` for real, small: the Java HeartbeatBench against a real `yarnctl serve` at two cluster sizes.

Nothing is faked: the stock FifoScheduler and the shim run in one JVM, the shim's calls go over py4j to
the Python policy server, and the plot is drawn. The numbers themselves are not asserted (benchmarks
are measured, never timed in tests); what the sweep reports about each run is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_a_sweep_measures_native_shim_and_the_floor_at_each_size_and_plots_them(tmp_path: Path) -> None:
    png = tmp_path / "shim.png"
    r = subprocess.run([sys.executable, "-m", "yarnctl.bridge.shimbench", "--nodes", "20,60", "--heartbeats", "300",
                        "--floor-us", "50", "--plot", str(png), "--json"],
                       capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads(r.stdout)
    assert [(x["nodes"], x["mode"]) for x in rows] == [(20, "native"), (20, "shim"), (20, "floor-50us"),
                                                       (60, "native"), (60, "shim"), (60, "floor-50us")]
    for x in rows:
        assert x["heartbeats"] == 300 and 0 < x["p50_us"] <= x["p99_us"]
    for x in rows[1::3]:  # the shim: Python decided (a slow call may fall back natively now and then)
        assert x["delegated"] >= 270 and x["of_native"] > 0 and x["containers"] > 0
    for x in rows[2::3]:  # the floor answered every call with nothing, after at least its 50 µs
        assert x["delegated"] >= 270 and x["containers"] == 0 and x["p50_us"] >= 50 and x["of_native"] > 0
    for x in rows[0::3]:
        assert x["containers"] > 0
    assert "20 nodes: native,shim ..." in r.stderr and "60 nodes: native,shim ..." in r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
