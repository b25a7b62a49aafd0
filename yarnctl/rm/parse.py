"""JSON bodies -> the frozen types in models.py, failing with RMParseError naming the URL and the field."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, TypeVar

from yarnctl.errors import RMParseError
from yarnctl.model import Resources
from yarnctl.rm.models import (
    AppAttempt,
    AppInfo,
    ClusterInfo,
    ClusterMetrics,
    ContainerUsage,
    FifoSchedulerInfo,
    HistoryInfo,
    HistoryJob,
    JmxBean,
    NMContainer,
    NMInfo,
    NodeReport,
    QueueInfo,
    ResourceRequestInfo,
    SchedulerInfo,
    ShimMetrics,
    TaskReport,
    UsageStat,
)

T = TypeVar("T")
JAVA_LONG = 2**63  # no number a Java RM writes is larger: past it is garbage, and a float of it stays finite


class Fields:
    """Typed access to one JSON object; every error names the URL and the dotted field path."""

    __slots__ = ("doc", "url", "path")

    def __init__(self, doc: Any, url: str, path: str = "") -> None:
        if not isinstance(doc, dict):
            raise RMParseError(url, path, f"expected a JSON object, got {_kind(doc)}")
        self.doc: dict[str, Any] = doc
        self.url, self.path = url, path

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _raw(self, key: str, default: Any) -> Any:
        if key in self.doc:
            return self.doc[key]
        if default is _REQUIRED:
            raise RMParseError(self.url, self._at(key), "missing")
        return default

    def string(self, key: str, default: Any = None) -> str:
        v = self._raw(key, _REQUIRED if default is None else default)
        if v is None and default is not None:
            return str(default)
        if not isinstance(v, str):
            raise RMParseError(self.url, self._at(key), f"expected a string, got {_kind(v)}")
        return v

    def integer(self, key: str, default: int | None = None) -> int:
        v = self._raw(key, _REQUIRED if default is None else default)
        # JSON numbers that are whole floats (some Hadoop gauges) are accepted; bools are not numbers here
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if not isinstance(v, int) or isinstance(v, bool):
            raise RMParseError(self.url, self._at(key), f"expected an integer, got {_kind(v)}")
        if not -JAVA_LONG <= v <= JAVA_LONG:
            raise RMParseError(self.url, self._at(key), f"expected an integer a Java long holds, got {_kind(v)}")
        return v

    def number(self, key: str, default: float | None = None) -> float:
        v = self._raw(key, _REQUIRED if default is None else default)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise RMParseError(self.url, self._at(key), f"expected a number, got {_kind(v)}")
        try:
            x = float(v)
        except OverflowError:
            raise RMParseError(self.url, self._at(key), f"expected a number a double holds, got {_kind(v)}") from None
        # JMX writes a double's NaN and Infinity as bare literals, which json.loads takes; no field we read
        # means them (a stat's unset minimum is Float.MAX_VALUE, finite)
        if not math.isfinite(x):
            raise RMParseError(self.url, self._at(key), f"expected a finite number, got {_kind(v)}")
        return x

    def opt_number(self, key: str) -> float | None:
        return None if self.doc.get(key) is None else self.number(key)

    def opt_integer(self, key: str) -> int | None:
        return None if self.doc.get(key) is None else self.integer(key)

    def boolean(self, key: str, default: bool | None = None) -> bool:
        v = self._raw(key, _REQUIRED if default is None else default)
        if not isinstance(v, bool):
            raise RMParseError(self.url, self._at(key), f"expected true/false, got {_kind(v)}")
        return v

    def obj(self, key: str) -> Fields:
        return Fields(self._raw(key, _REQUIRED), self.url, self._at(key))

    def items(self, key: str, item: str, required: bool = False) -> list[Fields]:
        """The list at doc[key][item]: Hadoop's wrapped lists ({"apps": {"app": [...]}}).

        Jersey sends `null` (or `{}`) for an empty list and, in some configurations, a bare object
        for a one-element list; all three are accepted. A `required` key must be there, if null: a
        document's own list (`{"error": ...}` is not an empty cluster); a nested one may be left out.
        """
        if required and key not in self.doc:
            raise RMParseError(self.url, self._at(key), "missing")
        outer = self.doc.get(key)
        if outer is None:
            return []
        wrapped = Fields(outer, self.url, self._at(key))
        return wrapped.list(item)

    def list(self, key: str) -> list[Fields]:
        v = self.doc.get(key)
        if v is None:
            return []
        if isinstance(v, dict):
            v = [v]
        if not isinstance(v, list):
            raise RMParseError(self.url, self._at(key), f"expected a list, got {_kind(v)}")
        return [Fields(x, self.url, f"{self._at(key)}[{i}]") for i, x in enumerate(v)]

    def resources(self, mb: str, vcores: str) -> Resources:
        return Resources(self.integer(mb), self.integer(vcores))


class _Required:
    def __repr__(self) -> str:
        return "required"


_REQUIRED: Any = _Required()


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    text = json.dumps(v) if isinstance(v, (str, int, float, bool)) else type(v).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def load(text: str, url: str) -> Any:
    """Parse a body as JSON; RMParseError saying what came instead (an HTML page, empty body...)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise RMParseError(url, "", "response is JSON nested too deeply to read") from None
    except ValueError as e:
        if "integer string conversion" in str(e):  # valid JSON past Python's 4,300-digit limit
            raise RMParseError(url, "", "response holds a number of more than 4,300 digits") from None
        head = " ".join(text.strip().split())[:80]
        raise RMParseError(url, "", f"response is not JSON (starts {head!r})" if head else "empty response") from None


