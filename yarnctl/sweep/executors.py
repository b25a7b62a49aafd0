"""Where cells run: local processes (all cores by default) or a Dask cluster (a scheduler address, or one started here).

Each executor takes (key, cell) pairs and reports every finished cell as it finishes, so the
caller stores it at once; a cell that raises is reported with its error and the others go on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from yarnctl.errors import ConfigError
from yarnctl.sweep.cell import run_cell
from yarnctl.sweep.spec import Cell, RunOptions

Done = Callable[[str, Cell, "dict[str, Any] | None", "str | None"], None]
EXECUTORS = ("local", "dask", "yarn")  # yarn: yarnctl/sweep/yarn.py
# the addresses distributed connects to: [SCHEME://]HOST:PORT, HOST a name, an IPv4 or a bracketed IPv6 address
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]):([0-9]{1,5})")


def run_local(tasks: Sequence[tuple[str, Cell]], options: RunOptions, done: Done, workers: int | None = None) -> None:
    """Run the cells on `workers` processes of this machine (default: every core)."""
    n = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=min(n, max(len(tasks), 1))) as pool:
        futures = {pool.submit(run_cell, cell, options): (key, cell) for key, cell in tasks}
        for f in as_completed(futures):
            key, cell = futures[f]
            err = f.exception()
            done(key, cell, None if err else f.result(), None if err is None else _why(err))


def check_scheduler(address: str) -> None:
    """ConfigError unless `address` has the form of a Dask scheduler's address (tcp://HOST:PORT), checked before connecting."""
    m = _ADDRESS.fullmatch(address)
    if m is None or not 0 < int(m.group(1)) < 65536:
        raise ConfigError(f"--scheduler {address!r}: expected a Dask scheduler's address, tcp://HOST:PORT "
                          f"(e.g. tcp://10.0.0.5:8786)")


def run_dask(tasks: Sequence[tuple[str, Cell]], options: RunOptions, done: Done, scheduler: str | None = None,
             workers: int | None = None) -> None:
    """Run the cells on the Dask scheduler at `scheduler` (tcp://HOST:8786), or on a LocalCluster of `workers` processes.

    A worker that dies mid-cell costs nothing but time: Dask runs its cells again elsewhere.
    """
    if scheduler is not None:
        check_scheduler(scheduler)
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError:  # pragma: no cover - a dependency of yarnctl
        raise ConfigError("--executor dask needs the `distributed` package: pip install distributed") from None
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    try:
        try:
            client = Client(scheduler or cluster, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise ConfigError(f"--scheduler {scheduler}: no Dask scheduler answered ({e})") from None
        with client:
            # keyed by content hash: a cell submitted twice is computed once
            futures = [client.submit(run_cell, cell, options, key=f"yarnctl-cell-{key}", pure=False)
                       for key, cell in tasks]
            by_key = {f.key: (key, cell) for f, (key, cell) in zip(futures, tasks)}
            for f in dask_completed(futures):
                key, cell = by_key[f.key]
                # not `f.status`: as_completed also hands over a future whose worker just died ("lost"), which
                # Dask is computing again; its result (or the cell's own error) is what to wait for
                try:
                    result = f.result()
                except Exception as e:  # the cell's own failure, or Dask's (KilledWorker after repeated deaths)
                    done(key, cell, None, _why(e))
                else:
                    done(key, cell, result, None)
    finally:
        if cluster is not None:
            cluster.close()


def _why(err: BaseException | None) -> str:
    """One line for a failed cell."""
    return f"{type(err).__name__}: {err}".splitlines()[0][:300] if err else "unknown error"
