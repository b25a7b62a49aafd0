"""`yarnctl cluster up|status|down|run|env`: a local Hadoop 2.7.7 cluster with the shim, from Maven-resolved jars."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from yarnctl import jsonout
from yarnctl.cli import argtypes
from yarnctl.errors import ClusterError, ConfigError

EPILOG_UP = """\
examples:
  yarnctl cluster up --native fifo               # stock FifoScheduler, no policy server
  yarnctl cluster up --policy fifo --nodes 3     # the shim calling `yarnctl serve --policy fifo`
  yarnctl cluster up --policy dress --metrics-port 9464
  yarnctl cluster up --policy fair --param fair.reservations=true
  yarnctl cluster up --no-hdfs                   # jobs on file:///, no NameNode and DataNodes
  yarnctl cluster run -- pi 2 10
  yarnctl cluster status
  yarnctl cluster down

The first `up` on a machine resolves ~90 Hadoop jars with Maven (minutes on an empty ~/.m2);
later ones reuse the cached classpath and take 15-30 s. `yarnctl status` (no flags) then shows the
cluster this `up` started, whichever --dir it lives in.
"""

EPILOG_RUN = """\
examples:
  yarnctl cluster run -- pi 2 10
  yarnctl cluster run --class sleep -- -m 2 -r 1 -mt 1000 -rt 1000
  yarnctl cluster run --class dshell -- -shell_command "sleep 2" -num_containers 2
  yarnctl cluster run --class org.apache.hadoop.examples.ExampleDriver -- wordcount in/ out/
  yarnctl cluster run --class fs -- -put README.md /in      # onto HDFS (`up` without --no-hdfs)

