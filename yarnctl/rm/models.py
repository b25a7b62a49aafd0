"""Frozen types for what the Hadoop 2.7 RM and NM REST/JMX APIs report (field names: Hadoop's, in snake_case).

Times are epoch milliseconds (`*_ms`) as Hadoop sends them; memory is MB and cores are vcores,
combined into `Resources` wherever Hadoop reports a (memory, vcores) pair.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yarnctl.model import ANY, Resources


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """/ws/v1/cluster/info: the RM's identity, service state and HA state."""

    id: int
    started_on_ms: int
    state: str                 # NOTINITED, INITED, STARTED, STOPPED
    ha_state: str              # INITIALIZING, ACTIVE, STANDBY, STOPPED
    rm_state_store: str
    rm_version: str
    hadoop_version: str
    ha_zookeeper_state: str    # "ResourceManager HA is not enabled." without HA


@dataclass(frozen=True, slots=True)
class ClusterMetrics:
    """/ws/v1/cluster/metrics: app counts, cluster resources and node counts."""

    apps_submitted: int
    apps_completed: int
    apps_pending: int
    apps_running: int
    apps_failed: int
    apps_killed: int
    reserved: Resources
    available: Resources
    allocated: Resources
    total: Resources
    containers_allocated: int
    containers_reserved: int
    containers_pending: int
    total_nodes: int
    active_nodes: int
    lost_nodes: int
    unhealthy_nodes: int
    decommissioned_nodes: int
    rebooted_nodes: int


@dataclass(frozen=True, slots=True)
class FifoSchedulerInfo:
    """The FifoScheduler's single queue as /ws/v1/cluster/scheduler reports it (capacities are fractions)."""

    capacity: float
    used_capacity: float
    qstate: str
    min_queue_memory_mb: int
    max_queue_memory_mb: int
    num_nodes: int
    used_node_mb: int
    avail_node_mb: int
    total_node_mb: int
    num_containers: int


@dataclass(frozen=True, slots=True)
class QueueInfo:
    """One Capacity/Fair scheduler queue: the fields both report, where present (percentages 0-100)."""

    name: str
    used: Resources | None
    capacity: float | None
    used_capacity: float | None
    max_capacity: float | None
    num_applications: int | None
    children: tuple[QueueInfo, ...] = ()


@dataclass(frozen=True, slots=True)
class SchedulerInfo:
    """/ws/v1/cluster/scheduler: `type` is Hadoop's raw name (fifoScheduler, capacityScheduler, fairScheduler).

    `fifo` is set for the FifoScheduler (and the yarnctl shim, which is one); `root` holds the
    queue tree of the Capacity and Fair schedulers, with the fields that could be parsed.
    """

    type: str
    fifo: FifoSchedulerInfo | None = None
    root: QueueInfo | None = None


@dataclass(frozen=True, slots=True)
class NodeReport:
    """One node of /ws/v1/cluster/nodes as the RM sees it."""

    id: str
    rack: str
    state: str                 # NEW, RUNNING, UNHEALTHY, DECOMMISSIONED, LOST, REBOOTED
    host: str
    http_address: str
    last_health_update_ms: int
    version: str
    health_report: str
    num_containers: int
    used: Resources
    available: Resources
    node_labels: tuple[str, ...] = ()

    @property
    def capacity(self) -> Resources:
        """Used plus available: what the node offers the scheduler."""
        return self.used + self.available


@dataclass(frozen=True, slots=True)
class ResourceRequestInfo:
    """One pending ask of an app (AppInfo.resourceRequests): at a host, a rack or ANY ('*')."""

    priority: int
    capability: Resources
    num_containers: int
    resource_name: str
    relax_locality: bool
    node_label_expression: str = ""


@dataclass(frozen=True, slots=True)
class AppInfo:
    """One application of /ws/v1/cluster/apps or /apps/{id}, including its pending asks."""

    id: str
    user: str
    name: str
    queue: str
    state: str                 # NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED
    final_status: str          # UNDEFINED, SUCCEEDED, FAILED, KILLED
    progress: float            # percent, 0-100
    tracking_ui: str
    tracking_url: str
    diagnostics: str
    cluster_id: int
    application_type: str
    application_tags: tuple[str, ...]
    started_time_ms: int       # ≈ submit time (RMAppImpl)
    finished_time_ms: int      # 0 while running
    elapsed_time_ms: int
    am_container_logs: str
    am_host_http_address: str
    allocated: Resources
    running_containers: int
    memory_seconds: int        # MB-seconds allocated so far
    vcore_seconds: int
    preempted: Resources
    num_non_am_container_preempted: int
    num_am_container_preempted: int
    resource_requests: tuple[ResourceRequestInfo, ...] = ()

    @property
    def pending(self) -> Resources:
        """Resources asked for and not yet allocated: the sum over the ANY rows (each ask has one)."""
        total = Resources()
        for r in self.resource_requests:
            if r.resource_name == ANY:
                total = total + r.capability * r.num_containers
        return total


