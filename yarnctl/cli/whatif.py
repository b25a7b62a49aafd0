"""`yarnctl whatif`: simulate the next hours of the live cluster under the serving policy and alternatives."""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Mapping
from contextlib import closing
from typing import Any

from yarnctl import jsonout
from yarnctl.cli import argtypes
from yarnctl.errors import ConfigError, YarnctlError

# measured by tests/integration/test_operator_live.py, written up in docs/whatif.md
MEASURED = "docs/whatif.md: on the local cluster its remaining-time predictions for the serving policy were {err}"
MEASURED_ERR = "5-82% off, 10.4 s at most (eighteen runs of two SleepJobs, 2026-11-27/30)"

EPILOG = """\
examples:
  yarnctl whatif --policy dress
  yarnctl whatif --policy dress,fair --param dress.initial_reserve=0.3 --horizon 2h --jobs
  yarnctl whatif --serve-status /var/run/yarnctl/serve-status.json --rm http://rm:8088 --history http://jhs:19888

The cluster comes from the running policy server (its control socket's `state`: nodes, running
containers with their age, outstanding asks) and each running MapReduce job's tasks from its
ApplicationMaster (through the RM's web proxy): tasks done, running (how long, how far) and still to
run. A task type's run time is its finished tasks' median, else the latest finished job of the same
name at the JobHistoryServer (--history), else a running task's progress, else 60 s. The simulator
starts with those containers held where they are and runs the serving policy (with the parameters it
was started or swapped in with) and each alternative until every job is done or --horizon passes.
Completion times are from now. Caveats, printed with the table: other applications hold their
containers for the horizon; applications waiting for their AM, and jobs submitted later, are not in
it; the simulator's own error (docs/fidelity.md) comes on top of the estimates'.
"""

