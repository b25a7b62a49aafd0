"""Benchmark of the whole delegated heartbeat: the Java shim in a JVM calling `yarnctl serve` over py4j.

`python -m yarnctl.bridge.shimbench [--heartbeats 20000] [--policy fifo] [--nodes 100,1000,5000] [--floor-us 0,100]
[--plot PNG]`
compiles java-bridge's test classes, starts `yarnctl serve` on a free loopback port with a throwaway
token, and runs `io.yarnctl.shim.bench.HeartbeatBench` (1,000 nodes or each count asked, 200 apps with
pending requests) once with the native FifoScheduler and once with YarnctlScheduler delegating to
Python, in one run per node count so the two are measured on the same machine state. Prints a table
with the shim's rate as a share of the native one (or `--json`), and plots both against the nodes.
`--floor-us` adds the shim against `yarnctl.bridge.floor`, which decides nothing after spinning a set time.
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
COLUMNS = ("nodes", "mode", "heartbeats", "p50_us", "p99_us", "heartbeats_per_s", "of_native", "delegated", "fallback",
           "containers")


def _test_classpath() -> str:
    cp_file = BRIDGE / "target" / "test.cp"
    subprocess.run(["mvn", "-q", "-B", "-f", str(BRIDGE), "test-compile", "dependency:build-classpath",
                    f"-Dmdep.outputFile={cp_file}", "-Dmdep.includeScope=test"], check=True,
                   stdout=sys.stderr)  # stdout is the table or the JSON
    return f"{BRIDGE / 'target/classes'}:{BRIDGE / 'target/test-classes'}:{cp_file.read_text().strip()}"


def _start_serve(policy: str, token: Path, floor_us: int | None = None) -> tuple[subprocess.Popen[str], int]:
    """`yarnctl serve --policy policy`, or with `floor_us` the floor server busy that long per call; and its port."""
    cmd = ([sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", policy, "--no-decision-log"]
           if floor_us is None else [sys.executable, "-m", "yarnctl.bridge.floor", "--busy-us", str(floor_us)])
    cmd += ["--port", "0", "--token-file", str(token)]
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
    what = "yarnctl serve" if floor_us is None else "the floor server (yarnctl.bridge.floor)"
    raise SystemExit(f"{what} did not start: {proc.stderr.read() if proc.stderr else ''}")


def _bench(heartbeats: int, policy: str, modes: str, nodes: int, classpath: str,
           floor_us: int | None = None) -> list[dict[str, Any]]:
    """The Java bench's JSON objects for `modes`, its shim calling a fresh server (see `_start_serve`)."""
    with tempfile.TemporaryDirectory() as tmp:
        token = Path(tmp) / "token"
        token.write_text("bench-" + os.urandom(16).hex() + "\n")
        token.chmod(0o600)
        serve, port = _start_serve(policy, token, floor_us)
        try:
            out = subprocess.run(["java", *JVM_FLAGS, "-cp", classpath, "io.yarnctl.shim.bench.HeartbeatBench",
                                  str(heartbeats), str(port), str(token), modes, str(nodes)],
                                 check=True, capture_output=True, text=True).stdout
        finally:
            serve.terminate()
            serve.wait(timeout=30)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def run(heartbeats: int, policy: str, modes: str = "native,shim", nodes: int = 1000,
        classpath: str | None = None, floor_us: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """Run each mode on `nodes` nodes and return the bench's JSON objects (each shim mode with its rate `of_native`).

    Each of `floor_us` adds a row "floor-<N>us": the shim on FIFO against the floor server, which decides
    nothing after spinning N µs (no allocation, so the cluster drains: the cost of the call alone).
    """
    classpath = classpath or _test_classpath()
    rows = _bench(heartbeats, policy, modes, nodes, classpath)
    for us in floor_us:
        for r in _bench(heartbeats, policy, "shim", nodes, classpath, floor_us=us):
            rows.append({**r, "mode": f"floor-{us}us"})
    native = {r["mode"]: r["heartbeats_per_s"] for r in rows if r["mode"].startswith("native")}
    for r in rows:  # shim (or floor) on FIFO against native FIFO, shim on CS against native CS, when both ran
        base = native.get(r["mode"].replace("shim", "native") if r["mode"].startswith("shim") else "native")
        if r["mode"].startswith(("shim", "floor")) and base:
            r["of_native"] = round(r["heartbeats_per_s"] / base, 2)
    return rows


def _ints(text: str, example: str, least: int, what: str) -> tuple[int, ...]:
    """Comma-separated integers, each at least `least`, or an argparse error naming `what`."""
    try:
        values = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what} like {example}, got {text!r}") from None
    if min(values) < least:
        raise argparse.ArgumentTypeError(f"{what} must be {'at least 1' if least else '0 or more'}, got {text!r}")
    return values


