"""`yarnctl serve` and `yarnctl replay`: the py4j policy server and offline replay of its decision log."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from yarnctl import jsonout
from yarnctl.bridge.defaults import DEFAULT_STATUS_FILE, DEFAULT_TOKEN_FILE
from yarnctl.cli import argtypes
from yarnctl.errors import ConfigError
from yarnctl.model import TUNE_INTERVAL_S

log = logging.getLogger("yarnctl.serve")

DEFAULT_DECISION_LOG = Path("~/.yarnctl/decisions.jsonl")
STATE_DIR = Path("~/.yarnctl/state")  # default --state-file: STATE_DIR/<policy>.json

EPILOG_SERVE = """\
examples:
  yarnctl serve --policy fifo
  yarnctl serve --policy fair --param fair.assign_multiple=true --status-file /tmp/yarnctl.status.json
  yarnctl serve --policy drf --port 25335 --token-file /etc/yarnctl/bridge.token --no-decision-log
  yarnctl serve --policy fifo --rm http://rm1:8088 --rm http://rm2:8088 --metrics-port 9108

The ResourceManager's shim (io.yarnctl.shim, see java-bridge/) calls this server once per NodeManager
heartbeat over py4j and applies the validated answer. The shim reads the token from the file its
yarnctl.shim.token-file property names (default ${user.home}/.yarnctl/bridge.token, hadoop-conf/
yarn-site.shim.xml): point --token-file at the same file. It is created 0600 if missing; a token
file other users can read is refused. The token is never logged.