@dataclass(frozen=True, slots=True)
class AppAttempt:
    """One attempt of /ws/v1/cluster/apps/{id}/appattempts (Hadoop 2.7 gives no finish time)."""

    id: int
    start_time_ms: int
    container_id: str
    node_http_address: str
    node_id: str
    logs_link: str
    blacklisted_nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HistoryJob:
    """A finished MapReduce job at the JobHistoryServer; the average task times come with its detail only."""

    id: str
    name: str
    user: str
    queue: str
    state: str                 # SUCCEEDED, FAILED, KILLED
    finish_time_ms: int
    maps: int
    reduces: int
    avg_map_ms: int = 0        # /jobs/{id} only: successful map attempts' average run time
    avg_reduce_ms: int = 0     # ... a reduce's, after its shuffle and merge
    avg_shuffle_ms: int = 0
    avg_merge_ms: int = 0


@dataclass(frozen=True, slots=True)
class HistoryInfo:
    """/ws/v1/history/info: the MapReduce JobHistoryServer's start time and Hadoop build."""

    started_on_ms: int
    hadoop_version: str
    hadoop_build_version: str
    hadoop_version_built_on: str


@dataclass(frozen=True, slots=True)
class TaskReport:
    """One task of a MapReduce job's /tasks (JobHistoryServer, or the running AM's): type, state, times (ms)."""

    id: str
    type: str                  # MAP | REDUCE
    state: str                 # SUCCEEDED, FAILED, KILLED, RUNNING, SCHEDULED, ...
    start_time_ms: int         # 0 or -1 when it never started
    finish_time_ms: int
    elapsed_ms: int = 0        # how long it ran (so far, while it runs)
    progress: float = 0.0      # percent done, 0-100


@dataclass(frozen=True, slots=True)
class NMInfo:
    """/ws/v1/node/info: the NodeManager's resources for containers, checks and health."""

    id: str
    node_host_name: str
    healthy: bool
    health_report: str
    last_node_update_ms: int
    total_pmem_mb: int
    total_vmem_mb: int
    total_vcores: int
    pmem_check_enabled: bool
    vmem_check_enabled: bool
    nm_version: str
    hadoop_version: str


@dataclass(frozen=True, slots=True)
class NMContainer:
    """One container of /ws/v1/node/containers (2.7 gives no timestamps)."""

    id: str
    state: str                 # NEW, LOCALIZING, RUNNING, EXITED_WITH_SUCCESS, KILLING, DONE, ...
    exit_code: int             # -1000 (INVALID) until it exits
    diagnostics: str
    user: str
    needed: Resources          # totalMemoryNeededMB, totalVCoresNeeded
    logs_link: str
    node_id: str


@dataclass(frozen=True, slots=True)
class JmxBean:
    """One /jmx bean: its object name and its attributes as Hadoop's JMXJsonServlet sent them."""

    name: str
    attributes: Mapping[str, Any]

    @property
    def short_name(self) -> str:
        """The `name=` key of the object name, e.g. 'ClusterMetrics' or 'ContainerResource_container_...'."""
        for part in self.name.split(":", 1)[-1].split(","):
            key, _, value = part.partition("=")
            if key == "name":
                return value
        return self.name


@dataclass(frozen=True, slots=True)
class UsageStat:
    """A Hadoop MutableStat (extended): sample count, mean, stdev, min/max in the last interval and overall."""

    samples: int
    avg: float
    stdev: float
    interval_min: float
    interval_max: float
    min: float
    max: float


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    """An NM `ContainerResource_<container id>` bean (ContainerMetrics, 2.7.7).

    The stats are None until the NM publishes the record: with the default
    yarn.nodemanager.container-metrics.period-ms (-1) that happens only once the container has
    finished; set a period to see running containers. Limits are 0 until the first sample.
    """

    container_id: str
    pid: int | None
    pmem_mb: UsageStat | None          # pMemUsageMBs
    cpu_percent: UsageStat | None      # pCpuUsagePercent: 100 = one core busy
    milli_vcores: UsageStat | None     # milliVcoreUsage: 1000 = one vcore's worth
    pmem_limit_mb: int
    vmem_limit_mb: int
    vcore_limit: int


@dataclass(frozen=True, slots=True)
class ShimMetrics:
    """The yarnctl shim's `Hadoop:service=ResourceManager,name=YarnctlShim` bean."""

    heartbeats: int
    delegated: int
    fallback: int
    fallback_timeout: int
    fallback_error: int
    fallback_unreachable: int
    fallback_refused: int
    fallback_breaker_open: int
    fallback_disabled: int
    containers_by_policy: int
    containers_native: int
    rejected: int
    killed: int
    resized: int
    full_syncs: int
    breaker_opens: int
    breaker_open: bool
    last_latency_micros: int
    deadline_millis: int
    # refusals by code (the wire schema's $defs.rejection), e.g. {"no-fit": 3}; empty from an older shim
    rejected_by: dict[str, int] = field(default_factory=dict)