--class takes a main class or an alias: examples (default, the MapReduce examples driver),
sleep (org.apache.hadoop.mapreduce.SleepJob), dshell (the distributed shell client; its -jar
and -master_memory 256 are added when missing: the client's default 10 MB AM dies of
OutOfMemoryError), fs (`hadoop fs`: the cluster's default file system).
"""


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's subcommands to `sub`; return their handlers by name."""
    c = sub.add_parser("cluster", help="start, inspect, use and stop a local Hadoop 2.7.7 cluster",
                       description="A local Hadoop 2.7.7 YARN cluster (one ResourceManager, N NodeManagers, "
                                   "separate JVMs) built from Maven Central jars, optionally with the yarnctl shim.")
    csub = c.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)

    def with_dir(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--dir", type=argtypes.path, default=None, metavar="DIR",
                       help="cluster directory (default ~/.yarnctl/cluster)")
        return p

    up = with_dir(csub.add_parser("up", help="start the cluster", epilog=EPILOG_UP,
                                  formatter_class=argparse.RawDescriptionHelpFormatter,
                                  description="Start `yarnctl serve` (shim on), the ResourceManager and N "
                                              "NodeManagers; return when every node is RUNNING."))
    mode = up.add_mutually_exclusive_group()
    mode.add_argument("--policy", default=None, metavar="P",
                      help="run the shim with this yarnctl policy (default fifo)")
    mode.add_argument("--native", choices=("fifo", "capacity", "fair"),
                      help="run a stock Hadoop scheduler instead of the shim (no policy server)")
    up.add_argument("--param", action="append", default=[], metavar="POLICY.KEY=VALUE",
                    help="a parameter of --policy for its server, e.g. dress.initial_reserve=0.2 (repeatable; kept by "
                         "restart-serve and rm2's server; `yarnctl policies` lists each policy's)")
    up.add_argument("--policy-config", type=argtypes.path, metavar="FILE",
                    help="YAML file mapping the policy's name to its parameters (--param wins)")
    up.add_argument("--shim-on", choices=("fifo", "capacity"), default="fifo",
                    help="the scheduler the shim extends: fifo (default), or capacity: CapacityScheduler's queue "
                         "tree, ACLs and queue metrics from the cluster's capacity-scheduler.xml, which the policy "
                         "sees and may not exceed (not yet the default; docs/design/queues.md)")
    up.add_argument("--hdfs", action=argparse.BooleanOptionalAction, default=True,
                    help="run HDFS (default): a NameNode and a DataNode beside each NodeManager, the jobs' default "
                         "file system; each node goes by a loopback address of its own (127.0.1.N), so maps are "
                         "data-local, rack-local or off-switch as on a real cluster. --no-hdfs: file:///, three "
                         "JVMs lighter")
    up.add_argument("--nodes", type=int, default=2, help="NodeManagers to start (default 2)")
    up.add_argument("--nm-memory-mb", type=int, default=4096, help="memory per NodeManager (default 4096)")
    up.add_argument("--nm-vcores", type=int, default=4, help="vcores per NodeManager (default 4)")
    up.add_argument("--deadline-ms", type=argtypes.positive, default=None,
                    help="shim decision deadline per heartbeat (default: the shim's, 10)")
    up.add_argument("--heartbeat-ms", type=argtypes.positive, default=1000, help="NodeManager heartbeat interval (default 1000)")
    up.add_argument("--token-file", type=argtypes.path, default=None,
                    help="py4j auth token shared by shim and server (default ~/.yarnctl/bridge.token; created 0600)")
    up.add_argument("--metrics-port", type=argtypes.port, default=None, metavar="PORT",
                    help="the policy server also serves Prometheus metrics on 127.0.0.1:PORT (/metrics)")
    up.add_argument("--recovery", action="store_true",
                    help="work-preserving RM restart: the RM keeps its state under the cluster dir, and "
                         "`yarnctl cluster restart-rm` keeps running jobs running")
    up.add_argument("--ha", action="store_true",
                    help="RM high availability: ZooKeeper and two ResourceManagers (rm1, rm2), each with its own "
                         "policy server, electing the active one; `yarnctl cluster failover` kills the active")
    up.add_argument("--timeout", type=argtypes.seconds, default=180.0, help="seconds to wait for the daemons (default 180)")

    st = with_dir(csub.add_parser("status", help="processes, nodes, apps and policy-server stats"))
    st.add_argument("--json", action="store_true", help="print one JSON object")

    with_dir(csub.add_parser("down", help="stop everything the cluster started, containers included"))

    rr = with_dir(csub.add_parser("restart-rm", help="kill the ResourceManager (-9, as a crash) and start it again",
                                  description="Kill the ResourceManager with SIGKILL (--graceful: SIGTERM) and start "
                                              "it again on the same ports; return when every NodeManager is back. "
                                              "Running jobs survive only on a cluster started with `up --recovery`."))
    rr.add_argument("--graceful", action="store_true", help="stop the RM with SIGTERM instead of SIGKILL")
    rr.add_argument("--timeout", type=argtypes.seconds, default=180.0, help="seconds to wait for the RM and nodes (default 180)")

    fo = with_dir(csub.add_parser("failover", help="RM HA: kill the active ResourceManager (-9); the standby takes over",
                                  description="On a cluster started with `up --ha`: kill the active RM with SIGKILL, "
                                              "wait until the standby is ACTIVE and every NodeManager has followed it, "
                                              "then start the killed RM again as the new standby."))
    fo.add_argument("--timeout", type=argtypes.seconds, default=180.0, help="seconds to wait for the takeover (default 180)")

    rn = with_dir(csub.add_parser("restart-nm", help="stop one NodeManager and start it again",
                                  description="Stop NodeManager INDEX with SIGTERM (it kills its containers; "
                                              "--kill: SIGKILL) and start it again on the same ports and dirs; "
                                              "return when the RM lists it RUNNING again."))
    rn.add_argument("index", type=int, help="which NodeManager (0 for nodemanager-0)")
    rn.add_argument("--kill", action="store_true", help="stop it with SIGKILL instead of SIGTERM")
    rn.add_argument("--timeout", type=argtypes.seconds, default=180.0, help="seconds to wait for it to register (default 180)")

    rs = with_dir(csub.add_parser("restart-serve", help="kill the policy server (-9, as a crash) and start it again",
                                  description="Kill `yarnctl serve` with SIGKILL (--graceful: SIGTERM, it saves its "
                                              "policy state) and start it again with the same arguments; meanwhile "
                                              "the shim decides natively, then resyncs."))
    rs.add_argument("--graceful", action="store_true", help="stop it with SIGTERM instead of SIGKILL")
    rs.add_argument("--timeout", type=argtypes.seconds, default=60.0, help="seconds to wait for it to listen (default 60)")

    run = with_dir(csub.add_parser("run", help="run a Hadoop client program against the cluster", epilog=EPILOG_RUN,
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   usage="yarnctl cluster run [--dir DIR] [--class MAIN] -- ARGS..."))
    run.add_argument("--class", dest="main_class", default=None, metavar="MAIN",
                     help="main class or alias (examples, sleep, dshell); default examples")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the program (after --)")

    with_dir(csub.add_parser("env", help="print `export` lines for running Hadoop clients with plain java"))
    return {"cluster": _cmd_cluster}