def root(text: str, url: str, key: str) -> Fields:
    """The object under the body's single top-level key (e.g. 'clusterInfo')."""
    return Fields(load(text, url), url).obj(key)


def tags(text: str) -> tuple[str, ...]:
    """A comma-separated Hadoop list ('' -> ())."""
    return tuple(t.strip() for t in text.split(",") if t.strip())


def cluster_info(f: Fields) -> ClusterInfo:
    return ClusterInfo(
        id=f.integer("id"), started_on_ms=f.integer("startedOn"), state=f.string("state"), ha_state=f.string("haState"),
        rm_state_store=f.string("rmStateStoreName", ""), rm_version=f.string("resourceManagerVersion"),
        hadoop_version=f.string("hadoopVersion"), ha_zookeeper_state=f.string("haZooKeeperConnectionState", ""))


def cluster_metrics(f: Fields) -> ClusterMetrics:
    return ClusterMetrics(
        apps_submitted=f.integer("appsSubmitted"), apps_completed=f.integer("appsCompleted"),
        apps_pending=f.integer("appsPending"), apps_running=f.integer("appsRunning"), apps_failed=f.integer("appsFailed"),
        apps_killed=f.integer("appsKilled"),
        reserved=f.resources("reservedMB", "reservedVirtualCores"),
        available=f.resources("availableMB", "availableVirtualCores"),
        allocated=f.resources("allocatedMB", "allocatedVirtualCores"),
        total=f.resources("totalMB", "totalVirtualCores"),
        containers_allocated=f.integer("containersAllocated"), containers_reserved=f.integer("containersReserved"),
        containers_pending=f.integer("containersPending"), total_nodes=f.integer("totalNodes"),
        active_nodes=f.integer("activeNodes"), lost_nodes=f.integer("lostNodes"), unhealthy_nodes=f.integer("unhealthyNodes"),
        decommissioned_nodes=f.integer("decommissionedNodes"), rebooted_nodes=f.integer("rebootedNodes"))


