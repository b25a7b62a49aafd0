"""`yarnctl bench fidelity`'s small case: one mix (fid-mixed: 8 SleepJobs, large between small) run for
real under the stock FifoScheduler and FairScheduler, the start-up costs fitted on the FIFO run, both
replayed in the simulator. Fails when the simulator's median |error| of job completion exceeds 20%."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_the_simulator_predicts_a_real_mix_within_20_percent(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "yarnctl.cli.main", "bench", "fidelity", "--mix", "fid-mixed",
           "--scheduler", "native-fifo,native-fair", "--no-sls", "--cluster-dir", str(tmp_path / "clusters"),
           "--out", str(out), "--max-median-error", "20"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads((out / "fidelity.json").read_text())
    jobs = doc["jobs"]
    assert {(j["scheduler"], j["job"]) for j in jobs} == {(s, f"x{i}") for s in ("native-fifo", "native-fair")
                                                          for i in range(1, 9)}
    assert all(j["real"]["completion_s"] > 0 and j["sim"]["completion_s"] > 0 for j in jobs)
    st = doc["startup"]
    assert st["launch_s"] + st["am_s"] > 0  # starting JVMs costs seconds on a real cluster: the fit found it
    assert (out / "fid-mixed" / "workload-native-fair.yaml").is_file() and (out / "fidelity.png").is_file()
    # run again on the kept runs with the fitted costs: nothing real is re-run and the numbers are the same
    again = subprocess.run([*cmd[:-2], "--startup", f"{st['am_s']},{st['launch_s']},{st['launch_per_concurrent_s']}",
                            "--json"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "reusing the real run under native-fair" in again.stderr
    assert json.loads(again.stdout)["jobs"] == jobs
