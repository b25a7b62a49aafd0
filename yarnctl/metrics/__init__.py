"""Prometheus exporter for `yarnctl serve`: the only importer of prometheus_client."""

from yarnctl.metrics.collector import METRIC_NAMES, ServeCollector, start_metrics_server

__all__ = ["METRIC_NAMES", "ServeCollector", "start_metrics_server"]
