"""ServeCollector on a fresh registry over a PolicyService driven by the shared wire fixtures."""

from __future__ import annotations

import dataclasses
import logging
import re
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from wirefixtures import STATE, text

import yarnctl
from yarnctl.bridge.service import BUCKETS_US, PolicyService
from yarnctl.metrics import METRIC_NAMES, ServeCollector
from yarnctl.model import ContainerLoad, NodeLoad, Observation, Resources
from yarnctl.policies.waiting import WaitCode
from yarnctl.policies import make_policy
from yarnctl.rm import ShimMetrics
from yarnctl.rm.observe import LoopState, Reading

MIB = 1 << 20
NOW = 1_800_000_000.0


SHIM = ShimMetrics(heartbeats=100, delegated=90, fallback=10, fallback_timeout=4, fallback_error=1,
                   fallback_unreachable=3, fallback_refused=0, fallback_breaker_open=2, fallback_disabled=0,
                   containers_by_policy=40, containers_native=5, rejected=2, killed=1, resized=0, full_syncs=3,
                   breaker_opens=1, breaker_open=True, last_latency_micros=420, deadline_millis=10)


def _loop(stale: bool = False, shim: ShimMetrics | None = SHIM) -> Any:
    """A stand-in for ControlLoop: the collector reads only its `state`."""
    obs = Observation.build(NOW - 3, [NodeLoad("n1:1", Resources(8192, 8), Resources(2048, 2))], [],
                            [ContainerLoad("container_1_0001_01_000001", "application_1_0001", "n1:1", 300.5, 0.75),
                             ContainerLoad("container_1_0001_01_000002", "application_1_0001", "n1:1", 200.0, 1.0)],
                            usage_measured=True)
    return SimpleNamespace(state=LoopState(Reading(obs, shim), ok_at=NOW - 3, stale=stale, error="x" if stale else "",
                                           polls=7, failures=2, poll_s=0.04, interval_s=5.0))


def _scrape(service: PolicyService, now: float = NOW, loop: Any = None) -> tuple[CollectorRegistry, str]:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ServeCollector(service, loop, clock=lambda: now))
    return reg, generate_latest(reg).decode()


def _value(reg: CollectorRegistry, name: str, **labels: str) -> float | None:
    return reg.get_sample_value(name, labels)


@pytest.fixture
def service() -> PolicyService:
    return PolicyService(make_policy("fifo"))


def test_before_any_call_counters_are_zero_and_cluster_is_absent(service: PolicyService) -> None:
    reg, out = _scrape(service)
    assert _value(reg, "yarnctl_info", policy="fifo", version=yarnctl.__version__) == 1
    assert _value(reg, "yarnctl_decisions_total", outcome="ok") == 0
    assert _value(reg, "yarnctl_bridge_up") == 0
    assert _value(reg, "yarnctl_bridge_last_call_age_seconds") is None
    assert _value(reg, "yarnctl_cluster_capacity_bytes") is None
    assert _value(reg, "yarnctl_decision_duration_seconds_count") == 0


def test_after_full_and_delta(service: PolicyService) -> None:
    for name in STATE[:2]:
        service.decide(text(name))
    assert service.stats.last_call_s is not None
    reg, _ = _scrape(service, now=service.stats.last_call_s + 2.5)
    assert _value(reg, "yarnctl_decisions_total", outcome="ok") == 2
    assert _value(reg, "yarnctl_decisions_total", outcome="resync") == 0
    assert _value(reg, "yarnctl_decisions_total", outcome="error") == 0
    assert _value(reg, "yarnctl_full_syncs_total") == 1
    assert _value(reg, "yarnctl_containers_assigned_total") == service.stats.assigned
    assert _value(reg, "yarnctl_bridge_up") == 1
    assert _value(reg, "yarnctl_bridge_last_call_age_seconds") == pytest.approx(2.5)
    # 2 nodes of 8192 MiB / 8 vcores; AM 2048 + 1024 of app 1 on n1, AM 1024 of app 2 on n2
    assert _value(reg, "yarnctl_cluster_capacity_bytes") == 2 * 8192 * MIB
    assert _value(reg, "yarnctl_cluster_capacity_vcores") == 16
    assert _value(reg, "yarnctl_cluster_allocated_bytes") == (2048 + 1024 + 1024) * MIB
    assert _value(reg, "yarnctl_cluster_allocated_vcores") == 3
    assert _value(reg, "yarnctl_nodes") == 2
    # ANY counts: app 1 priority 10 x1 and 20 x4, app 2 priority 0 x3 (the delta's update)
    assert _value(reg, "yarnctl_pending_containers") == 1 + 4 + 3
    assert _value(reg, "yarnctl_apps", state="running") == 2
    assert _value(reg, "yarnctl_apps", state="pending") == 0
    assert _value(reg, "yarnctl_decision_duration_seconds_count") == 2


