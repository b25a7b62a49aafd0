"""The configuration directory one SLS run reads from its classpath: yarn-site, core-site, sls-runner and friends."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from yarnctl.cluster.conf import NATIVE_SCHEDULERS, SHIM_HOSTS, SHIM_SCHEDULER, properties, set_values

# SLSRunner maps an SLS trace's `am.type` to this simulator class through sls-runner.xml
MR_AM_SIMULATOR = "org.apache.hadoop.yarn.sls.appmaster.MRAMSimulator"
# ResourceSchedulerWrapper picks its metrics class by the wrapped scheduler's class name, and knows
# only the three stock ones; the shim is a FifoScheduler, so FIFO's metrics class fits it
FIFO_METRICS = "org.apache.hadoop.yarn.sls.scheduler.FifoSchedulerMetrics"
CAPACITY_METRICS = "org.apache.hadoop.yarn.sls.scheduler.CapacitySchedulerMetrics"  # the CapacityScheduler host's
AM_PERCENT = "yarn.scheduler.capacity.maximum-am-resource-percent"
# SLSWebApp reads these with getResource(..).getFile() in its initializer: without them on the
# classpath (as files, not in a jar) the wrapper's metrics, jobruntime.csv and realtimetrack.json are lost
WEB_TEMPLATES = ("simulate.info.html.template", "simulate.html.template", "track.html.template")

_CAPACITY_XML = {
    "yarn.scheduler.capacity.root.queues": "default",
    "yarn.scheduler.capacity.root.default.capacity": "100",
    "yarn.scheduler.capacity.root.default.maximum-capacity": "100",
    AM_PERCENT: "1.0",  # SLS AMs are unmanaged but still counted
}
_LOG4J = """\
# log4j for one SLS run: the RM's INFO log (container allocations with millisecond UTC times,
# which `yarnctl sls` reads back) to stderr of the SLS JVM
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.logger.org.mortbay.log=WARN
log4j.logger.org.apache.hadoop.yarn.util.AbstractLivelinessMonitor=WARN
"""


@dataclass(frozen=True, slots=True)
class SlsConf:
    """What one SLS run is configured with (sizes are SLS's, one container size for every task)."""

    scheduler_class: str
    rm_ports: Mapping[str, int]          # rm, scheduler, tracker, admin, webapp
    web_port: int                        # SLS's own metrics web app (default 10001, taken per run here)
    nm_memory_mb: int = 4096
    nm_vcores: int = 4
    container_memory_mb: int = 1024
    container_vcores: int = 1
    heartbeat_ms: int = 1000
    timer_window: int = 100_000          # SLS timer window: large enough to hold every call of the run
    record_interval_ms: int = 100        # SLS CSV metrics interval: 10 rows per 1 s sample (see outputs.py)
    shim: Mapping[str, str] = field(default_factory=dict)  # yarnctl.shim.* when the shim runs
    capacity_site: str | None = None  # an operator's capacity-scheduler.xml (its queue tree); None: one queue


def scheduler_class(native: str | None, shim_on: str = "fifo") -> str:
    """The RM scheduler class: a stock one by short name (fifo, capacity, fair) or the shim on its host."""
    return NATIVE_SCHEDULERS[native] if native else SHIM_HOSTS[shim_on]


def capacity_xml(c: SlsConf) -> str:
    """capacity-scheduler.xml: the operator's, its AM share 100% unless it sets one (SLS AMs count), or one queue."""
    if c.capacity_site is None:
        return site_xml(_CAPACITY_XML)
    if AM_PERCENT in properties(c.capacity_site):
        return c.capacity_site
    return set_values(c.capacity_site, {AM_PERCENT: "1.0"})


def site_xml(props: Mapping[str, str]) -> str:
    """A Hadoop site file holding `props`."""
    body = "".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
                   for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


def yarn_site(c: SlsConf) -> dict[str, str]:
    """yarn-site properties of the RM inside SLS (its own free ports, so runs and clusters can coexist)."""
    host = "127.0.0.1"
    p = c.rm_ports
    props = {
        "yarn.resourcemanager.scheduler.class": c.scheduler_class,
        "yarn.resourcemanager.address": f"{host}:{p['rm']}",
        "yarn.resourcemanager.scheduler.address": f"{host}:{p['scheduler']}",
        "yarn.resourcemanager.resource-tracker.address": f"{host}:{p['tracker']}",
        "yarn.resourcemanager.admin.address": f"{host}:{p['admin']}",
        "yarn.resourcemanager.webapp.address": f"{host}:{p['webapp']}",
        "yarn.scheduler.minimum-allocation-mb": str(min(1024, c.container_memory_mb)),
        "yarn.scheduler.maximum-allocation-mb": str(c.nm_memory_mb),
        "yarn.scheduler.maximum-allocation-vcores": str(c.nm_vcores),
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": str(c.heartbeat_ms),
        "yarn.sls.metrics.web.address.port": str(c.web_port),
        "yarn.sls.metrics.timer.window.size": str(c.timer_window),
        "yarn.sls.metrics.record.interval.ms": str(c.record_interval_ms),
    }
    if c.scheduler_class in SHIM_HOSTS.values():
        props[c.scheduler_class] = FIFO_METRICS if c.scheduler_class == SHIM_SCHEDULER else CAPACITY_METRICS
        props.update(c.shim)
    return props


def sls_runner(c: SlsConf) -> dict[str, str]:
    """sls-runner.xml: simulated node and container sizes, heartbeats, the MapReduce AM simulator."""
    return {
        "yarn.sls.runner.pool.size": "20",
        "yarn.sls.nm.memory.mb": str(c.nm_memory_mb),
        "yarn.sls.nm.vcores": str(c.nm_vcores),
        "yarn.sls.nm.heartbeat.interval.ms": str(c.heartbeat_ms),
        "yarn.sls.am.heartbeat.interval.ms": str(c.heartbeat_ms),
        "yarn.sls.container.memory.mb": str(c.container_memory_mb),
        "yarn.sls.container.vcores": str(c.container_vcores),
        "yarn.sls.am.type.mapreduce": MR_AM_SIMULATOR,
    }


def write_conf_dir(d: Path, c: SlsConf) -> Path:
    """Write the classpath directory of one SLS run into `d` and return it."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "yarn-site.xml").write_text(site_xml(yarn_site(c)))
    # trace hosts (node1, ...) do not resolve; with use_ip the RM fails creating container tokens
    (d / "core-site.xml").write_text(site_xml({"hadoop.security.token.service.use_ip": "false"}))
    (d / "sls-runner.xml").write_text(site_xml(sls_runner(c)))
    (d / "capacity-scheduler.xml").write_text(capacity_xml(c))
    (d / "log4j.properties").write_text(_LOG4J)
    for name in WEB_TEMPLATES:  # SLS's web UI is not used: placeholders satisfy its initializer
        (d / name).write_text("<html><body>yarnctl sls: the SLS web UI is not shipped</body></html>\n")
    return d
