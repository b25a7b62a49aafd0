"""ServeCollector on a fresh registry over a PolicyService driven by the shared wire fixtures."""

from __future__ import annotations

import re

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from wirefixtures import STATE, text

import yarnctl
from yarnctl.bridge.service import BUCKETS_US, PolicyService
from yarnctl.metrics import METRIC_NAMES, ServeCollector
from yarnctl.policies import make_policy

MIB = 1 << 20
NOW = 1_800_000_000.0


def _scrape(service: PolicyService, now: float = NOW) -> tuple[CollectorRegistry, str]:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ServeCollector(service, clock=lambda: now))
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
    _, out = _scrape(service)
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
            assert set(s.labels) <= {"policy", "version", "outcome", "state", "le"}, (s.name, s.labels)
    assert "token" not in out.lower()