def scheduler(f: Fields) -> SchedulerInfo:
    kind = f.string("type")
    if kind == "fifoScheduler":
        return SchedulerInfo(kind, fifo=FifoSchedulerInfo(
            capacity=f.number("capacity"), used_capacity=f.number("usedCapacity"), qstate=f.string("qstate"),
            min_queue_memory_mb=f.integer("minQueueMemoryCapacity"), max_queue_memory_mb=f.integer("maxQueueMemoryCapacity"),
            num_nodes=f.integer("numNodes"), used_node_mb=f.integer("usedNodeCapacity"),
            avail_node_mb=f.integer("availNodeCapacity"), total_node_mb=f.integer("totalNodeCapacity"),
            num_containers=f.integer("numContainers")))
    if kind == "fairScheduler":
        return SchedulerInfo(kind, root=_fair_queue(f.obj("rootQueue")))
    # capacityScheduler (and anything else shaped like it): the root queue is schedulerInfo itself
    return SchedulerInfo(kind, root=_capacity_queue(f))


def _res(f: Fields, key: str, mb: str = "memory", vcores: str = "vCores") -> Resources | None:
    if not isinstance(f.doc.get(key), dict):
        return None
    r = f.obj(key)
    return Resources(r.integer(mb, 0), r.integer(vcores, 0))


def _capacity_queue(f: Fields) -> QueueInfo:
    children = tuple(_capacity_queue(q) for q in f.items("queues", "queue"))
    return QueueInfo(name=f.string("queueName", "root"), used=_res(f, "resourcesUsed"),
                     capacity=f.opt_number("capacity"), used_capacity=f.opt_number("usedCapacity"),
                     max_capacity=f.opt_number("maxCapacity"), num_applications=f.opt_integer("numApplications"),
                     children=children)


def _fair_queue(f: Fields) -> QueueInfo:
    kids = f.doc.get("childQueues")
    # 2.7 sends childQueues as a list, later releases as {"queue": [...]}
    children = f.items("childQueues", "queue") if isinstance(kids, dict) else f.list("childQueues")
    apps = f.opt_integer("numActiveApps")
    pending = f.opt_integer("numPendingApps")
    return QueueInfo(name=f.string("queueName"), used=_res(f, "usedResources"), capacity=None,
                     used_capacity=f.opt_number("usedMemoryFraction"), max_capacity=None,
                     num_applications=None if apps is None else apps + (pending or 0),
                     children=tuple(_fair_queue(q) for q in children))


def node(f: Fields) -> NodeReport:
    labels = f.doc.get("nodeLabels")
    return NodeReport(
        id=f.string("id"), rack=f.string("rack"), state=f.string("state"), host=f.string("nodeHostName"),
        http_address=f.string("nodeHTTPAddress"), last_health_update_ms=f.integer("lastHealthUpdate"),
        version=f.string("version", ""), health_report=f.string("healthReport", ""), num_containers=f.integer("numContainers"),
        used=f.resources("usedMemoryMB", "usedVirtualCores"),
        available=f.resources("availMemoryMB", "availableVirtualCores"),
        node_labels=tuple(str(x) for x in labels) if isinstance(labels, list) else ())


def resource_request(f: Fields) -> ResourceRequestInfo:
    cap = f.obj("capability")
    return ResourceRequestInfo(
        priority=f.obj("priority").integer("priority"), capability=Resources(cap.integer("memory"), cap.integer("virtualCores")),
        num_containers=f.integer("numContainers"), resource_name=f.string("resourceName"),
        relax_locality=f.boolean("relaxLocality"), node_label_expression=f.string("nodeLabelExpression", ""))


def app(f: Fields) -> AppInfo:
    return AppInfo(
        id=f.string("id"), user=f.string("user"), name=f.string("name"), queue=f.string("queue"), state=f.string("state"),
        final_status=f.string("finalStatus"), progress=f.number("progress"), tracking_ui=f.string("trackingUI", ""),
        tracking_url=f.string("trackingUrl", ""), diagnostics=f.string("diagnostics", ""), cluster_id=f.integer("clusterId"),
        application_type=f.string("applicationType"), application_tags=tags(f.string("applicationTags", "")),
        started_time_ms=f.integer("startedTime"), finished_time_ms=f.integer("finishedTime"),
        elapsed_time_ms=f.integer("elapsedTime"), am_container_logs=f.string("amContainerLogs", ""),
        am_host_http_address=f.string("amHostHttpAddress", ""),
        allocated=f.resources("allocatedMB", "allocatedVCores"), running_containers=f.integer("runningContainers"),
        memory_seconds=f.integer("memorySeconds"), vcore_seconds=f.integer("vcoreSeconds"),
        preempted=Resources(f.integer("preemptedResourceMB", 0), f.integer("preemptedResourceVCores", 0)),
        num_non_am_container_preempted=f.integer("numNonAMContainerPreempted", 0),
        num_am_container_preempted=f.integer("numAMContainerPreempted", 0),
        resource_requests=tuple(resource_request(r) for r in f.list("resourceRequests")))


