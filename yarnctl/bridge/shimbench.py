"""Benchmark of the whole delegated heartbeat: the Java shim in a JVM calling `yarnctl serve` over py4j.

`python -m yarnctl.bridge.shimbench [--heartbeats 20000] [--policy fifo]` compiles java-bridge's test
classes, starts `yarnctl serve` on a free loopback port with a throwaway token, and runs
`io.yarnctl.shim.bench.HeartbeatBench` (1,000 nodes, 200 apps with pending requests) once with the
native FifoScheduler and once with YarnctlScheduler delegating to Python, in one run so the two are
measured on the same machine state. Prints a table (or `--json`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = ROOT / "java-bridge"
JVM_FLAGS = ["--add-opens", "java.base/java.lang=ALL-UNNAMED", "--add-opens", "java.base/java.util=ALL-UNNAMED",
             "--add-exports", "java.base/sun.net.dns=ALL-UNNAMED", "--add-exports", "java.base/sun.net.util=ALL-UNNAMED"]
COLUMNS = ("mode", "heartbeats", "p50_us", "p99_us", "heartbeats_per_s", "delegated", "fallback", "containers")


def _test_classpath() -> str:
    cp_file = BRIDGE / "target" / "test.cp"
    subprocess.run(["mvn", "-q", "-B", "-f", str(BRIDGE), "test-compile", "dependency:build-classpath",
                    f"-Dmdep.outputFile={cp_file}", "-Dmdep.includeScope=test"], check=True)
    return f"{BRIDGE / 'target/classes'}:{BRIDGE / 'target/test-classes'}:{cp_file.read_text().strip()}"


def _start_serve(policy: str, token: Path, gc_freeze: bool) -> tuple[subprocess.Popen[str], int]:
    cmd = [sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", policy, "--port", "0",
           "--token-file", str(token), "--no-decision-log"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    for line in proc.stderr:
        m = re.search(r"serving policy \S+ on [^ ]+:(\d+)", line)
        if m:
            return proc, int(m.group(1))
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise SystemExit(f"yarnctl serve did not start: {proc.stderr.read() if proc.stderr else ''}")


def run(heartbeats: int, policy: str, modes: str = "native,shim") -> list[dict[str, Any]]:
    """Run each mode and return the bench's JSON objects."""
    classpath = _test_classpath()
    with tempfile.TemporaryDirectory() as tmp:
        token = Path(tmp) / "token"
        token.write_text("bench-" + os.urandom(16).hex() + "\n")
        token.chmod(0o600)
        serve, port = _start_serve(policy, token, gc_freeze=True)
        try:
            out = subprocess.run(["java", *JVM_FLAGS, "-cp", classpath, "io.yarnctl.shim.bench.HeartbeatBench",
                                  str(heartbeats), str(port), str(token), modes],
                                 check=True, capture_output=True, text=True).stdout
        finally:
            serve.terminate()
            serve.wait(timeout=30)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the benchmark and print its table."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.bridge.shimbench", description=__doc__.splitlines()[0])
    p.add_argument("--heartbeats", type=int, default=20000, help="heartbeats per mode (default %(default)s)")
    p.add_argument("--policy", default="fifo", help="the Python policy (default %(default)s)")
    p.add_argument("--modes", default="native,shim",
                   help="comma-separated: native and shim (FIFO), native-cs and shim-cs (CapacityScheduler's one"
                        " default queue; the shim on it is not the shipped scheduler yet) (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the JSON objects")
    args = p.parse_args(argv)
    if bad := sorted(set(args.modes.split(",")) - {"native", "shim", "native-cs", "shim-cs"}):
        p.error(f"unknown mode(s) {', '.join(bad)}; choose from native, shim, native-cs, shim-cs")
    rows = run(args.heartbeats, args.policy, args.modes)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("  ".join(f"{c:>16}" for c in COLUMNS))
    for r in rows:
        print("  ".join(f"{r.get(c, ''):>16}" for c in COLUMNS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
