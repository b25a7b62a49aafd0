"""A prometheus_client collector that reads a PolicyService's counters and last snapshot at scrape time."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIServer

from prometheus_client import start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

import yarnctl
from yarnctl.bridge.service import BUCKETS_US
from yarnctl.model import Locality

if TYPE_CHECKING:
    from yarnctl.bridge.service import PolicyService

MIB = 1 << 20
UP_WITHIN_S = 10.0  # the shim calls once per NM heartbeat (1 s by default): 10 s of silence means down

# every family ServeCollector yields, as exposed (counters with their _total); the dashboard test checks against it
METRIC_NAMES: tuple[str, ...] = (
    "yarnctl_info", "yarnctl_decisions_total", "yarnctl_policy_errors_total", "yarnctl_rejected_total",
    "yarnctl_containers_assigned_total", "yarnctl_full_syncs_total", "yarnctl_decision_duration_seconds",
    "yarnctl_bridge_last_call_age_seconds", "yarnctl_bridge_up", "yarnctl_cluster_capacity_bytes",
    "yarnctl_cluster_allocated_bytes", "yarnctl_cluster_capacity_vcores", "yarnctl_cluster_allocated_vcores",
    "yarnctl_nodes", "yarnctl_apps", "yarnctl_pending_containers",
)


class ServeCollector(Collector):
    """Fresh metric families from `service` on every scrape; holds no state of its own."""

    def __init__(self, service: PolicyService, clock: Callable[[], float] = time.time) -> None:
        self.service = service
        self.clock = clock

    def collect(self) -> Iterator[Metric]:
        """Yield every yarnctl_ family; read without the service's lock so scrapes never delay a heartbeat."""
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
            ("yarnctl_rejected", "Decision items the engine's validation rejected.", st.rejected),
            ("yarnctl_containers_assigned", "Containers assigned by accepted decisions.", st.assigned),
            ("yarnctl_full_syncs", "Full-state requests received from the shim.", st.full_syncs),
        ):
            yield CounterMetricFamily(name, doc, value=n)
        yield self._histogram()
        yield from self._bridge()
        yield from self._cluster()

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
        # the snapshot of the last decided call: immutable, so no lock; empty families before the first
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
            fams["pending"].add_metric([], sum(r.count for rs in snap.requests.values() for r in rs
                                               if r.locality is Locality.ANY))
            running = sum(1 for a in snap.apps if a in snap.app_allocated)
            pending = sum(1 for a in snap.apps if a not in snap.app_allocated and a in snap.requests)
            apps.add_metric(["running"], running)
            apps.add_metric(["pending"], pending)
        yield from fams.values()
        yield apps


def start_metrics_server(service: PolicyService, port: int, address: str = "127.0.0.1") -> tuple[int, WSGIServer]:
    """Serve /metrics for `service` from a daemon thread on a fresh registry; return the bound port and server."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ServeCollector(service))
    server, _thread = start_http_server(port, address, registry=registry)
    return server.server_port, server
