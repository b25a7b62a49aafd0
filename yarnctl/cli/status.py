"""`yarnctl status`: a `yarn top`-like view of a cluster and of the policy server behind its shim."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yarnctl import jsonout
from yarnctl.bridge.defaults import DEFAULT_STATUS_FILE
from yarnctl.cli import argtypes
from yarnctl.cli.running import local_cluster, read_status, running_server

if TYPE_CHECKING:  # rich and the HTTP client load only when `status` runs: every CLI start imports this module
    from rich.console import Console, RenderableType
    from rich.table import Table
    from rich.text import Text

    from yarnctl.rm import (
        AppInfo,
        ClusterInfo,
        ClusterMetrics,
        NodeReport,
        QueueInfo,
        ResourceManager,
        SchedulerInfo,
        ShimMetrics,
    )

LIVE_STATES = ("NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING")
WIDE = 180  # columns when not printing to a terminal

EPILOG = """\
examples:
  yarnctl status                                   # the local cluster (`yarnctl cluster up`), else localhost:8088
  yarnctl status --rm http://rm1:8088 --rm http://rm2:8088
  yarnctl status --yarn-site /etc/hadoop/conf/yarn-site.xml --watch 2
  yarnctl status --json | jq .apps

The RM is the first of: --rm/--yarn-site, $YARNCTL_RM, the running local cluster, http://localhost:8088.
The policy server's part comes from the status file `yarnctl serve` rewrites every second
(--serve-status; default: the local cluster's, else ~/.yarnctl/serve-status.json); the shim's
counters come from the RM's /jmx. Apps are the live ones (NEW to RUNNING), oldest first.
"""


@dataclass(frozen=True, slots=True)
class StatusView:
    """Everything one `yarnctl status` screen shows, read at `at` (epoch seconds)."""

    rm_url: str
    at: float
    info: ClusterInfo
    metrics: ClusterMetrics
    nodes: tuple[NodeReport, ...]
    scheduler: SchedulerInfo
    apps: tuple[AppInfo, ...]
    shim: ShimMetrics | None
    serve: dict[str, Any] | None   # the serve status file, plus "running": bool
    serve_file: str | None


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add `status` to `sub`; return its handler."""
    s = sub.add_parser("status", help="a yarn-top-like view of the cluster and the policy server",
                       description="Nodes, queues and live apps of a Hadoop 2.7 cluster with their allocated and "
                                   "pending resources, and the yarnctl policy server's state when one runs.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r = s.add_mutually_exclusive_group()
    r.add_argument("--rm", action="append", default=[], metavar="URL",
                   help="ResourceManager web address; repeat (or comma-separate) for an HA pair")
    r.add_argument("--yarn-site", type=argtypes.path, metavar="FILE", help="read the RM address(es) from this yarn-site.xml")
    s.add_argument("--serve-status", type=argtypes.path, metavar="FILE", help="the status file of `yarnctl serve`")
    s.add_argument("--watch", type=argtypes.seconds, nargs="?", const=2.0, metavar="SECONDS",
                   help="redraw every SECONDS (default 2) until Ctrl-C")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    e = sub.add_parser("explain", help="why a pending application is not getting containers",
                       description="The reasons the policy gave, at the latest heartbeats, for leaving APP waiting: "
                                   "each a code and its values in words (queue at its maximum, no node with room, "
                                   "DRESS reserve full, fair share, AM limit...). The policy server explains the "
                                   "oldest pending apps twice a second and writes them into its status file.",
                       epilog=EXPLAIN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("app", metavar="APP", help="the application id, e.g. application_1700000000000_0003")
    e.add_argument("--serve-status", type=argtypes.path, metavar="FILE", help="the status file of `yarnctl serve`")
    e.add_argument("--json", action="store_true", help="print the reasons as JSON")
    return {"status": _cmd_status, "explain": _cmd_explain}


EXPLAIN_EPILOG = """\
examples:
  yarnctl explain application_1700000000000_0003
  yarnctl explain application_1700000000000_0003 --serve-status /var/run/yarnctl/serve-status.json --json
  yarnctl simulate --workload dress-mr20 --policy dress --explain j10     # the same in the simulator

The status file is the first of: --serve-status, the running local cluster's, ~/.yarnctl/serve-status.json.
Exit status: 0 with reasons, 1 when APP is not among the apps the server explains (not pending, served at
its latest look, or beyond the oldest 20), 2 when no server is running.
"""


def _cmd_explain(args: argparse.Namespace) -> int:
    doc = running_server(args.serve_status)
    waiting = doc.get("waiting") or {}
    reasons = waiting.get(args.app)
    if args.json:
        jsonout.dump({"app": args.app, "policy": doc.get("policy"), "waiting": reasons or []})
        return 0 if reasons else 1
    if not reasons:
        others = ", ".join(sorted(waiting)[:5]) or "none"
        print(f"{args.app} is not waiting at the policy server's latest look ({doc.get('policy')}: it explains the "
              f"oldest pending apps that got nothing; waiting now: {others})", file=sys.stderr)
        return 1
    from rich.table import Table

    t = Table(title=f"why {args.app} waits under {doc.get('policy')} (latest last)")
    for col in ("at", "node", "reason", "in words"):
        t.add_column(col, no_wrap=col != "in words")
    for r in reasons:
        t.add_row(time.strftime("%H:%M:%S", time.localtime(float(r.get("at", 0)))), str(r.get("node", "")),
                  str(r.get("code", "")), str(r.get("text", "")))
    screen().print(t)
    return 0


def screen() -> Console:
    """The terminal's console, or a wide one when piped (rich would cut the tables at 80 columns)."""
    from rich.console import Console

    from yarnctl.cli.output import out

    return out if out.is_terminal else Console(highlight=False, soft_wrap=False, width=WIDE)


def _cmd_status(args: argparse.Namespace) -> int:
    out = screen()
    rm, serve_file = _resolve(args)
    try:
        if args.json:
            jsonout.dump(as_json(gather(rm, serve_file)), default=str)
            return 0
        if args.watch is None:
            out.print(render(gather(rm, serve_file)))
            return 0
        from rich.live import Live

        with Live(render(gather(rm, serve_file)), console=out, screen=True, auto_refresh=False) as live:
            while True:
                time.sleep(args.watch)
                live.update(render(gather(rm, serve_file)), refresh=True)
    finally:
        rm.close()


def _resolve(args: argparse.Namespace) -> tuple[ResourceManager, Path | None]:
    """The RM to ask and the serve status file to read, by the precedence the epilog states."""
    from yarnctl.cli.rmopts import resource_manager
    from yarnctl.rm import HttpSettings

    local_rms, local_status = local_cluster()
    env = [u.strip() for u in os.environ.get("YARNCTL_RM", "").split(",") if u.strip()]
    rm = resource_manager(args, HttpSettings(connect_timeout_s=2.0, read_timeout_s=10.0, retries=1, backoff_s=0.5),
                          env or local_rms or ["http://localhost:8088"])
    assert rm is not None  # there is always a default
    return rm, args.serve_status or local_status or DEFAULT_STATUS_FILE.expanduser()


def gather(rm: ResourceManager, serve_file: Path | None) -> StatusView:
    """Read the RM (one call per endpoint) and the serve status file into a view."""
    info = rm.cluster_info()
    return StatusView(rm.active_url or rm.urls[0], time.time(), info, rm.metrics(), rm.nodes(), rm.scheduler(),
                      rm.apps(states=LIVE_STATES), rm.shim_metrics(), *read_status(serve_file))


def as_json(v: StatusView) -> dict[str, Any]:
    """The view as plain JSON (models as dicts, Resources as {memory_mb, vcores})."""
    return dataclasses.asdict(v)


# ---------------------------------------------------------------- rendering


def render(v: StatusView) -> RenderableType:
    """The whole screen: header lines, then the node, queue and app tables."""
    from rich.console import Group
    from rich.text import Text

    serve = _serve(v)
    parts = [*_header(v, serve), Text(""), _nodes(v.nodes), Text(""), _queues(v.scheduler), Text(""), _apps(v)]
    waiting = (v.serve or {}).get("waiting") or {}
    if waiting and not isinstance(serve, str):
        parts += [Text(""), _waiting(waiting)]
    return Group(*parts)


def _serve(v: StatusView) -> list[Text] | str | None:
    """The serve status file's lines; what keeps it from being shown instead (the RM part is shown either way)."""
    from rich.errors import MarkupError

    from yarnctl.cli.running import check_status
    from yarnctl.errors import YarnctlError

    if v.serve is None:
        return None
    try:  # a missing field shows as "?"; one of the wrong type cannot be shown at all
        check_status(v.serve, v.serve_file or "the serve status file", required=())
        return list(_serve_lines(v.serve))
    except YarnctlError as e:
        return str(e)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, MarkupError) as e:  # another version's, or by hand
        return f"{v.serve_file}: not a status file this yarnctl reads ({type(e).__name__}: {e})"


def _header(v: StatusView, serve: list[Text] | str | None) -> Iterator[Text]:
    m = v.metrics
    stamp = time.strftime("%H:%M:%S", time.localtime(v.at))
    yield _markup(f"[bold]yarnctl status[/bold]  {v.rm_url}  ResourceManager {v.info.ha_state}, "
                  f"Hadoop {v.info.hadoop_version}, {v.scheduler.type}  [dim]{stamp}[/dim]")
    bad = m.lost_nodes + m.unhealthy_nodes + m.decommissioned_nodes + m.rebooted_nodes
    yield _line("Cluster", f"{m.active_nodes} nodes running" + (f", {bad} lost/unhealthy/decommissioned" if bad else "")
                + f" · apps {m.apps_running} running, {m.apps_pending} pending, {m.apps_completed} completed"
                + f" · containers {m.containers_allocated} (+{m.containers_pending} pending)"
                + f" · memory {_gib(m.allocated.memory_mb)}/{_gib(m.total.memory_mb)} GiB"
                + f" ({_share(m.allocated.memory_mb, m.total.memory_mb)})"
                + f" · vcores {m.allocated.vcores}/{m.total.vcores} ({_share(m.allocated.vcores, m.total.vcores)})")
    yield from _policy(v, serve)


def _policy(v: StatusView, serve: list[Text] | str | None) -> Iterator[Text]:
    from rich.markup import escape

    if serve is None:
        yield _line("Policy", f"[dim]no yarnctl serve status at {v.serve_file or '(none)'} (--serve-status)[/dim]")
    elif isinstance(serve, str):
        yield _line("Policy", f"[red]{escape(serve)}[/red]")
    else:
        yield from serve
    if v.shim is not None:
        sh = v.shim
        reasons = ", ".join(f"{n} {why}" for why, n in (
            ("timeout", sh.fallback_timeout), ("error", sh.fallback_error), ("unreachable", sh.fallback_unreachable),
            ("refused", sh.fallback_refused), ("breaker open", sh.fallback_breaker_open),
            ("disabled", sh.fallback_disabled)) if n)
        breaker = "[red]OPEN[/red]" if sh.breaker_open else "closed"
        yield _line("Shim", f"heartbeats {sh.delegated:,} by policy, {sh.fallback:,} native"
                    + (f" ({reasons})" if reasons else "")
                    + f" · breaker {breaker} (opened {sh.breaker_opens}x)"
                    + f" · containers {sh.containers_by_policy:,} by policy, {sh.containers_native:,} native"
                    + f" · refused {_rejected(sh.rejected, sh.rejected_by)}"
                    + f" · last call {sh.last_latency_micros:,} µs of {sh.deadline_millis} ms")


def _serve_lines(s: dict[str, Any]) -> Iterator[Text]:
    """The Policy, Tuning, Control and Swap lines of a serve status document."""
    from rich.markup import escape

    state = "[green]serving[/green]" if s.get("running") else "[red]not running[/red] (status file is old)"
    p99 = s.get("p99_us_le")
    yield _line("Policy", f"{escape(str(s.get('policy', '?')))} {state} · pid {s.get('pid', '?')} · up {_dur(s.get('uptime_s'))}"
                f" · {s.get('decisions_per_s', 0):g} decisions/s · calls {s.get('calls', 0):,}"
                f" · errors {s.get('errors', 0):,} · rejected {_rejected(s.get('rejected', 0), s.get('rejected_by'))}"
                + (f" · p99 ≤ {p99} µs" if isinstance(p99, int) and p99 > 0 else ""))
    tuning = s.get("tuning") or {}
    yield _line("Tuning", ", ".join(f"{escape(str(k))}={_g(v)}" for k, v in sorted(tuning.items())) or "[dim](none)[/dim]")
    yield _line("Control", _control(s.get("control_loop")))
    swap = _swap(s.get("swap"))
    if swap:
        yield _line("Swap", swap)


def _swap(swap: dict[str, Any] | None) -> str:
    """A candidate under check, else the last swap event ("" when the policy was never swapped)."""
    from rich.markup import escape

    from yarnctl.bridge.swap import check_text, event_text

    if not swap:
        return ""
    cand = swap.get("candidate")
    if cand:
        return f"[yellow]{escape(check_text(cand))}[/yellow] · yarnctl policy rollback cancels it"
    events = swap.get("events") or []
    if not events:
        return ""
    last = events[-1]
    return (f"{time.strftime('%H:%M:%S', time.localtime(last['at']))} {last['event']}: {escape(event_text(last))}"
            + (f" · rollback to {swap['previous']}" if swap.get("previous") else ""))


def _rejected(total: int, by_code: dict[str, int] | None) -> str:
    """`3 (no-fit 2, locality 1)`: refusals by the codes the validator and the shim share."""
    codes = ", ".join(f"{code} {n:,}" for code, n in sorted((by_code or {}).items(), key=lambda x: (-x[1], x[0])) if n)
    return f"{total:,}" + (f" ({codes})" if codes else "")


def _control(loop: dict[str, Any] | None) -> str:
    from rich.markup import escape

    if not loop:
        return "[dim]off (serve without --rm)[/dim]"
    fresh = "[red]STALE[/red]" if loop.get("stale") else "[green]fresh[/green]"
    age = loop.get("age_s")
    text = f"{fresh} · polls {escape(str(loop.get('rm')))} every {loop.get('interval_s', 0):g} s"
    text += f" · last good {age:g} s ago" if age is not None else " · no good poll yet"
    if loop.get("containers_measured") is not None:
        text += f" · {loop['containers_measured']} containers measured"
    if loop.get("stale") and loop.get("error"):
        text += f" · {escape(str(loop['error']))}"
    elif loop.get("stale") and age is not None:
        text += " · a poll is overdue (a read of the cluster is slow)"
    return text


def _nodes(nodes: tuple[NodeReport, ...]) -> Table:
    t = _table("NODE", "RACK", "STATE", "CONTAINERS", "MEMORY USED", "VCORES USED", "HEALTH")
    for n in sorted(nodes, key=lambda n: n.id):
        cap = n.capacity
        state = n.state if n.state == "RUNNING" else f"[red]{n.state}[/red]"
        t.add_row(n.id, n.rack, state, str(n.num_containers),
                  f"{_gib(n.used.memory_mb)}/{_gib(cap.memory_mb)} GiB {_share(n.used.memory_mb, cap.memory_mb):>4}",
                  f"{n.used.vcores}/{cap.vcores}", n.health_report or "ok")
    return t


def _queues(s: SchedulerInfo) -> Table:
    t = _table("QUEUE", "CAPACITY", "USED", "MAX", "APPS")
    if s.fifo is not None:
        f = s.fifo
        t.add_row("default (fifo)", _pct(f.capacity * 100), _pct(f.used_capacity * 100), _pct(100.0), "-")
    elif s.root is not None:
        for depth, q in _walk(s.root):
            t.add_row("  " * depth + q.name, _pct(q.capacity), _pct(q.used_capacity), _pct(q.max_capacity),
                      "-" if q.num_applications is None else str(q.num_applications))
    return t


def _walk(q: QueueInfo, depth: int = 0) -> Iterator[tuple[int, QueueInfo]]:
    yield depth, q
    for child in q.children:
        yield from _walk(child, depth + 1)


def _apps(v: StatusView) -> Table:
    t = _table("APP", "USER", "QUEUE", "STATE", "PROGRESS", "CONTAINERS", "ALLOCATED", "PENDING", "MB·S", "VCORE·S",
               "ELAPSED", "NAME")
    for a in sorted(v.apps, key=lambda a: (a.started_time_ms, a.id)):
        pending = a.pending
        t.add_row(a.id, a.user, a.queue, a.state, f"{a.progress:.0f}%", str(a.running_containers),
                  _res(a.allocated.memory_mb, a.allocated.vcores), _res(pending.memory_mb, pending.vcores),
                  f"{a.memory_seconds:,}", f"{a.vcore_seconds:,}", _dur(a.elapsed_time_ms / 1000), a.name[:30])
    if not v.apps:
        t.add_row("[dim](no live apps)[/dim]", *[""] * 11)
    return t


def _waiting(waiting: dict[str, Any]) -> Table:
    """The oldest pending apps and the latest reason the policy gave for each (`yarnctl explain APP` for more)."""
    t = _table("WAITING APP", "REASON", "IN WORDS")
    for app, reasons in sorted(waiting.items()):
        if reasons:
            t.add_row(app, str(reasons[-1].get("code", "")), str(reasons[-1].get("text", "")))
    return t


def _table(*columns: str) -> Table:
    from rich.table import Table

    t = Table(box=None, pad_edge=False, header_style="bold")
    for c in columns:
        t.add_column(c, no_wrap=True)
    return t


def _g(v: Any) -> str:
    """A tuning value as the status file has it: a number, null (not defined) as -, "inf" or "-inf" as is."""
    return "-" if v is None else v if isinstance(v, str) and v in ("inf", "-inf") else f"{v:g}"


def _line(label: str, text: str) -> Text:
    return _markup(f"[bold]{label:<8}[/bold] {text}")


def _markup(text: str) -> Text:
    from rich.text import Text

    return Text.from_markup(text)


def _gib(mb: int) -> str:
    return f"{mb / 1024:.1f}"


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}%"


def _res(mb: int, vcores: int) -> str:
    return "-" if mb == 0 and vcores == 0 else f"{_gib(mb)} GiB/{vcores}"


def _dur(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