def test_an_app_without_containers_is_pending(service: PolicyService) -> None:
    service.decide(text("request-full.json"))
    reg, _ = _scrape(service)
    assert _value(reg, "yarnctl_apps", state="running") == 1
    assert _value(reg, "yarnctl_apps", state="pending") == 1


def test_resync_and_error_outcomes(service: PolicyService) -> None:
    service.decide(text("request-delta.json"))  # no full state yet
    service.decide("{not json")
    reg, _ = _scrape(service)
    assert _value(reg, "yarnctl_decisions_total", outcome="resync") == 1
    assert _value(reg, "yarnctl_decisions_total", outcome="error") == 1
    assert _value(reg, "yarnctl_decisions_total", outcome="ok") == 0


def test_histogram_is_cumulative_in_seconds(service: PolicyService) -> None:
    for us in (10, 30, 30, 400, 60_000):
        service.stats.observe(us)
    reg, _ = _scrape(service)
    assert _value(reg, "yarnctl_decision_duration_seconds_bucket", le="2.5e-05") == 1
    assert _value(reg, "yarnctl_decision_duration_seconds_bucket", le="5e-05") == 3
    assert _value(reg, "yarnctl_decision_duration_seconds_bucket", le="0.0003") == 3
    assert _value(reg, "yarnctl_decision_duration_seconds_bucket", le="0.0005") == 4
    assert _value(reg, "yarnctl_decision_duration_seconds_bucket", le="0.05") == 4
    assert _value(reg, "yarnctl_decision_duration_seconds_bucket", le="+Inf") == 5
    assert _value(reg, "yarnctl_decision_duration_seconds_count") == 5
    assert _value(reg, "yarnctl_decision_duration_seconds_sum") == pytest.approx(60_470e-6)
    les = [s.labels["le"] for f in text_string_to_metric_families(generate_latest(reg).decode())
           if f.name == "yarnctl_decision_duration_seconds" for s in f.samples if s.name.endswith("_bucket")]
    assert len(les) == len(BUCKETS_US) + 1


def test_the_bridge_is_down_after_ten_silent_seconds(service: PolicyService) -> None:
    service.decide(text("request-full.json"))
    assert service.stats.last_call_s is not None
    reg, _ = _scrape(service, now=service.stats.last_call_s + 10.5)
    assert _value(reg, "yarnctl_bridge_up") == 0


def test_names_follow_the_conventions(service: PolicyService) -> None:
    for name in STATE:
        service.decide(text(name))
    _, out = _scrape(service, loop=_loop())
    families = list(text_string_to_metric_families(out))  # parses, or raises
    assert sorted(f.name + ("_total" if f.type == "counter" else "") for f in families) == sorted(METRIC_NAMES)
    for f in families:
        assert f.name.startswith("yarnctl_"), f.name
        assert f.documentation, f.name
        if f.type == "counter":
            assert not re.search(r"_(seconds|bytes|vcores)$", f.name), f.name
        # no millisecond/megabyte units: base units only
        assert not re.search(r"_(ms|us|mb|mib|kb|millis|micros)(_|$)", f.name), f.name
        for s in f.samples:
            # bounded label values only: queue names are the operator's (or, under FIFO, what apps name),
            # reasons one of WaitCode's, events one of SwapEvent's
            assert set(s.labels) <= {"policy", "version", "outcome", "state", "le", "queue", "reason", "event"}, (s.name, s.labels)
            if "reason" in s.labels:
                assert s.labels["reason"] in {c.value for c in WaitCode}
    assert "token" not in out.lower()


def test_without_a_control_loop_its_families_are_absent(service: PolicyService) -> None:
    reg, out = _scrape(service)
    assert "yarnctl_control_loop" not in out and "yarnctl_shim_" not in out
    assert _value(reg, "yarnctl_policy_tune_errors_total") == 0