WIDE = 160  # columns of the tables when piped
STALE_S = 10.0  # a view of the cluster older than this is named in the caveats
HORIZON_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*")


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add `whatif` to `sub`; return its handler."""
    w = sub.add_parser("whatif", help="simulate the live cluster's next hours under the serving policy and others",
                       description="Take the live cluster's state from the running policy server and its MapReduce "
                                   "jobs' progress, and simulate what happens next under the serving policy and "
                                   "under alternatives: the same comparison table as `yarnctl simulate`.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("--policy", "-p", default="", metavar="P[,P...]",
                   help="alternatives to the serving policy (see `yarnctl policies`); the serving one always runs")
    w.add_argument("--param", action="append", default=[], metavar="POLICY.KEY=VALUE",
                   help="a parameter of an alternative (repeatable); the serving policy keeps its live ones")
    w.add_argument("--policy-config", type=argtypes.path, metavar="FILE", help="YAML file mapping policy name to its parameters")
    w.add_argument("--horizon", default="1h", metavar="TIME", help="how far to simulate: 1h, 30m, 600s (default: 1h)")
    w.add_argument("--jobs", action="store_true", help="also print each job's predicted completion per policy")
    w.add_argument("--serve-status", type=argtypes.path, metavar="FILE", help="the status file of `yarnctl serve`")
    w.add_argument("--control-socket", type=argtypes.path, metavar="PATH", help="the server's control socket")
    w.add_argument("--token-file", type=argtypes.path, metavar="PATH", help="the bridge token")
    w.add_argument("--rm", action="append", default=[], metavar="URL",
                   help="ResourceManager web address (default: the one the server's control loop polls, or the "
                        "local cluster's)")
    w.add_argument("--history", metavar="URL", help="JobHistoryServer web address (default: the local cluster's)")
    w.add_argument("--json", action="store_true", help="print one JSON object")
    return {"whatif": _cmd_whatif}


def parse_horizon(text: str) -> float:
    """--horizon in seconds: "1h", "30m", "600s" or "600"; ConfigError otherwise."""
    m = HORIZON_RE.fullmatch(text)
    if m is None or float(m.group(1)) <= 0:
        raise ConfigError(f"--horizon {text!r}: expected a time such as 1h, 30m or 600s")
    return float(m.group(1)) * {"h": 3600, "m": 60, "s": 1, None: 1}[m.group(2)]


def _cmd_whatif(args: argparse.Namespace) -> int:
    from yarnctl.bridge.control import request
    from yarnctl.cli.params import policy_params
    from yarnctl.cli.running import control_target
    from yarnctl.whatif.live import parse_state

    horizon_s = parse_horizon(args.horizon)
    alternatives = [p.strip() for p in args.policy.split(",") if p.strip()]
    params = policy_params(args, alternatives)  # a mistake here needs no cluster
    from yarnctl.policies import make_policy

    for name in alternatives:
        make_policy(name, params.get(name))  # an unknown policy or a bad parameter, before the cluster is read
    socket_path, token, status = control_target(args)
    reply = request(socket_path, token, {"command": "state"})
    read_at = time.time()  # "now" of the completion times: the containers are aged to it
    state = parse_state(reply.get("state"), read_at)
    if state.policy in params:
        raise ConfigError(f"--param for {state.policy}: the serving policy runs with its live parameters "
                          f"({_params(state.params) or 'its defaults'})")
    policies = [state.policy] + [p for p in dict.fromkeys(alternatives) if p != state.policy]
    params[state.policy] = dict(state.params)
    tasks, history, notes = _read_jobs(args, state, status)
    from yarnctl.whatif.build import build

    start = build(state, tasks, history)
    if not start.workload.jobs:
        raise ConfigError(f"nothing to simulate: no running application ({len(start.waiting)} waiting for their AM, "
                          f"{len(start.finishing)} finishing)" + "".join(f"; {n}" for n in notes))  # why one was held
    from yarnctl.sim.runner import simulate

    t0 = time.perf_counter()
    pairs = simulate(start.workload, policies, params, max_time_s=horizon_s)
    results = [r for r, _ in pairs]
    caveats = _caveats(start, horizon_s) + notes
    if args.json:
        from yarnctl.sim.report import to_json

        doc = to_json("live", 0, results)
        doc.update(serving=state.policy, horizon_s=horizon_s, at=read_at, caveats=caveats,
                   plans=[_plan_doc(p) for p in start.plans], held=list(start.held), waiting=list(start.waiting),
                   finishing=list(start.finishing), measured=MEASURED.format(err=MEASURED_ERR))
        jsonout.dump(doc)
        return 0
    from yarnctl.cli import output

    if not output.out.is_terminal:  # piped (a report, a log): rich would cut the tables at 80 columns
        from rich.console import Console

        output.out = Console(highlight=False, soft_wrap=False, width=WIDE)
    _print_start(state.policy, start)
    output.print_summary(results, time.perf_counter() - t0)
    if args.jobs:
        output.print_jobs(results)
    for line in caveats:
        print(f"caveat: {line}")
    print(f"measured: {MEASURED.format(err=MEASURED_ERR)}")
    return 0


def _read_jobs(args: argparse.Namespace, state: Any, status: Mapping[str, Any] | None
               ) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Each running MapReduce job's tasks (from its AM) and the latest finished job of each name (history)."""
    from yarnctl.cli.running import local_cluster
    from yarnctl.cli.rmopts import resource_manager
    from yarnctl.rm import HistoryServer, HttpSettings
    from yarnctl.whatif.build import past

    settings = HttpSettings(connect_timeout_s=3.0, read_timeout_s=10.0, retries=1)
    polled = ((status or {}).get("control_loop") or {}).get("rm")
    rm = resource_manager(argparse.Namespace(rm=args.rm, yarn_site=None), settings,
                          [polled] if polled else local_cluster()[0])
    notes: list[str] = []
    tasks: dict[str, Any] = {}
    running = {c.app for c in state.containers if c.is_am}
    mr = [a for a in state.apps if a.id in running and a.type.upper() == "MAPREDUCE"]
    if mr and rm is None:
        raise ConfigError("no ResourceManager to ask for the jobs' tasks: give --rm URL")
    if rm is not None:
        with closing(rm):
            for app in mr:
                try:
                    tasks[app.id] = rm.am_tasks(app.id)
                except YarnctlError as e:  # its AM is starting or finishing: held for the horizon instead
                    notes.append(f"{app.id}: its ApplicationMaster did not answer ({e}); it holds its containers")
    history: dict[str, Any] = {}
    url = args.history or _local_history()
    if url and mr:
        hs = HistoryServer(url, settings=settings)
        try:
            with closing(hs):
                done = [j for j in hs.jobs() if j.state == "SUCCEEDED"]
                for name in {a.name for a in mr}:
                    latest = max((j for j in done if j.name == name), key=lambda j: j.finish_time_ms, default=None)
                    if latest is not None:
                        history[name] = past(hs.job(latest.id), hs.job_tasks(latest.id))
        except YarnctlError as e:
            notes.append(f"the JobHistoryServer did not answer ({e}); no estimate from job history")
    elif mr:
        notes.append("no JobHistoryServer (--history): a task type no task of its job finished yet is estimated "
                     "from progress")
    return tasks, history, notes


