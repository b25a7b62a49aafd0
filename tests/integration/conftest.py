"""One real Hadoop 2.7.7 cluster for the integration tests: RM with the shim, 2 NodeManagers and a
JobHistoryServer as separate JVMs (the same start scripts `yarnctl cluster up` and docker/ use), and
a policy server the tests may swap for another (a test policy, a fault injector) or kill."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from live import DEADLINE_MS, Live

from yarnctl.cluster.local import LocalCluster
from yarnctl.cluster.procs import processes_under


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    d = tmp_path_factory.mktemp("cluster")
    lc = LocalCluster(d)
    info = lc.up(nodes=2, policy="fifo", deadline_ms=DEADLINE_MS, token_file=d / "bridge.token")
    live = Live(lc, info)
    try:
        yield live
    finally:
        if live.serve is not None:
            live.serve.kill()
        live.rm.close()
        lc.down()
        left = processes_under(d, ("",), (str(d.resolve()),))
        assert not left, f"cluster down left processes running: {left}"