def app_attempt(f: Fields) -> AppAttempt:
    return AppAttempt(
        id=f.integer("id"), start_time_ms=f.integer("startTime"), container_id=f.string("containerId"),
        node_http_address=f.string("nodeHttpAddress"), node_id=f.string("nodeId"), logs_link=f.string("logsLink", ""),
        blacklisted_nodes=tags(f.string("blacklistedNodes", "")))


def nm_info(f: Fields) -> NMInfo:
    return NMInfo(
        id=f.string("id"), node_host_name=f.string("nodeHostName"), healthy=f.boolean("nodeHealthy"),
        health_report=f.string("healthReport", ""), last_node_update_ms=f.integer("lastNodeUpdateTime"),
        total_pmem_mb=f.integer("totalPmemAllocatedContainersMB"), total_vmem_mb=f.integer("totalVmemAllocatedContainersMB"),
        total_vcores=f.integer("totalVCoresAllocatedContainers"), pmem_check_enabled=f.boolean("pmemCheckEnabled"),
        vmem_check_enabled=f.boolean("vmemCheckEnabled"), nm_version=f.string("nodeManagerVersion"),
        hadoop_version=f.string("hadoopVersion"))


def history_job(f: Fields) -> HistoryJob:
    return HistoryJob(id=f.string("id"), name=f.string("name", ""), user=f.string("user", ""),
                      queue=f.string("queue", ""), state=f.string("state"), finish_time_ms=f.integer("finishTime", 0),
                      maps=f.integer("mapsTotal", 0), reduces=f.integer("reducesTotal", 0),
                      avg_map_ms=f.integer("avgMapTime", 0), avg_reduce_ms=f.integer("avgReduceTime", 0),
                      avg_shuffle_ms=f.integer("avgShuffleTime", 0), avg_merge_ms=f.integer("avgMergeTime", 0))


def job_counters(f: Fields) -> dict[str, dict[str, int]]:
    """A job's counters as the JobHistoryServer lists them: group name -> counter name -> total value."""
    return {g.string("counterGroupName"): {c.string("name"): c.integer("totalCounterValue") for c in g.list("counter")}
            for g in f.list("counterGroup")}


def history_info(f: Fields) -> HistoryInfo:
    return HistoryInfo(
        started_on_ms=f.integer("startedOn"), hadoop_version=f.string("hadoopVersion"),
        hadoop_build_version=f.string("hadoopBuildVersion", ""),
        hadoop_version_built_on=f.string("hadoopVersionBuiltOn", ""))


def task_report(f: Fields) -> TaskReport:
    return TaskReport(id=f.string("id"), type=f.string("type"), state=f.string("state"),
                      start_time_ms=f.integer("startTime"), finish_time_ms=f.integer("finishTime"),
                      elapsed_ms=f.integer("elapsedTime", 0), progress=f.number("progress", 0.0))


def nm_container(f: Fields) -> NMContainer:
    return NMContainer(
        id=f.string("id"), state=f.string("state"), exit_code=f.integer("exitCode"), diagnostics=f.string("diagnostics", ""),
        user=f.string("user"), needed=f.resources("totalMemoryNeededMB", "totalVCoresNeeded"),
        logs_link=f.string("containerLogsLink", ""), node_id=f.string("nodeId"))


