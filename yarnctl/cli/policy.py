"""`yarnctl policy show|set|rollback`: swap the policy of a running `yarnctl serve` without restarting the RM."""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from yarnctl import jsonout
from yarnctl.bridge.swap import check_text, event_text
from yarnctl.cli import argtypes
from yarnctl.cli.running import control_target
from yarnctl.errors import ConfigError

EPILOG = """\
examples:
  yarnctl policy show
  yarnctl policy set dress --param dress.initial_reserve=0.3 --wait
  yarnctl policy set drf --shadow 200 --canary 10% --wait       # 200 heartbeats, 10% of the nodes decided by drf
  yarnctl policy rollback

`set` builds the policy inside the running server, gives it the cluster as the server sees it (and
the control loop's latest observation), and checks it for a window (--shadow: seconds such as 30s,
or a number of heartbeats): each heartbeat the candidate decides on the same state as the serving
policy, and its decisions are logged (the decision log's "shadow" field), not applied; with
--canary the heartbeats of that share of the nodes take its decisions instead. After the window it
takes over if it raised nothing, validation refused none of its items and its decide time at the
95th percentile stayed within --max-latency-ms; else it is dropped and the serving policy stays.
`rollback` cancels a candidate under check, or returns to the policy the last swap replaced. Every
step is an "event" line in the decision log. The ResourceManager is never restarted: its shim keeps
calling the same server, which answers with whichever policy serves at that heartbeat.

The server is found through its status file (--serve-status, else the local cluster's, else
~/.yarnctl/serve-status.json), which names its control socket and token file.
"""


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add `policy` and its subcommands to `sub`; return the handler."""
    p = sub.add_parser("policy", help="swap the policy of a running policy server (show, set, rollback)",
                       description="Show, swap or roll back the policy a running `yarnctl serve` decides with, "
                                   "without restarting the ResourceManager.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument("--serve-status", type=argtypes.path, metavar="FILE", help="the status file of `yarnctl serve`")
    where.add_argument("--control-socket", type=argtypes.path, metavar="PATH",
                       help="the server's control socket (default: the one its status file names)")
    where.add_argument("--token-file", type=argtypes.path, metavar="PATH",
                       help="the bridge token (default: the one its status file names)")
    where.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    cmds = p.add_subparsers(dest="policy_command", metavar="COMMAND", required=True)
    cmds.add_parser("show", parents=[where], help="the serving policy, a candidate under check, the latest swaps")
    s = cmds.add_parser("set", parents=[where], help="check a policy in shadow, then let it take over",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("policy", metavar="POLICY", help="the policy to swap in (see `yarnctl policies`)")
    s.add_argument("--param", action="append", default=[], metavar="POLICY.KEY=VALUE",
                   help="set a parameter of POLICY, e.g. dress.initial_reserve=0.3 (repeatable)")
    s.add_argument("--policy-config", type=argtypes.path, metavar="FILE", help="YAML file mapping policy name to its parameters")
    s.add_argument("--shadow", default="30s", metavar="WINDOW",
                   help="how long to check it: seconds (30s) or heartbeats (200); 0s takes over at the next "
                        "heartbeat (default: %(default)s)")
    s.add_argument("--canary", default="0%", metavar="SHARE",
                   help="share of the nodes whose heartbeats the candidate decides during the check, e.g. 10%% "
                        "(default: %(default)s, shadow only)")
    s.add_argument("--max-latency-ms", type=argtypes.milliseconds, default=5.0, metavar="MS",
                   help="the candidate's decide time at the 95th percentile must stay within this (default: "
                        "%(default)s, half the shim's default 10 ms deadline)")
    s.add_argument("--wait", type=argtypes.seconds, nargs="?", const=600.0, metavar="SECONDS",
                   help="wait until it is active (exit 0) or dropped (exit 1), at most SECONDS (default 600)")
    cmds.add_parser("rollback", parents=[where], help="cancel a candidate, or return to the policy the last swap "
                                                      "replaced")
    return {"policy": _cmd_policy}


def parse_window(text: str) -> dict[str, Any]:
    """--shadow: "30s" as {"check_s": 30.0}, "200" as {"check_calls": 200}; ConfigError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m)?\s*", text)
    if m is None:
        raise ConfigError(f"--shadow {text!r}: expected seconds (30s, 2m) or a number of heartbeats (200)")
    value, unit = m.groups()
    if unit:
        return {"check_s": float(value) * (60 if unit == "m" else 1)}
    if "." in value or int(value) < 1:
        raise ConfigError(f"--shadow {text!r}: a number of heartbeats is a whole number >= 1 (or give seconds: 30s)")
    return {"check_calls": int(value)}