def _local_history() -> str | None:
    from yarnctl.cluster.local import find_running
    from yarnctl.errors import ClusterError

    cluster = find_running()
    try:
        info = cluster.info() if cluster else None
    except ClusterError:
        return None
    return info.history.url if info and info.history else None


def _caveats(start: Any, horizon_s: float) -> list[str]:
    out = ["task run times are estimates (see the table above); the simulator's own error comes on top "
           "(docs/fidelity.md)", "jobs submitted from now on are not in it",
           "the serving policy runs with the parameters it was started (or swapped in) with, not its tuned values "
           "or saved history, and every job starts at t = 0 (its age is not kept)"]
    if start.age_s > STALE_S:
        out.append(f"the policy server's view is {start.age_s:.0f} s old (the shim calls only for nodes with room): "
                   f"containers are aged by that much, asks and new containers may have changed")
    if start.held:
        out.append(f"{len(start.held)} application(s) whose work cannot be read (not MapReduce, or their AM did not "
                   f"answer) hold their containers for the whole {horizon_s:g} s: {', '.join(start.held)}")
    if start.waiting:
        out.append(f"{len(start.waiting)} application(s) waiting for their AM are left out: {', '.join(start.waiting)}")
    if start.finishing:
        out.append(f"{len(start.finishing)} job(s) with no task left are left out (finishing): "
                   f"{', '.join(start.finishing)}")
    return out


def _print_start(policy: str, start: Any) -> None:
    from rich.table import Table

    from yarnctl.cli import output

    w = start.workload
    t = Table(title=f"the live cluster as {policy} serves it: {len(w.cluster.nodes)} nodes, "
                    f"{len(start.plans)} MapReduce job(s) read from their AMs")
    for col in ("job", "name", "maps done/running/to run", "map s", "reduces done/running/to run", "reduce s"):
        t.add_column(col, justify="left" if col in ("job", "name") else "right")
    for p in start.plans:
        t.add_row(p.app, p.name, "/".join(map(str, p.maps)), f"{p.map_s.seconds:.1f} ({p.map_s.source})",
                  "/".join(map(str, p.reduces)), f"{p.reduce_s.seconds:.1f} ({p.reduce_s.source})")
    output.out.print(t)


def _plan_doc(p: Any) -> dict[str, Any]:
    return {"app": p.app, "name": p.name, "maps": list(p.maps), "reduces": list(p.reduces),
            "map_s": {"seconds": p.map_s.seconds, "source": p.map_s.source},
            "reduce_s": {"seconds": p.reduce_s.seconds, "source": p.reduce_s.source}}


def _params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()))


def predicted_s(doc: Mapping[str, Any], policy: str) -> dict[str, float | None]:
    """Each job's predicted completion (s from now) under `policy`, from `whatif --json`'s document."""
    return {j["id"]: j["completion_s"] for j in doc["results"][policy]["jobs"]}