def test_control_loop_and_shim_families(service: PolicyService) -> None:
    reg, _ = _scrape(service, loop=_loop())
    assert _value(reg, "yarnctl_control_loop_stale") == 0
    assert _value(reg, "yarnctl_control_loop_age_seconds") == pytest.approx(3.0)
    assert _value(reg, "yarnctl_control_loop_polls_total", outcome="ok") == 5
    assert _value(reg, "yarnctl_control_loop_polls_total", outcome="error") == 2
    assert _value(reg, "yarnctl_control_loop_duration_seconds") == pytest.approx(0.04)
    assert _value(reg, "yarnctl_cluster_used_bytes") == pytest.approx(500.5 * MIB)
    assert _value(reg, "yarnctl_cluster_used_vcores") == pytest.approx(1.75)
    assert _value(reg, "yarnctl_shim_heartbeats_total", outcome="delegated") == 90
    assert _value(reg, "yarnctl_shim_heartbeats_total", outcome="fallback") == 10
    assert _value(reg, "yarnctl_shim_fallbacks_total", outcome="timeout") == 4
    assert _value(reg, "yarnctl_shim_fallbacks_total", outcome="breaker_open") == 2
    assert _value(reg, "yarnctl_shim_containers_total", outcome="policy") == 40
    assert _value(reg, "yarnctl_shim_containers_total", outcome="native") == 5
    assert _value(reg, "yarnctl_shim_breaker_open") == 1
    assert _value(reg, "yarnctl_shim_breaker_opens_total") == 1
    assert _value(reg, "yarnctl_shim_last_latency_seconds") == pytest.approx(420e-6)


def test_a_stale_loop_says_so_and_keeps_the_last_values(service: PolicyService) -> None:
    reg, _ = _scrape(service, now=NOW + 60, loop=_loop(stale=True))
    assert _value(reg, "yarnctl_control_loop_stale") == 1
    assert _value(reg, "yarnctl_control_loop_age_seconds") == pytest.approx(63.0)
    assert _value(reg, "yarnctl_shim_breaker_open") == 1  # the last good reading's


def test_a_loop_whose_poll_is_overdue_is_stale_though_no_poll_failed(service: PolicyService) -> None:
    reg, _ = _scrape(service, now=NOW + 12, loop=_loop())  # read 15 s ago, every 5 s: the poll after it still runs
    assert _value(reg, "yarnctl_control_loop_stale") == 0
    reg, _ = _scrape(service, now=NOW + 13, loop=_loop())  # 16 s: past an interval and OVERDUE_S
    assert _value(reg, "yarnctl_control_loop_stale") == 1
    assert _value(reg, "yarnctl_control_loop_age_seconds") == pytest.approx(16.0)


def test_a_loop_that_never_read_is_stale_with_empty_families(service: PolicyService) -> None:
    loop = SimpleNamespace(state=LoopState(interval_s=5.0))
    reg, _ = _scrape(service, loop=loop)
    assert _value(reg, "yarnctl_control_loop_stale") == 1
    assert _value(reg, "yarnctl_control_loop_age_seconds") is None
    assert _value(reg, "yarnctl_shim_breaker_open") is None
    assert _value(reg, "yarnctl_cluster_used_bytes") is None


def test_tuning_values_become_gauges_and_bad_names_are_skipped(
        service: PolicyService, caplog: pytest.LogCaptureFixture) -> None:
    service.tuning = {"dress_reserve_ratio": 0.25, "Bad-Name": 1.0, 'hmrf_sharing_degree{queue="a"}': 1.5,
                      'hmrf_sharing_degree{queue="b"}': 0.75, 'x{user="u"}': 1.0,
                      'hmrf_accumulated{resource="memory",queue="a"}': 10.0}
    caplog.set_level(logging.WARNING)
    reg, out = _scrape(service)
    generate_latest(reg)  # a second scrape of the same collector
    assert _value(reg, "yarnctl_dress_reserve_ratio") == 0.25
    assert _value(reg, "yarnctl_hmrf_sharing_degree", queue="a") == 1.5
    assert _value(reg, "yarnctl_hmrf_sharing_degree", queue="b") == 0.75
    assert _value(reg, "yarnctl_hmrf_accumulated", queue="a", resource="memory") == 10.0
    assert "Bad" not in out and "user=" not in out  # user is not in the fixed label set
    assert sum("not exported" in r.getMessage() for r in caplog.records) == 2


def test_shim_metrics_fields_are_all_exported() -> None:
    """Every ShimMetrics counter reaches a family (a new bean attribute must not be forgotten here)."""
    exported = {"heartbeats", "deadline_millis", "full_syncs"}  # heartbeats = delegated + fallback; the other
    # two are configuration and the serve-side yarnctl_full_syncs_total
    used = {"delegated", "fallback", "fallback_timeout", "fallback_error", "fallback_unreachable", "fallback_refused",
            "fallback_breaker_open", "fallback_disabled", "containers_by_policy", "containers_native", "rejected",
            "rejected_by",
            "killed", "resized", "breaker_opens", "breaker_open", "last_latency_micros"}
    assert {f.name for f in dataclasses.fields(ShimMetrics)} == exported | used
