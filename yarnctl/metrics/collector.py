"""A prometheus_client collector that reads a PolicyService's counters and last snapshot at scrape time."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIServer

from prometheus_client import start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

import yarnctl
from yarnctl.bridge.service import BUCKETS_US
from yarnctl.bridge.swap import SwapEvent
from yarnctl.model import ZERO, Locality, RejectCode
from yarnctl.policies.waiting import WaitCode

if TYPE_CHECKING:
    from yarnctl.bridge.service import PolicyService
    from yarnctl.rm.models import ShimMetrics
    from yarnctl.rm.observe import ControlLoop

log = logging.getLogger(__name__)

MIB = 1 << 20
UP_WITHIN_S = 10.0  # the shim calls once per NM heartbeat (1 s by default): 10 s of silence means down

# every family ServeCollector yields, as exposed (counters with their _total); the dashboard test checks against it
METRIC_NAMES: tuple[str, ...] = (
    "yarnctl_info", "yarnctl_decisions_total", "yarnctl_policy_errors_total", "yarnctl_rejected_total",
    "yarnctl_containers_assigned_total", "yarnctl_full_syncs_total", "yarnctl_bridge_auth_failures_total", "yarnctl_decision_duration_seconds",
    "yarnctl_bridge_last_call_age_seconds", "yarnctl_bridge_up", "yarnctl_cluster_capacity_bytes",
    "yarnctl_cluster_allocated_bytes", "yarnctl_cluster_capacity_vcores", "yarnctl_cluster_allocated_vcores",
    "yarnctl_nodes", "yarnctl_apps", "yarnctl_pending_containers", "yarnctl_policy_tune_errors_total",
    # per queue: what its apps hold, and (under a scheduler with queues) the most it may hold
    "yarnctl_queue_allocated_bytes", "yarnctl_queue_max_bytes",
    # why the oldest pending apps wait (bridge/waits.py), and calls where explaining them failed
    "yarnctl_waiting_apps", "yarnctl_explain_errors_total",
    # hot swaps by event (bridge/swap.py), and heartbeats that waited for the service's lock
    "yarnctl_policy_swaps_total", "yarnctl_waited_calls_total",
    # with a control loop (serve --rm)
    "yarnctl_control_loop_stale", "yarnctl_control_loop_age_seconds", "yarnctl_control_loop_polls_total",
    "yarnctl_control_loop_duration_seconds", "yarnctl_cluster_used_bytes", "yarnctl_cluster_used_vcores",
    # the shim's counters, as the control loop last read them from the RM's /jmx
    "yarnctl_shim_heartbeats_total", "yarnctl_shim_fallbacks_total", "yarnctl_shim_containers_total",
    "yarnctl_shim_breaker_open", "yarnctl_shim_breaker_opens_total", "yarnctl_shim_rejected_total",
    "yarnctl_shim_kills_total", "yarnctl_shim_resizes_total", "yarnctl_shim_last_latency_seconds",
)
# a policy's tuning values are exported as yarnctl_<name> gauges: "dress_reserve_ratio", or with labels
# from the fixed set, 'hmrf_sharing_degree{queue="a"}'
TUNING_KEY = re.compile(r'(?P<name>[a-z][a-z0-9_]*)(?:\{(?P<labels>[a-z]+="[^"{}]*"(?:,[a-z]+="[^"{}]*")*)\})?\Z')
TUNING_LABELS = frozenset({"queue", "category", "resource"})


class ServeCollector(Collector):
    """Fresh metric families from `service` on every scrape; holds no state of its own."""

    def __init__(self, service: PolicyService, loop: ControlLoop | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.service = service
        self.loop = loop
        self.clock = clock
        self._bad_names: set[str] = set()

    def collect(self) -> Iterator[Metric]:
        """Yield every yarnctl_ family; only the cluster's snapshot is taken under the service lock (a few µs)."""
        svc, st = self.service, self.service.stats
        info = GaugeMetricFamily("yarnctl_info", "The policy being served and the yarnctl version.",
                                 labels=["policy", "version"])
        info.add_metric([svc.policy_name, yarnctl.__version__], 1)
        yield info
        dec = CounterMetricFamily("yarnctl_decisions", "Shim calls answered, by outcome.", labels=["outcome"])
        for outcome, n in (("ok", st.ok), ("resync", st.resync), ("error", st.errors)):
            dec.add_metric([outcome], n)
        yield dec
        for name, doc, n in (
            ("yarnctl_policy_errors", "Calls where the policy raised or returned no Decision.", st.policy_errors),
            ("yarnctl_containers_assigned", "Containers assigned by accepted decisions.", st.assigned),
            ("yarnctl_full_syncs", "Full-state requests received from the shim.", st.full_syncs),
            ("yarnctl_bridge_auth_failures", "Connections the bridge refused at authentication (a port probe, a wrong credential).",
             st.auth_failures),
            ("yarnctl_policy_tune_errors", "Control-loop observations the policy failed to take in.",
             st.tune_errors),
            ("yarnctl_explain_errors", "Calls whose waiting apps could not be explained (the decision stands).",
             st.explain_errors),
            ("yarnctl_waited_calls", "Calls that waited 1 ms or more for the policy server's lock (behind another "
             "call, a tune or a swap).", st.waited),
        ):
            yield CounterMetricFamily(name, doc, value=n)
        swaps = CounterMetricFamily("yarnctl_policy_swaps", "Hot policy swap events (yarnctl policy set/rollback).",
                                    labels=["event"])
        for event in SwapEvent:  # every event, zero included
            swaps.add_metric([event.value], svc.swap_counts.get(event.value, 0))
        yield swaps
        rejected = CounterMetricFamily("yarnctl_rejected", "Decision items the engine's validation rejected, by "
                                       "refusal code (the codes the shim refuses with).", labels=["outcome"])
        for code in RejectCode:  # every reason, zero included, so rate() has a series from the start
            rejected.add_metric([code.value], st.rejected_by.get(code.value, 0))
        yield rejected
        yield self._histogram()
        yield from self._bridge()
        yield from self._cluster()
        yield from self._tuning()
        if self.loop is not None:
            yield from self._control_loop(self.loop)

    def _tuning(self) -> Iterator[Metric]:
        families: dict[str, GaugeMetricFamily] = {}
        label_sets: dict[str, tuple[str, ...]] = {}
        for key, value in sorted(self.service.tuning.items()):
            parsed = _tuning_key(key)
            if parsed is None:
                if key not in self._bad_names:  # once per key: scrapes come every few seconds
                    self._bad_names.add(key)
                    log.warning("policy %s: tuning value %r is not name or name{label=\"v\"} with labels from %s; "
                                "not exported", self.service.policy_name, key, sorted(TUNING_LABELS))
                continue
            name, labels = parsed
            if name not in families:
                label_sets[name] = tuple(labels)
                families[name] = GaugeMetricFamily(
                    f"yarnctl_{name}", f"Tuning value {name} of policy {self.service.policy_name}.", labels=list(labels))
            if tuple(labels) == label_sets[name]:  # one family, one label set: the first key decides
                families[name].add_metric(list(labels.values()), value)
        yield from families.values()

    def _control_loop(self, loop: ControlLoop) -> Iterator[Metric]:
        st = loop.state  # replaced whole by the loop: one consistent read
        yield GaugeMetricFamily("yarnctl_control_loop_stale",
                                "1 if the policy works from old data: the last control-loop poll failed, none has "
                                "succeeded yet, or one is overdue.",
                                value=1 if st.stale_at(self.clock()) else 0)
        age = GaugeMetricFamily("yarnctl_control_loop_age_seconds",
                                "Seconds since the control loop last read the cluster (absent before it has).")
        now_age = st.age_s(self.clock())
        if now_age is not None:
            age.add_metric([], now_age)
        yield age
        polls = CounterMetricFamily("yarnctl_control_loop_polls", "Control-loop polls of the RM, by outcome.",
                                    labels=["outcome"])
        polls.add_metric(["ok"], st.polls - st.failures)
        polls.add_metric(["error"], st.failures)
        yield polls
        yield GaugeMetricFamily("yarnctl_control_loop_duration_seconds", "How long the last control-loop poll took.",
                                value=st.poll_s)
        used_b = GaugeMetricFamily("yarnctl_cluster_used_bytes",
                                   "Memory running containers actually use (NodeManager usage beans).")
        used_v = GaugeMetricFamily("yarnctl_cluster_used_vcores", "Cores running containers actually keep busy.")
        obs = st.reading.observation if st.reading else None
        if obs is not None and obs.usage_measured:
            mem, cpu = obs.used()
            used_b.add_metric([], mem * MIB)
            used_v.add_metric([], cpu)
        yield used_b
        yield used_v
        yield from _shim(st.reading.shim if st.reading else None)

    def _histogram(self) -> HistogramMetricFamily:
        # copy first: a heartbeat may bump a bucket mid-read; count is derived from the copy so
        # buckets and +Inf always agree (the sum may lag by one call)
        counts, total_us = list(self.service.stats.latency_us), self.service.stats.latency_sum_us
        buckets: list[tuple[str, float]] = []
        seen = 0
        for bound, n in zip((*(f"{b / 1e6:g}" for b in BUCKETS_US), "+Inf"), counts):
            seen += n
            buckets.append((bound, float(seen)))
        return HistogramMetricFamily("yarnctl_decision_duration_seconds",
                                     "Time PolicyService.decide took per shim call.",
                                     buckets=buckets, sum_value=total_us / 1e6)

    def _bridge(self) -> Iterator[Metric]:
        last = self.service.stats.last_call_s
        age = GaugeMetricFamily("yarnctl_bridge_last_call_age_seconds",
                                "Seconds since the shim last called (absent before the first call).")
        if last is not None:
            age.add_metric([], max(0.0, self.clock() - last))
        yield age
        up = last is not None and self.clock() - last <= UP_WITHIN_S
        yield GaugeMetricFamily("yarnctl_bridge_up", f"1 if the shim called within the last {UP_WITHIN_S:g} s.",
                                value=1 if up else 0)

    def _cluster(self) -> Iterator[Metric]:
        # the last decided call's cluster, taken under the service lock (a moment between two calls); empty
        # families before the first call, and after a failed call that changed the mirror until the full sync
        snap = self.service.last_snapshot
        fams = {
            "capacity_bytes": GaugeMetricFamily("yarnctl_cluster_capacity_bytes", "Memory of all live nodes."),
            "allocated_bytes": GaugeMetricFamily("yarnctl_cluster_allocated_bytes", "Memory of live containers."),
            "capacity_vcores": GaugeMetricFamily("yarnctl_cluster_capacity_vcores", "Vcores of all live nodes."),
            "allocated_vcores": GaugeMetricFamily("yarnctl_cluster_allocated_vcores", "Vcores of live containers."),
            "nodes": GaugeMetricFamily("yarnctl_nodes", "Live NodeManagers."),
            "pending": GaugeMetricFamily("yarnctl_pending_containers", "Containers asked for and not yet allocated."),
        }
        apps = GaugeMetricFamily("yarnctl_apps", "Apps holding containers (running) or only asking (pending).",
                                 labels=["state"])
        queue_held = GaugeMetricFamily("yarnctl_queue_allocated_bytes", "Memory the apps of a queue hold.",
                                       labels=["queue"])
        queue_max = GaugeMetricFamily("yarnctl_queue_max_bytes", "Memory a queue may hold at most: its maximum "
                                      "capacity, or the cluster's without a queue tree.", labels=["queue"])
        if snap is not None:
            mem = vcores = 0
            for node in snap.nodes.values():
                mem, vcores = mem + node.allocated.memory_mb, vcores + node.allocated.vcores
            fams["capacity_bytes"].add_metric([], snap.capacity.memory_mb * MIB)
            fams["allocated_bytes"].add_metric([], mem * MIB)
            fams["capacity_vcores"].add_metric([], snap.capacity.vcores)
            fams["allocated_vcores"].add_metric([], vcores)
            fams["nodes"].add_metric([], len(snap.nodes))
            # an app's ANY row carries its outstanding count (locals only refine where)
            fams["pending"].add_metric([], sum(r.count for rs in snap.asks.values() for r in rs
                                               if r.locality is Locality.ANY))
            running = sum(1 for a in snap.apps if a in snap.app_allocated)
            pending = sum(1 for a in snap.apps if a not in snap.app_allocated and a in snap.asks)
            apps.add_metric(["running"], running)
            apps.add_metric(["pending"], pending)
            # the scheduler's leaves, or without a tree (FifoScheduler) its one queue, plus what apps name
            leaves = {q.name: q.max_resources for q in snap.queues.values() if q.leaf} or {"default": snap.capacity}
            for q in sorted(set(leaves) | set(snap.queue_allocated) | {a.queue for a in snap.apps.values()}):
                queue_held.add_metric([q], snap.queue_allocated.get(q, ZERO).memory_mb * MIB)
                # a queue outside the tree (FifoScheduler's) may take the whole cluster
                queue_max.add_metric([q], leaves.get(q, snap.capacity).memory_mb * MIB)
        yield from fams.values()
        yield apps
        yield queue_held
        yield queue_max
        waiting = GaugeMetricFamily("yarnctl_waiting_apps", "Pending apps the policy server explained (the oldest "
                                    "ones, `yarnctl explain`), by the reason of their latest wait.", labels=["reason"])
        by_reason = self.service.waits.by_reason()
        for code in WaitCode:  # every reason, 0 when none: a bounded label set whose series never vanish
            waiting.add_metric([code.value], by_reason.get(code.value, 0))
        yield waiting


