"""`sweep run --executor dask` on a real Dask scheduler and two workers on loopback, one of them killed mid-sweep."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from yarnctl.cli.main import main
from yarnctl.sweep.run import run_sweep
from yarnctl.sweep.spec import load_spec

# 2 policies x 3 parameter values x 3 seeds; dress-mr20 cells take a few tenths of a second, so a
# worker killed after the first result is still holding cells
SPEC = dict(workloads=["dress-mr20"], params=["ffd-dp.memory_weight=0.5,1,2", "dress.initial_reserve=0.1:0.3:0.1"],
            seeds="0:2")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def test_dask_gives_the_local_table_even_when_a_worker_dies(tmp_path: Path) -> None:
    from distributed import Client

    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    scheduler = _spawn("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                       "--dashboard-address", ":0")
    workers = [_spawn("distributed.cli.dask_worker", addr, "--nworkers", "1", "--nthreads", "1", "--name", f"w{i}",
                      "--dashboard-address", ":0") for i in range(2)]
    killed: list[int] = []
    try:
        with Client(addr, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)

        def kill_one(finished: int, total: int, label: str) -> None:
            if finished == 1 and not killed:
                os.killpg(workers[0].pid, signal.SIGKILL)  # nanny and worker: a machine gone
                killed.append(workers[0].pid)

        spec = load_spec(None, **SPEC)  # type: ignore[arg-type]
        on_dask = run_sweep(spec, tmp_path / "dask", executor="dask", scheduler=addr, progress=kill_one)
    finally:
        for p in (*workers, scheduler):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert killed, "no worker was killed"
    assert (on_dask.cells, on_dask.ran, on_dask.failed) == (18, 18, ())
    local = run_sweep(spec, tmp_path / "local", executor="local", workers=2)
    assert local.ran == 18
    a, b = (pd.read_csv(tmp_path / d / "results.csv").drop(columns=["cell_s"]) for d in ("dask", "local"))
    assert a["key"].is_unique and len(a) == 18  # no duplicate, none missing
    pd.testing.assert_frame_equal(a, b)


def test_an_unreachable_scheduler_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sweep", "run", "--workload", "haste-mixed1", "--policy", "fifo", "--executor", "dask",
                 "--scheduler", f"tcp://127.0.0.1:{_free_port()}", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "no Dask scheduler answered" in err, err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1


@pytest.mark.parametrize("address", ["notaurl", "tcp://10.0.0.5", "tcp://10.0.0.5:0", "http://10.0.0.5:8786"])
def test_a_malformed_scheduler_address_is_one_line_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                        address: str) -> None:
    code = main(["sweep", "run", "--workload", "haste-mixed1", "--policy", "fifo", "--executor", "dask",
                 "--scheduler", address, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err == (f"error: --scheduler {address!r}: expected a Dask scheduler's address, "
                                 f"tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)\n")
    assert not (tmp_path / "sweep.json").exists()


def test_the_addresses_dask_connects_to_pass_the_check() -> None:
    from yarnctl.sweep.executors import check_scheduler

    for address in ("tcp://10.0.0.5:8786", "10.0.0.5:8786", "tls://scheduler.example.org:8786", "tcp://[::1]:8786"):
        check_scheduler(address)