def parse_share(text: str) -> float:
    """--canary: "10%" (or 0.1) as 0.1; ConfigError outside [0, 100%)."""
    t = text.strip()
    try:
        share = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise ConfigError(f"--canary {text!r}: expected a share of the nodes, e.g. 10%") from None
    if not 0 <= share < 1:
        raise ConfigError(f"--canary {text!r}: expected a share in [0%, 100%) (100% is not a canary: use --shadow)")
    return share


def _cmd_policy(args: argparse.Namespace) -> int:
    from yarnctl.bridge.control import request

    plan = _plan(args) if args.policy_command == "set" else None  # its mistakes first: they need no server
    socket_path, token, _ = control_target(args)
    if args.policy_command == "show":
        answer = request(socket_path, token, {"command": "show"})
        _print(args, answer, lambda: print_show(answer["swap"]))
        return 0
    if args.policy_command == "rollback":
        answer = request(socket_path, token, {"command": "rollback"})
        _print(args, answer, lambda: print(_event_line(answer["event"])))
        return 0
    answer = request(socket_path, token, {"command": "set", "plan": plan})
    if not args.json:
        print(_event_line(answer["event"]))
    if args.wait is None:
        if args.json:
            _dump(answer)
        return 0
    settled = _wait(socket_path, token, answer["event"], args.wait, quiet=args.json)
    if args.json:
        _dump(settled)
    else:
        print(_event_line(settled))
    return 0 if settled.get("event") == "active" else 1


def _plan(args: argparse.Namespace) -> dict[str, Any]:
    from yarnctl.cli.params import OtherPolicyError, policy_params
    from yarnctl.policies import make_policy

    name = args.policy.strip()
    try:
        params = policy_params(args, [name]).get(name, {})
    except OtherPolicyError as e:
        raise ConfigError(f"--param: `policy set {name}` takes {name}.KEY=VALUE ({e})") from None
    make_policy(name, params)  # an unknown name or a bad parameter, said here rather than "no running serve"
    return {"policy": name, "params": params, **parse_window(args.shadow),
            "canary": parse_share(args.canary), "max_latency_ms": args.max_latency_ms}


def _wait(socket_path: Path, token: str, started: Mapping[str, Any], timeout_s: float,
          quiet: bool) -> dict[str, Any]:
    """Poll `show` until the swap `started` settles; the settling event (ConfigError after `timeout_s`)."""
    from yarnctl.bridge.control import request

    deadline, last = time.monotonic() + timeout_s, ""
    while time.monotonic() < deadline:
        swap = request(socket_path, token, {"command": "show"})["swap"]
        for ev in swap["events"]:
            if ev.get("swap") == started["swap"] and ev["event"] in ("active", "dropped", "cancelled"):
                if last and sys.stderr.isatty():
                    print(file=sys.stderr)
                return dict(ev)
        cand = swap.get("candidate")
        if cand and not quiet:
            line = check_text(cand)
            if line != last and sys.stderr.isatty():
                print(f"\r{line}", end="", file=sys.stderr, flush=True)
            last = line
        time.sleep(0.5)
    if last and sys.stderr.isatty():
        print(file=sys.stderr)
    raise ConfigError(f"{started['candidate']} still under check after {timeout_s:g} s (`yarnctl policy show`)")


def print_show(swap: Mapping[str, Any]) -> None:
    """`yarnctl policy show` as text."""
    params = ", ".join(f"{k}={v}" for k, v in sorted(swap.get("params", {}).items()))
    print(f"serving    {swap['policy']}" + (f" ({params})" if params else ""))
    cand = swap.get("candidate")
    print(f"candidate  {check_text(cand) if cand else '-'}")
    print(f"rollback   {swap.get('previous') or '- (nothing to return to)'}")
    events = swap.get("events", [])
    if events:
        print("latest swaps:")
        for ev in events[-10:]:
            print(f"  {time.strftime('%H:%M:%S', time.localtime(ev['at']))}  {_event_line(ev)}")


def _event_line(ev: Mapping[str, Any]) -> str:
    return f"{ev['event']:<11} {event_text(ev)}"


def _print(args: argparse.Namespace, answer: Mapping[str, Any], text: Callable[[], None]) -> None:
    if args.json:
        _dump(answer)
    else:
        text()


def _dump(doc: Mapping[str, Any]) -> None:
    jsonout.dump(doc)
