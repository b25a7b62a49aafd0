"""Hadoop 2.7.7's own ResourceManager tests against the shim: every failure must be a listed deviation.

java-bridge/hadoop-tests runs 20 of Hadoop's RM test classes with every FifoScheduler reference
rewritten to YarnctlScheduler. The tests that fail are compared with the table of deviations in
docs/bridge.md ("Hadoop's own ResourceManager tests"): a failure not listed there fails this test,
so the shim cannot drift from the scheduler it replaces without the docs saying so. Two runs, both
configured as stock FifoScheduler (`yarnctl.shim.memory-only`, and no AM limit: `serve --max-am-share 1`,
`yarnctl.shim.native.max-am-share=1`), where only the tests that fail under stock FifoScheduler too
(and the listed timing-flaky ones) may fail:
- the quick classes with a real `yarnctl serve --policy fifo` deciding (its decision log must show it did);
- the same classes with Python unreachable, so the shim's native FIFO fallback decides.
`make hadoop-tests` runs stock, the vcore-aware shim and, with YARNCTL_HADOOP_TESTS=all, Python deciding
on every class (7.4 min on the 2-core CI machine, too long for `make test`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from live import wait_until
from yarnctl.bridge.decisionlog import LogReader
from yarnctl.cluster import classpath as cp
from yarnctl.cluster.ports import free_ports, is_listening

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "java-bridge" / "hadoop-tests"
PREFIX = "org.apache.hadoop.yarn.server.resourcemanager."
_ROW = re.compile(r"^\| `([\w.$]+#\w+)` \| (stock|vcores|flaky) \|", re.M)
QUICK = ("SchedulerModeTest,TestFifoScheduler,TestApplicationMasterService,TestResourceTrackerService,"
         "TestRMNodeTransitions,TestNMReconnect,TestSchedulerUtils,TestMoveApplication,TestClientRMService")


def chosen() -> tuple[str, ...]:
    """The -Dtest filter for the Python-deciding run: the quick classes, or none (every class) when asked."""
    return () if os.environ.get("YARNCTL_HADOOP_TESTS") == "all" else (f"-Dtest={QUICK}",)


def deviations() -> dict[str, str]:
    """test (Class#method, package after resourcemanager.) -> why it may fail: stock, vcores or flaky."""
    rows = dict(_ROW.findall((ROOT / "docs" / "bridge.md").read_text()))
    assert len(rows) >= 5, "docs/bridge.md lost its table of deviations from stock FifoScheduler"
    return rows


def run_module(out: Path, *props: str) -> dict[str, str | None]:
    """Run the module in shim mode; every test case -> None (passed) or its first failure line."""
    assert shutil.which("mvn"), "mvn not on PATH"
    cp.ensure_shim_jar(ROOT)  # compiles java-bridge/target/classes, which the module puts on its class path
    reports = MODULE / "target" / "surefire-reports-shim"
    shutil.rmtree(reports, ignore_errors=True)
    cmd = ["mvn", "-B", "-q", "-f", str(MODULE), "test", "-Dscheduler=shim", "-Dyarnctl.memoryOnly=true",
           "-Dyarnctl.nativeMaxAmShare=1", *props]
    with (out / "mvn.log").open("w") as log:
        done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=1800)
    assert done.returncode == 0, f"the Hadoop tests module did not run: read {out / 'mvn.log'}"
    cases: dict[str, str | None] = {}
    for xml in sorted(reports.glob("TEST-*.xml")):
        for case in ET.parse(xml).getroot().iter("testcase"):
            name = f"{case.get('classname', '').removeprefix(PREFIX)}#{case.get('name')}"
            bad = case.find("failure") if case.find("failure") is not None else case.find("error")
            cases[name] = None if bad is None else (bad.get("message") or bad.get("type") or "").splitlines()[0][:200]
    return cases


def unlisted_failures(cases: dict[str, str | None], allowed: set[str]) -> list[str]:
    return [f"{name}: {why}" for name, why in sorted(cases.items()) if why is not None and name not in allowed]


@pytest.fixture(scope="module")
def allowed() -> set[str]:
    # memory-only mode: only what fails under stock FifoScheduler too, or is listed as timing-flaky
    return {t for t, kind in deviations().items() if kind in ("stock", "flaky")}


def test_with_python_deciding_the_shim_fails_only_where_stock_fifo_does(tmp_path: Path, allowed: set[str]) -> None:
    port = free_ports(1)[0]
    token, decisions = tmp_path / "bridge.token", tmp_path / "decisions.jsonl"
    with (tmp_path / "serve.log").open("w") as log:
        serve = subprocess.Popen([sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "fifo",
                                  "--max-am-share", "1", "--port", str(port), "--token-file", str(token),
                                  "--decision-log", str(decisions),
                                  "--no-status-file", "--no-state-file"], stdout=log, stderr=subprocess.STDOUT)
    try:
        # listening before the shims start, or they would fall back natively and the run would test nothing
        try:
            wait_until("yarnctl serve listening or gone",
                       lambda: is_listening("127.0.0.1", port) or serve.poll() is not None)
        except AssertionError as e:
            raise AssertionError(f"{e}; its log ends: {(tmp_path / 'serve.log').read_text()[-2000:]}") from None
        assert serve.poll() is None, (tmp_path / "serve.log").read_text()[-2000:]
        cases = run_module(tmp_path, f"-Dyarnctl.token={token}", f"-Dyarnctl.port={port}", *chosen())
    finally:
        serve.terminate()
        serve.wait(timeout=30)
    failed = sorted(n for n, why in cases.items() if why is not None)
    print(f"{len(cases)} Hadoop RM tests with Python deciding: {len(cases) - len(failed)} passed, failed: {failed}")
    assert len(cases) >= (140 if not chosen() else 90), f"only {len(cases)} test cases ran: read {tmp_path / 'mvn.log'}"
    assert not unlisted_failures(cases, allowed), unlisted_failures(cases, allowed)
    records = list(LogReader(decisions))
    fulls = sum(1 for r in records if (r["req"] or {}).get("full"))
    placed = sum(a[2] for r in records for a in (r["resp"] or {}).get("a", []))
    print(f"yarnctl serve answered {len(records)} calls ({fulls} full syncs, one per shim started), placing {placed}")
    assert fulls >= 30 and placed >= (20 if chosen() else 40), (fulls, placed)  # quick classes: 32 and 31 here


def test_with_python_gone_the_native_fallback_fails_only_where_stock_fifo_does(tmp_path: Path,
                                                                               allowed: set[str]) -> None:
    token = tmp_path / "bridge.token"
    token.write_text("a-token-nobody-serves\n")
    token.chmod(0o600)
    closed = free_ports(1)[0]  # nothing listens: every call is refused and the breaker opens
    cases = run_module(tmp_path, f"-Dyarnctl.token={token}", f"-Dyarnctl.port={closed}", f"-Dtest={QUICK}")
    failed = sorted(n for n, why in cases.items() if why is not None)
    print(f"{len(cases)} Hadoop RM tests in native fallback: {len(cases) - len(failed)} passed, failed: {failed}")
    assert len(cases) >= 90, f"only {len(cases)} test cases ran: read {tmp_path / 'mvn.log'}"
    assert not unlisted_failures(cases, allowed), unlisted_failures(cases, allowed)
    out = "".join(p.read_text(errors="replace") for p in (MODULE / "target" / "surefire-reports-shim").glob("*-output.txt"))
    assert "circuit breaker open" in out, "the shim never fell back because Python was unreachable"