def jmx_beans(text: str, url: str) -> tuple[JmxBean, ...]:
    doc = Fields(load(text, url), url)
    if "beans" not in doc.doc:
        raise RMParseError(url, "beans", "missing (is this a /jmx answer?)")
    beans = doc.list("beans")
    return tuple(JmxBean(b.string("name"), MappingProxyType({k: v for k, v in b.doc.items() if k != "name"}))
                 for b in beans)


CONTAINER_BEAN_PREFIX = "ContainerResource_"


def _stat(f: Fields, name: str, unit: str) -> UsageStat | None:
    # MutableStat(name, ..., sampleName="Usage", valueName=unit, extended=true) publishes
    # <Name>NumUsage, <Name>Avg<unit>, <Name>Stdev<unit>, <Name>IMin<unit>, <Name>IMax<unit>, <Name>Min<unit>, <Name>Max<unit>
    if f"{name}NumUsage" not in f.doc:
        return None
    return UsageStat(samples=f.integer(f"{name}NumUsage"), avg=f.number(f"{name}Avg{unit}"),
                     stdev=f.number(f"{name}Stdev{unit}"), interval_min=f.number(f"{name}IMin{unit}"),
                     interval_max=f.number(f"{name}IMax{unit}"), min=f.number(f"{name}Min{unit}"),
                     max=f.number(f"{name}Max{unit}"))


def container_usage(bean: JmxBean, url: str) -> ContainerUsage:
    """A ContainerResource_<id> bean -> ContainerUsage (attribute names from ContainerMetrics, 2.7.7)."""
    f = Fields(dict(bean.attributes), url, bean.short_name)
    cid = bean.short_name[len(CONTAINER_BEAN_PREFIX):]
    pid = f.doc.get("tag.ContainerPid")
    return ContainerUsage(
        container_id=f.string("tag.ContainerResource", cid),
        pid=int(pid) if isinstance(pid, str) and pid.isdigit() else None,
        pmem_mb=_stat(f, "PMemUsageMBs", "MBs"), cpu_percent=_stat(f, "PCpuUsagePercent", "Percents"),
        milli_vcores=_stat(f, "MilliVcoreUsage", "MilliVcores"),
        pmem_limit_mb=f.integer("pMemLimitMBs", 0), vmem_limit_mb=f.integer("vMemLimitMBs", 0),
        vcore_limit=f.integer("vCoreLimit", 0))


def shim_metrics(bean: JmxBean, url: str) -> ShimMetrics:
    f = Fields(dict(bean.attributes), url, bean.short_name)
    return ShimMetrics(
        heartbeats=f.integer("Heartbeats"), delegated=f.integer("Delegated"), fallback=f.integer("Fallback"),
        fallback_timeout=f.integer("FallbackTimeout"), fallback_error=f.integer("FallbackError"),
        fallback_unreachable=f.integer("FallbackUnreachable"), fallback_refused=f.integer("FallbackRefused"),
        fallback_breaker_open=f.integer("FallbackBreakerOpen"), fallback_disabled=f.integer("FallbackDisabled"),
        containers_by_policy=f.integer("ContainersByPolicy"), containers_native=f.integer("ContainersNative"),
        rejected=f.integer("Rejected"), killed=f.integer("Killed"), resized=f.integer("Resized"), full_syncs=f.integer("FullSyncs"),
        breaker_opens=f.integer("BreakerOpens"), breaker_open=f.boolean("BreakerOpen"),
        last_latency_micros=f.integer("LastLatencyMicros"), deadline_millis=f.integer("DeadlineMillis"),
        rejected_by=_by_code(str(bean.attributes.get("RejectedByReason") or "")))


def _by_code(text: str) -> dict[str, int]:
    """`locality=1,no-fit=3` as {"locality": 1, "no-fit": 3}; anything unreadable is left out."""
    out: dict[str, int] = {}
    for part in text.split(","):
        code, _, n = part.partition("=")
        if code and n.isdigit():
            out[code] = int(n)
    return out


def each(items: list[Fields], fn: Callable[[Fields], T]) -> tuple[T, ...]:
    return tuple(fn(x) for x in items)