def _cmd_cluster(args: argparse.Namespace) -> int:
    from yarnctl.cluster import LocalCluster

    cluster = LocalCluster(args.dir, progress=_progress)
    handlers = {"up": _up, "status": _status, "down": _down, "run": _run, "env": _env, "restart-rm": _restart_rm,
                "restart-nm": _restart_nm, "failover": _failover, "restart-serve": _restart_serve}
    return handlers[args.cluster_command](cluster, args)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _flag(cluster: Any) -> str:
    from yarnctl.cluster.local import DEFAULT_DIR
    return "" if cluster.dir == DEFAULT_DIR else f" --dir {shlex.quote(str(cluster.dir))}"


def _restart_rm(cluster: Any, args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    info = cluster.restart_rm(kill=not args.graceful, timeout_s=args.timeout)
    print(f"resourcemanager restarted (pid {info.rm.pid}) and {len(info.nodes)} nodes RUNNING "
          f"in {time.monotonic() - t0:.1f} s")
    return 0


def _failover(cluster: Any, args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    new, info = cluster.failover(timeout_s=args.timeout)
    old = "rm1" if new == "rm2" else "rm2"
    print(f"{new} is active with {len(info.nodes)} nodes RUNNING {time.monotonic() - t0:.1f} s after {old} was killed; "
          f"{old} restarted as standby")
    return 0


def _restart_nm(cluster: Any, args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    info = cluster.restart_nm(args.index, kill=args.kill, timeout_s=args.timeout)
    print(f"nodemanager-{args.index} restarted (pid {info.nodes[args.index].pid}) and RUNNING "
          f"in {time.monotonic() - t0:.1f} s")
    return 0


def _restart_serve(cluster: Any, args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    info = cluster.restart_serve(kill=not args.graceful, timeout_s=args.timeout)
    print(f"policy server restarted (pid {info.serve.pid}, policy {info.policy}) in {time.monotonic() - t0:.1f} s")
    return 0


def _param_args(args: argparse.Namespace, policy: str) -> list[str]:
    """`yarnctl serve`'s --param for each of `policy`'s parameters, checked here first (a bad one stops before any
    JVM) and given as values: restart-serve and rm2's server get what `up` was given, whatever the file says later."""
    import yaml

    from yarnctl.cli.params import OtherPolicyError, policy_params
    from yarnctl.policies import make_policy

    try:
        params = policy_params(args, [policy]).get(policy, {})
    except OtherPolicyError as e:
        if any(item.partition(".")[0] == e.policy for item in args.param):
            raise ConfigError(f"--param {e.policy}.*: `cluster up --policy {policy}` takes {policy}.KEY=VALUE") from None
        raise ConfigError(f"{args.policy_config}: has parameters for a policy other than {policy!r}, "
                          f"the one `cluster up` serves ({e})") from None
    make_policy(policy, params)  # an unknown key or a bad value, said before anything starts
    out: list[str] = []
    for key, value in params.items():
        # YAML, as --param reads it back: 1.0e-05 stays a float, 'true' a string
        text = yaml.safe_dump(value, default_flow_style=True, width=1 << 20).removesuffix("...\n").strip()
        out += ["--param", f"{policy}.{key}={text}"]
    return out


def _up(cluster: Any, args: argparse.Namespace) -> int:
    from yarnctl.cluster.start import serve_files

    if args.policy is not None and not args.policy.strip():
        raise ConfigError("--policy '': give a policy (yarnctl policies lists them), or leave --policy out for fifo")
    policy = None if args.native else (args.policy or "fifo")
    if args.native and args.shim_on != "fifo":
        raise ClusterError(f"--shim-on is the shim's host; --native {args.native} runs no shim")
    if args.native and args.metrics_port is not None:
        raise ClusterError(f"--metrics-port is the policy server's; --native {args.native} runs none")
    if args.ha and args.metrics_port == 65535:
        raise ClusterError("--metrics-port 65535: with --ha rm2's server takes the next port; give a lower one")
    if args.native and (args.param or args.policy_config):
        raise ClusterError(f"--param and --policy-config are the policy server's; --native {args.native} runs none")
    serve_args: list[str] = [] if args.metrics_port is None else ["--metrics-port", str(args.metrics_port)]
    if args.native is None:
        from yarnctl.policies import REGISTRY
        if policy not in REGISTRY:
            raise ClusterError(f"unknown policy {policy!r}; valid policies: {', '.join(sorted(REGISTRY))} "
                               "(or --native fifo|capacity|fair)")
        serve_args += _param_args(args, policy)
    info = cluster.up(nodes=args.nodes, policy=policy, native=args.native, nm_memory_mb=args.nm_memory_mb,
                      nm_vcores=args.nm_vcores, deadline_ms=args.deadline_ms, token_file=args.token_file,
                      heartbeat_ms=args.heartbeat_ms, timeout_s=args.timeout, recovery=args.recovery, ha=args.ha,
                      shim_on=args.shim_on, hdfs=args.hdfs,
                      serve_args=tuple(serve_args))
    flag = _flag(cluster)
    what = (f"shim on {args.shim_on}, policy {info.policy}" if info.policy and args.shim_on != "fifo"
            else f"shim, policy {info.policy}" if info.policy else f"stock {info.scheduler_class.rsplit('.', 1)[1]}")
    print(f"cluster up in {info.up_seconds:.1f} s: {len(info.nodes)} nodes, {what}")
    for rm_id, d in zip(("rm1", "rm2") if info.rm2 else ("",), info.rms):
        print(f"  ResourceManager{' ' + rm_id if rm_id else '    '}  {d.url}/cluster  (REST {d.url}/ws/v1/cluster)")
    if info.zookeeper:
        print(f"  zookeeper        127.0.0.1:{info.zookeeper.ports['client']}  (RM leader election and state store)")
    if info.namenode:
        print(f"  HDFS             {info.default_fs}  (namenode {info.namenode.url}/jmx, "
              f"{len(info.datanodes)} datanodes)")
    for n in info.nodes:
        print(f"  {n.name:<16} {n.url}/node")
    if info.history:
        print(f"  job history      {info.history.url}/jobhistory")
    if info.serve:
        print(f"  policy server    127.0.0.1:{info.serve.ports['py4j']}  decisions {info.decision_log}")
        if args.metrics_port is not None:
            port = _metrics_port(args.metrics_port, serve_files(info.dir, "rm1")["status"])
            print(f"  metrics          http://127.0.0.1:{port}/metrics  (Prometheus format)")
    if info.serve2:
        print(f"  rm2's server     127.0.0.1:{info.serve2.ports['py4j']}  decisions {info.dir / 'decisions-rm2.jsonl'}")
        if args.metrics_port is not None:
            given = args.metrics_port + 1 if args.metrics_port else 0  # rm2's server takes the next port
            port = _metrics_port(given, serve_files(info.dir, "rm2")["status"])
            print(f"  rm2's metrics    http://127.0.0.1:{port}/metrics")
    print(f"  logs             {info.dir / 'logs'}")
    print("next:")
    print(f"  yarnctl cluster run{flag} -- pi 2 10")
    print(f"  yarnctl cluster status{flag}")
    print(f"  yarnctl cluster down{flag}")
    return 0


def _status(cluster: Any, args: argparse.Namespace) -> int:
    if args.json:
        jsonout.dump(cluster.status())
        return 0
    from contextlib import closing

    from yarnctl.cli.status import gather, render, screen
    from yarnctl.cluster.local import PROBE
    from yarnctl.errors import RMError
    from yarnctl.rm import ResourceManager

    info = cluster.info()
    mode = f"shim, policy {info.policy}" if info.policy else f"stock {info.scheduler_class.rsplit('.', 1)[1]}"
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.started_at))
    print(f"cluster {info.dir} ({mode}), started {started}, up in {info.up_seconds:.0f} s")
    processes = cluster.processes()
    for p in processes:
        print(f"  {p['name']:<16} pid {p['pid']:<8} {'alive' if p['alive'] else 'DEAD ':<5}  {p['log']}")
    print()
    with closing(ResourceManager(info.rm_urls, settings=PROBE)) as rm:
        try:
            view = gather(rm, cluster.active_status_file())
        except RMError as e:
            print(f"ResourceManager {info.rm_url}: unreachable ({e})")
        else:
            screen().print(render(view))
    dead = [p["name"] for p in processes if not p["alive"]]
    if dead:
        print(f"warning: {', '.join(dead)} not running; logs in {info.dir}/logs", file=sys.stderr)
        return 1
    return 0


def _down(cluster: Any, args: argparse.Namespace) -> int:
    rep = cluster.down()
    if not rep.stopped and not rep.strays:
        print(f"nothing running in {cluster.dir}")
        return 0
    parts = []
    if rep.stopped:
        parts.append(", ".join(rep.stopped))
    if rep.strays:
        parts.append(f"{len(rep.strays)} container and client process{'es' if len(rep.strays) > 1 else ''}")
    print(f"stopped {'; '.join(parts)}" + (f" ({len(rep.forced)} needed SIGKILL)" if rep.forced else ""))
    return 0


def _run(cluster: Any, args: argparse.Namespace) -> int:
    argv = list(args.args)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise ClusterError("give the program's arguments after --, e.g. `yarnctl cluster run -- pi 2 10`")
    cp = cluster.run(argv, args.main_class, capture=False)
    return int(cp.returncode)


def _env(cluster: Any, args: argparse.Namespace) -> int:
    env = cluster.env()
    for k, v in env.items():
        print(f"export {k}={shlex.quote(v)}")
    # Hadoop's own commands (bin/hadoop, bin/yarn, bin/hdfs) for this cluster, first on PATH
    print(f'export PATH={shlex.quote(str(cluster.info().hadoop_home / "bin"))}:"$PATH"')
    print('# e.g.: hadoop jar "$YARNCTL_EXAMPLES_JAR" pi 2 10, or plain java: '
          '"$JAVA_HOME/bin/java" $YARNCTL_JAVA_OPTS org.apache.hadoop.examples.ExampleDriver pi 2 10')
    return 0


def _metrics_port(given: int, status_file: Path) -> int | str:
    """The metrics port a policy server listens on: the one given, or for 0 the OS's choice its status file names."""
    if given:
        return given
    try:
        port = json.loads(status_file.read_text()).get("metrics_port")
    except (OSError, ValueError, AttributeError):
        port = None
    return port if isinstance(port, int) and port > 0 else f"PORT (the OS chose it: metrics_port in {status_file})"