def _tuning_key(key: str) -> tuple[str, dict[str, str]] | None:
    """A tuning key's metric name and labels (sorted), or None when it is not exportable."""
    m = TUNING_KEY.match(key)
    if m is None:
        return None
    labels = dict(sorted(part.split("=", 1) for part in m["labels"].split(","))) if m["labels"] else {}
    if not set(labels) <= TUNING_LABELS:
        return None
    return m["name"], {k: v.strip('"') for k, v in labels.items()}


def _shim(shim: ShimMetrics | None) -> Iterator[Metric]:
    """The shim bean's counters; empty families when the RM does not run the shim (or was never read)."""
    hb = CounterMetricFamily("yarnctl_shim_heartbeats", "Node heartbeats the shim handled, by who decided.",
                             labels=["outcome"])
    fb = CounterMetricFamily("yarnctl_shim_fallbacks", "Heartbeats the shim decided natively, by reason.",
                             labels=["outcome"])
    cs = CounterMetricFamily("yarnctl_shim_containers", "Containers the shim allocated, by who decided.",
                             labels=["outcome"])
    breaker = GaugeMetricFamily("yarnctl_shim_breaker_open", "1 while the shim's circuit breaker is open.")
    opens = CounterMetricFamily("yarnctl_shim_breaker_opens", "Times the shim's circuit breaker opened.")
    rejected = CounterMetricFamily("yarnctl_shim_rejected", "Decision items the shim refused against live RM "
                                   "state, by refusal code.", labels=["outcome"])
    kills = CounterMetricFamily("yarnctl_shim_kills", "Containers the shim killed on a policy's decision.")
    resizes = CounterMetricFamily("yarnctl_shim_resizes", "Node capacity changes the shim applied.")
    latency = GaugeMetricFamily("yarnctl_shim_last_latency_seconds", "Round trip of the shim's last policy call.")
    if shim is not None:
        hb.add_metric(["delegated"], shim.delegated)
        hb.add_metric(["fallback"], shim.fallback)
        for reason, n in (("timeout", shim.fallback_timeout), ("error", shim.fallback_error),
                          ("unreachable", shim.fallback_unreachable), ("refused", shim.fallback_refused),
                          ("breaker_open", shim.fallback_breaker_open), ("disabled", shim.fallback_disabled)):
            fb.add_metric([reason], n)
        cs.add_metric(["policy"], shim.containers_by_policy)
        cs.add_metric(["native"], shim.containers_native)
        breaker.add_metric([], 1 if shim.breaker_open else 0)
        opens.add_metric([], shim.breaker_opens)
        for code in RejectCode:
            rejected.add_metric([code.value], shim.rejected_by.get(code.value, 0))
        unclassified = shim.rejected - sum(shim.rejected_by.values())
        if unclassified > 0:  # a shim that does not count refusals by code yet
            rejected.add_metric(["unclassified"], unclassified)
        kills.add_metric([], shim.killed)
        resizes.add_metric([], shim.resized)
        latency.add_metric([], shim.last_latency_micros / 1e6)
    yield from (hb, fb, cs, breaker, opens, rejected, kills, resizes, latency)


def start_metrics_server(service: PolicyService, port: int, address: str = "127.0.0.1",
                         loop: ControlLoop | None = None) -> tuple[int, WSGIServer]:
    """Serve /metrics for `service` (and its control loop) from a daemon thread; return the bound port and server."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ServeCollector(service, loop))
    server, _thread = start_http_server(port, address, registry=registry)
    return server.server_port, server