def node_counts(text: str) -> list[int]:
    """`--nodes`: comma-separated positive node counts."""
    return list(_ints(text, "100,1000,5000", 1, "node counts"))


def busy_times(text: str) -> tuple[int, ...]:
    """`--floor-us`: comma-separated microseconds, 0 or more."""
    return _ints(text, "0,100,300", 0, "microseconds")


def plot(rows: list[dict[str, Any]], path: Path) -> Path:
    """Heartbeats per second and p99 against the node count, one line per mode."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers or in CI
    import matplotlib.pyplot as plt

    fig, (rate, p99) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for mode in dict.fromkeys(r["mode"] for r in rows):
        mine = sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["nodes"])
        xs = [r["nodes"] for r in mine]
        rate.plot(xs, [r["heartbeats_per_s"] for r in mine], marker="o", label=mode)
        p99.plot(xs, [r["p99_us"] for r in mine], marker="o", label=mode)
    for ax, what in ((rate, "heartbeats per second (handle NODE_UPDATE)"), (p99, "p99 per heartbeat (µs)")):
        ax.set_xscale("log")
        ax.set_xlabel("nodes (200 apps with pending asks)")
        ax.set_ylabel(what)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"Native schedulers and the shim with Python as the cluster grows ({os.cpu_count()} CPUs)")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the benchmark and print its table."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.bridge.shimbench", description=__doc__.splitlines()[0])
    p.add_argument("--heartbeats", type=int, default=20000, help="heartbeats per mode (default %(default)s)")
    p.add_argument("--policy", default="fifo", help="the Python policy (default %(default)s)")
    p.add_argument("--modes", default="native,shim",
                   help="comma-separated: native and shim (FIFO), native-cs and shim-cs (CapacityScheduler's one"
                        " default queue; the shim on it is not the shipped scheduler yet) (default %(default)s)")
    p.add_argument("--nodes", type=node_counts, default=[1000], metavar="N[,N...]",
                   help="cluster sizes to measure, each in its own run (default 1000; e.g. 100,1000,5000)")
    p.add_argument("--floor-us", type=busy_times, default=(), metavar="N[,N...]",
                   help="also run the shim against a server that decides nothing after spinning N µs, per N (e.g."
                        " 0,100,300): what a delegated heartbeat costs beside Python's own time")
    p.add_argument("--plot", type=Path, metavar="PNG", help="draw heartbeats/s and p99 against the nodes into PNG")
    p.add_argument("--json", action="store_true", help="print the JSON objects")
    args = p.parse_args(argv)
    if bad := sorted(set(args.modes.split(",")) - {"native", "shim", "native-cs", "shim-cs"}):
        p.error(f"unknown mode(s) {', '.join(bad)}; choose from native, shim, native-cs, shim-cs")
    if args.heartbeats < 100:
        p.error(f"--heartbeats: at least 100 for a p99, got {args.heartbeats}")
    classpath = _test_classpath()
    rows = []
    for n in args.nodes:
        print(f"{n:,} nodes: {args.modes} ...", file=sys.stderr, flush=True)
        rows += run(args.heartbeats, args.policy, args.modes, n, classpath, args.floor_us)
    if args.plot is not None:
        print(f"wrote {plot(rows, args.plot)}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("  ".join(f"{c:>16}" for c in COLUMNS))
    for r in rows:
        print("  ".join(f"{r.get(c, ''):>16}" for c in COLUMNS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