When the server is down, slow (past the shim's deadline) or answers an error, the shim decides that
heartbeat natively (FIFO) and counts it; after repeated failures its circuit breaker stops calling for
a while and probes again later. Starting or restarting the server is therefore always safe: the first
call after a (re)start gets a resync answer and the shim sends full state.

With --rm (or --yarn-site) a control loop polls the ResourceManager every --tune-interval seconds
(nodes, live apps with their pending asks and memorySeconds/vcoreSeconds, the shim's counters) and
each NodeManager's per-container usage beans, and feeds the observation to policies that tune
themselves (DRESS' reserve ratio, usage estimates). When the RM cannot be read the last good
observation is kept and marked stale in the log, the status file and the metrics; the server keeps
deciding. `yarnctl status` shows the status file next to the cluster. Without --rm a tunable policy
still ticks every --tune-interval seconds, on what the shim reported (allocations and asks; no
usage, no memorySeconds): DRESS's δ moves, usage-based policies keep the reservation model.

`yarnctl policy set P` swaps the policy without a restart: P is checked in shadow (its decisions
logged, not applied) for a window, then takes over; `yarnctl policy rollback` goes back. The
control socket (--control-socket) is the owner's alone and wants the token too.

Every call is appended to the decision log (default ~/.yarnctl/decisions.jsonl; it is not rotated),
which `yarnctl replay` reads. SIGTERM or Ctrl-C flushes the log and stops the server.
"""

EPILOG_REPLAY = """\
examples:
  yarnctl replay ~/.yarnctl/decisions.jsonl --policy drf
  yarnctl replay decisions.jsonl --policy fair --param fair.assign_multiple=true --json

Each logged request rebuilds the RM state exactly as the server saw it; POLICY decides on that same
state and node, and its decision is compared with the logged one. Consequences are not simulated:
the cluster applied the logged decisions, so later calls show the state those produced. Use
`yarnctl simulate` to compare policies end to end.
"""


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's subcommands to `sub`; return their handlers by name."""
    s = sub.add_parser("serve", help="run a policy for a live ResourceManager (py4j policy server)",
                       description="Serve a policy to the yarnctl shim in a Hadoop 2.7 ResourceManager: one "
                                   "py4j call per node heartbeat, state delta in, validated decision out.",
                       epilog=EPILOG_SERVE, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--policy", "-p", required=True, metavar="P", help="the policy to run (see `yarnctl policies`)")
    s.add_argument("--param", action="append", default=[], metavar="POLICY.KEY=VALUE",
                   help="set a policy parameter, e.g. fair.assign_multiple=true (repeatable)")
    s.add_argument("--policy-config", type=argtypes.path, metavar="FILE", help="YAML file mapping policy name to its parameters")
    s.add_argument("--max-am-share", type=float, metavar="FRACTION",
                   help="the share of cluster memory ApplicationMasters may hold, overriding the policy's own "
                        "(fifo: 0.5); 1 is stock FifoScheduler's: no limit")
    s.add_argument("--address", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    s.add_argument("--port", type=argtypes.port, default=25334, help="port to listen on, 0 for any (default: %(default)s)")
    s.add_argument("--token-file", type=argtypes.path, default=DEFAULT_TOKEN_FILE, metavar="PATH",
                   help="py4j auth token shared with the shim; created 0600 if missing (default: %(default)s)")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--decision-log", type=argtypes.path, default=DEFAULT_DECISION_LOG, metavar="PATH",
                   help="append one JSON line per call here (default: %(default)s)")
    g.add_argument("--no-decision-log", action="store_true", help="do not write a decision log")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--status-file", type=argtypes.path, default=DEFAULT_STATUS_FILE, metavar="PATH",
                   help="rewrite this JSON file with the server's state every second; `yarnctl status` reads it "
                        "(default: %(default)s)")
    g.add_argument("--no-status-file", action="store_true", help="do not write a status file")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--state-file", type=argtypes.path, metavar="PATH",
                   help="where a policy with long-term history (hmrf, lt-drf, ...) keeps it across restarts: "
                        "loaded at start, saved every 10 s and on stop (default: --state-dir/POLICY.json)")
    g.add_argument("--no-state-file", action="store_true", help="start without history and save none")
    s.add_argument("--state-dir", type=argtypes.path, default=STATE_DIR, metavar="DIR",
                   help="where policies with history keep it by default, as DIR/POLICY.json: the served one without "
                        "--state-file, and any swapped in by `yarnctl policy set` (default: %(default)s)")
    c = s.add_argument_group("control loop")
    r = c.add_mutually_exclusive_group()
    r.add_argument("--rm", action="append", default=[], metavar="URL",
                   help="ResourceManager web address to poll, e.g. http://rm1:8088; repeat (or comma-separate) "
                        "for an HA pair (default: no control loop)")
    r.add_argument("--yarn-site", type=argtypes.path, metavar="FILE",
                   help="read the RM web address(es) from this yarn-site.xml (HA rm-ids understood)")
    c.add_argument("--tune-interval", type=argtypes.seconds, default=TUNE_INTERVAL_S, metavar="SECONDS",
                   help="seconds between control-loop polls (default: %(default)s)")
    c.add_argument("--no-usage", action="store_true",
                   help="do not read per-container usage from the NodeManagers' /jmx")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--control-socket", type=argtypes.path, metavar="PATH",
                   help="Unix socket for `yarnctl policy show|set|rollback` (hot swap), 0600 and token-checked "
                        "(default: ~/.yarnctl/control-PORT.sock)")
    g.add_argument("--no-control", action="store_true", help="no control socket: the policy cannot be swapped")
    s.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback --address (the token is then the only guard)")
    s.add_argument("--metrics-port", type=argtypes.port, metavar="PORT",
                   help="serve Prometheus metrics on http://ADDRESS:PORT/metrics, 0 for any (default: off)")
    s.add_argument("--metrics-address", default="127.0.0.1", metavar="ADDRESS",
                   help="address for --metrics-port (default: %(default)s; non-loopback needs --allow-remote)")

    r = sub.add_parser("replay", help="replay a decision log with another policy",
                       description="Run POLICY on every call of a `yarnctl serve` decision log and compare "
                                   "its decisions with the logged ones.",
                       epilog=EPILOG_REPLAY, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("log", type=argtypes.path, metavar="LOG", help="decision log written by `yarnctl serve`")
    r.add_argument("--policy", "-p", required=True, metavar="P", help="the policy to replay")
    r.add_argument("--param", action="append", default=[], metavar="POLICY.KEY=VALUE",
                   help="set a policy parameter (repeatable)")
    r.add_argument("--policy-config", type=argtypes.path, metavar="FILE", help="YAML file mapping policy name to its parameters")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    return {"serve": _cmd_serve, "replay": _cmd_replay}


CALL_WHEN_FULL = "yarnctl.shim.call-when-full"


def _warn_full_nodes(args: argparse.Namespace, policy: Any) -> None:
    """Say so when the policy reserves full nodes (FairScheduler's) but the shim may not ask about them."""
    if not policy.reserves_full_nodes:
        return
    if args.yarn_site is not None:
        from yarnctl.errors import RMConfigError
        from yarnctl.rm.yarnsite import read_properties

        try:
            if read_properties(args.yarn_site).get(CALL_WHEN_FULL, "").lower() == "true":
                return
        except RMConfigError:
            pass  # the control loop's reading of it reports the problem
    log.warning("policy %s reserves full nodes as FairScheduler does, but the shim asks about a node only when the "
                "smallest container fits unless yarn-site.xml sets %s=true", policy.name, CALL_WHEN_FULL)


def _make_policy(args: argparse.Namespace) -> Any:
    from yarnctl.cli.params import policy_params
    from yarnctl.policies import make_policy

    name = args.policy.strip()
    if "," in name:
        raise ConfigError("--policy: give one policy")
    return make_policy(name, policy_params(args, [name]).get(name))


def _check_status_file(path: Path) -> None:
    """ConfigError unless the status file can be written at `path` (its directory is made if missing)."""
    from yarnctl.paths import file_in_the_way

    path = path.expanduser()
    if path.is_dir():
        raise ConfigError(f"--status-file {path}: is a directory; give a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        blocker = file_in_the_way(path.parent)
        raise ConfigError(f"--status-file {path}: " + (f"{blocker} is a file, not a directory" if blocker is not None
                                                       else f"cannot make its directory: {e.strerror}")) from None
    if not os.access(path.parent, os.W_OK):
        raise ConfigError(f"--status-file {path}: its directory {path.parent} is not writable")


def _cmd_serve(args: argparse.Namespace) -> int:
    from yarnctl.bridge.decisionlog import DecisionLog
    from yarnctl.bridge.lifecycle import Serving
    from yarnctl.bridge.server import PolicyServer, check_address, load_token
    from yarnctl.bridge.service import PolicyService

    if args.verbose == 0:  # the startup and stats lines are INFO; -v adds the rest
        logging.getLogger("yarnctl").setLevel(logging.INFO)
    if not args.no_status_file:  # a file it cannot write was warned about once a second, forever
        _check_status_file(args.status_file)
    if args.metrics_port is not None:
        try:
            check_address(args.metrics_address, args.allow_remote)
        except ConfigError as e:
            raise ConfigError(str(e).replace("--address", "--metrics-address", 1)) from None
    from yarnctl.cli.params import check_max_am_share

    check_max_am_share(args)
    policy = _make_policy(args)
    state_file = _state_file(args, policy)
    observer = _observer(args)
    check_address(args.address, args.allow_remote)
    token_path = args.token_file.expanduser()
    token = load_token(token_path)
    dlog = None if args.no_decision_log else DecisionLog(args.decision_log.expanduser())
    service = PolicyService(policy, dlog, max_am_share=args.max_am_share, state_file=state_file,
                            state_path=lambda p: _swap_state_file(args, p), params=_given_params(args),
                            beside_thread=True)
    if state_file is not None:
        from yarnctl.bridge.statefile import load_state

        load_state(state_file, policy.name, policy)
    service.settle()  # the first full sync then freezes what it builds without first scanning the whole heap
    server = PolicyServer(service, token, args.address, args.port)
    from yarnctl.bridge.server import SWITCH_INTERVAL_S

    # CPython hands the GIL to a waiting thread only every 5 ms: while the control loop parses an
    # observation, each heartbeat's answer waited 11 ms at the median, past the shim's 10 ms deadline
    # (python -m yarnctl.bridge.gilbench; docs/bridge.md)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    loop = None
    if observer is not None:
        from yarnctl.rm.observe import ControlLoop

        loop = ControlLoop(observer, service.tune, args.tune_interval)
    elif service.engine.tunable:
        from yarnctl.bridge.mirrorsource import MirrorSource
        from yarnctl.rm.observe import ControlLoop

        # ticks from what the shim reports: pending demand and allocations move δ; usage and
        # memorySeconds need --rm, and the policy is told they are missing (usage_measured False)
        loop = ControlLoop(MirrorSource(service), service.tune, args.tune_interval)
        log.warning("policy %s takes control-loop observations but no --rm/--yarn-site was given: it ticks on "
                    "the shim's reports only (no container usage, no accumulated memorySeconds)", policy.name)
    _warn_full_nodes(args, policy)
    metrics = control = None
    mport: int | None = None
    try:
        port = server.start()
        if not args.no_control:
            from yarnctl.bridge.control import ControlServer

            path = args.control_socket or Path(f"~/.yarnctl/control-{port}.sock")
            control = ControlServer(path, token, service.control)
            control.start()
        if args.metrics_port is not None:
            from yarnctl.metrics import start_metrics_server

            try:
                mport, metrics = start_metrics_server(service, args.metrics_port, args.metrics_address, loop)
            except OSError as e:
                raise ConfigError(f"--metrics-port {args.metrics_port}: cannot listen on "
                                  f"{args.metrics_address}: {e.strerror or e}") from None
            # the exporter shows counters and cluster totals only; the token never reaches it
            log.info("metrics on http://%s:%d/metrics", args.metrics_address, mport)
    except BaseException:
        if control is not None:
            control.stop()
        server.stop()
        service.close()
        if dlog is not None:
            dlog.close()
        raise
    status_file = None if args.no_status_file else args.status_file.expanduser()
    loop_text = None
    if loop is not None:
        loop_text = (f"control loop polling {loop.observer.where} every {args.tune_interval:g} s "
                     f"(container usage {'off' if args.no_usage or observer is None else 'on'})")
    Serving(service, server, port, args.address, token_path, dlog, loop, loop_text, state_file, status_file,
            metrics, control, mport).run()
    return 0


def _state_file(args: argparse.Namespace, policy: Any) -> Path | None:
    """Where a stateful policy keeps its history (None for a stateless one or --no-state-file)."""
    from yarnctl.policies.contract import is_stateful

    if not is_stateful(policy):
        if args.state_file is not None:
            log.warning("policy %s keeps no history: --state-file %s is not used", policy.name, args.state_file)
        return None
    if args.no_state_file:
        return None
    path: Path = (args.state_file or args.state_dir / f"{policy.name}.json").expanduser()
    return path


def _swap_state_file(args: argparse.Namespace, policy: Any) -> Path | None:
    """Where a stateful policy swapped in (`yarnctl policy set`) keeps its history: the served one's file, else --state-dir."""
    if args.no_state_file:
        return None
    if args.state_file is not None and policy.name == args.policy.strip():
        given: Path = args.state_file.expanduser()
        return given
    path: Path = (args.state_dir / f"{policy.name}.json").expanduser()
    return path


def _given_params(args: argparse.Namespace) -> dict[str, Any]:
    from yarnctl.cli.params import policy_params

    return policy_params(args, [args.policy.strip()]).get(args.policy.strip(), {})


def _observer(args: argparse.Namespace) -> Any:
    """The control loop's ClusterObserver for --rm/--yarn-site, or None without either."""
    from yarnctl.cli.rmopts import resource_manager
    from yarnctl.rm import HttpSettings
    from yarnctl.rm.observe import ClusterObserver

    # one quick round per tick: the loop itself is the retry, and a stale mark beats a hung tick
    rm = resource_manager(args, HttpSettings(connect_timeout_s=2.0, read_timeout_s=5.0, retries=0))
    return None if rm is None else ClusterObserver(rm, usage=not args.no_usage)


def _cmd_replay(args: argparse.Namespace) -> int:
    from yarnctl.bridge.replay import NOT_SIMULATED, replay

    policy = _make_policy(args)
    report = replay(args.log, policy)
    if args.json:
        jsonout.dump(report.as_dict())
        return 0
    d = report.as_dict()
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(report.skipped.items()))
    print(f"{report.log}: {report.replayed:,} calls replayed with {report.policy} "
          f"(logged by {', '.join(report.logged_policies)})" + (f"; skipped {skipped}" if skipped else ""))
    print(f"decisions differ on {report.differ:,} of {report.replayed:,} calls")
    print(f"containers assigned: logged {d['containers']['logged']:,}, {report.policy} {d['containers']['replayed']:,}")
    if d["per_app"]:
        width = max(len(a) for a in d["per_app"])
        print(f"  {'app':<{width}}  {'logged':>8}  {report.policy:>8}")
        for app, n in d["per_app"].items():
            print(f"  {app:<{width}}  {n['logged']:>8,}  {n['replayed']:>8,}")
    if report.truncated:
        print("note: the log's last line was cut off (the server stopped mid-write) and was ignored")
    print(f"note: {NOT_SIMULATED}")
    return 0
