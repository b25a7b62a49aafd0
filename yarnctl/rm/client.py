"""Typed clients for the Hadoop 2.7 ResourceManager and NodeManager REST APIs and /jmx, and a JobHistoryServer's info.

    rm = ResourceManager(["http://rm1:8088", "http://rm2:8088"])   # or ResourceManager.from_yarn_site(path)
    for app in rm.apps(states=["RUNNING"]):
        print(app.id, app.allocated, app.pending, app.memory_seconds)
    nm = NodeManager("http://" + rm.nodes()[0].http_address)
    print([u.pmem_mb for u in nm.container_usage()])

One method per endpoint; every response is parsed at once into the frozen types of models.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import time
from pathlib import Path

from yarnctl.errors import AppNotFound, RMHTTPError, RMParseError
from yarnctl.rm import parse
from yarnctl.rm.failover import Failover
from yarnctl.rm.models import (
    AppAttempt,
    AppInfo,
    ClusterInfo,
    ClusterMetrics,
    ContainerUsage,
    HistoryInfo,
    HistoryJob,
    JmxBean,
    NMContainer,
    NMInfo,
    NodeReport,
    SchedulerInfo,
    ShimMetrics,
    TaskReport,
)
from yarnctl.rm.transport import HttpSettings, HttpTransport, Reply, Transport
from yarnctl.rm.yarnsite import rm_urls_from_yarn_site

SHIM_BEAN = "Hadoop:service=ResourceManager,name=YarnctlShim"


class _Client:
    """What both clients share: a Failover over their base URLs and HTTP error mapping."""

    what = "daemon"

    def __init__(self, bases: Sequence[str], *, settings: HttpSettings | None = None,
                 transport: Transport | None = None, sleep: Callable[[float], None] | None = None,
                 recheck_s: float = 10.0) -> None:
        self.settings = settings or HttpSettings()
        self.transport: Transport = transport or HttpTransport(self.settings)
        self._failover = Failover(bases, self.transport, self.settings, what=self.what, recheck_s=recheck_s,
                                  sleep=sleep or time.sleep)

    @property
    def urls(self) -> tuple[str, ...]:
        """The configured base URLs."""
        return self._failover.bases

    @property
    def active_url(self) -> str | None:
        """The base URL that answered last."""
        return self._failover.active

    def _get(self, path: str, params: Mapping[str, str] | None = None) -> Reply:
        reply = self._failover.get(path, params)
        if reply.status != 200:
            raise RMHTTPError(reply.url, reply.status, _remote_message(reply.text),
                              _hint(reply.status))
        return reply

    def _jmx(self, query: str | None) -> tuple[JmxBean, ...]:
        reply = self._get("/jmx", {"qry": query} if query else {})
        return parse.jmx_beans(reply.text, reply.url)

    def close(self) -> None:
        """Close pooled connections (a no-op for injected transports without close())."""
        close = getattr(self.transport, "close", None)
        if callable(close):
            close()


class ResourceManager(_Client):
    """The /ws/v1/cluster REST API and /jmx of a ResourceManager, or of the active one of an HA set."""

    what = "ResourceManager"

    @classmethod
    def from_yarn_site(cls, path: Path | str, *, settings: HttpSettings | None = None,
                       transport: Transport | None = None, sleep: Callable[[float], None] | None = None,
                       recheck_s: float = 10.0) -> ResourceManager:
        """Read the RM web address(es) from a yarn-site.xml (HA rm-ids and HTTPS_ONLY understood)."""
        return cls(rm_urls_from_yarn_site(path), settings=settings, transport=transport, sleep=sleep,
                   recheck_s=recheck_s)

    def ha_states(self) -> dict[str, str]:
        """Each configured RM's haState (ACTIVE/STANDBY/...) or why it could not be asked."""
        return self._failover.ha_states()

    def cluster_info(self) -> ClusterInfo:
        """/ws/v1/cluster/info: cluster id, start time, service state, HA state and versions (of the active RM)."""
        reply = self._get("/ws/v1/cluster/info")
        return parse.cluster_info(parse.root(reply.text, reply.url, "clusterInfo"))

    def metrics(self) -> ClusterMetrics:
        """/ws/v1/cluster/metrics: app counts, reserved/available/allocated/total MB and vcores, node counts."""
        reply = self._get("/ws/v1/cluster/metrics")
        return parse.cluster_metrics(parse.root(reply.text, reply.url, "clusterMetrics"))

    def scheduler(self) -> SchedulerInfo:
        """/ws/v1/cluster/scheduler: the scheduler's type and its queue(s) with capacities and usage."""
        reply = self._get("/ws/v1/cluster/scheduler")
        return parse.scheduler(parse.root(reply.text, reply.url, "scheduler").obj("schedulerInfo"))

    def nodes(self, states: Iterable[str] | None = None) -> tuple[NodeReport, ...]:
        """/ws/v1/cluster/nodes[?states=]: nodes (all states unless given) with rack, state, addresses,
        health and used/available resources."""
        params = {"states": ",".join(states)} if states else {}
        reply = self._get("/ws/v1/cluster/nodes", params)
        return parse.each(parse.Fields(parse.load(reply.text, reply.url), reply.url).items("nodes", "node", required=True),
                          parse.node)

    def apps(self, *, state: str | None = None, states: Iterable[str] | None = None,
             final_status: str | None = None, user: str | None = None, queue: str | None = None,
             limit: int | None = None, started_begin_ms: int | None = None, started_end_ms: int | None = None,
             finished_begin_ms: int | None = None, finished_end_ms: int | None = None,
             application_types: Iterable[str] | None = None,
             application_tags: Iterable[str] | None = None) -> tuple[AppInfo, ...]:
        """/ws/v1/cluster/apps: applications, filtered by the RM (state or states, finalStatus, user, queue,
        limit, started/finished time windows in epoch ms, application types and tags), with pending asks."""
        params: dict[str, str] = {}
        for key, value in (("state", state), ("finalStatus", final_status), ("user", user), ("queue", queue),
                           ("limit", limit), ("startedTimeBegin", started_begin_ms),
                           ("startedTimeEnd", started_end_ms), ("finishedTimeBegin", finished_begin_ms),
                           ("finishedTimeEnd", finished_end_ms)):
            if value is not None:
                params[key] = str(value)
        for key, values in (("states", states), ("applicationTypes", application_types),
                            ("applicationTags", application_tags)):
            if values is not None:
                params[key] = ",".join(values)
        reply = self._get("/ws/v1/cluster/apps", params)
        return parse.each(parse.Fields(parse.load(reply.text, reply.url), reply.url).items("apps", "app", required=True), parse.app)

    def app(self, app_id: str) -> AppInfo:
        """/ws/v1/cluster/apps/{appid}: one application; AppNotFound when the RM does not know it."""
        reply = self._get_app(f"/ws/v1/cluster/apps/{app_id}", app_id)
        return parse.app(parse.root(reply.text, reply.url, "app"))

    def app_attempts(self, app_id: str) -> tuple[AppAttempt, ...]:
        """/ws/v1/cluster/apps/{appid}/appattempts: the app's attempts (id, start time, AM container, node)."""
        reply = self._get_app(f"/ws/v1/cluster/apps/{app_id}/appattempts", app_id)
        return parse.each(parse.Fields(parse.load(reply.text, reply.url), reply.url).items("appAttempts", "appAttempt", required=True),
                          parse.app_attempt)

    def jmx(self, query: str | None = "Hadoop:service=ResourceManager,name=*") -> tuple[JmxBean, ...]:
        """/jmx[?qry=]: the active RM's JMX beans matching an object-name pattern (None: all of them)."""
        return self._jmx(query)

    def am_tasks(self, app_id: str) -> tuple[TaskReport, ...]:
        """The tasks of a running MapReduce job, from its ApplicationMaster through the RM's web proxy."""
        job = app_id.replace("application_", "job_", 1)
        return _tasks(self._get(f"/proxy/{app_id}/ws/v1/mapreduce/jobs/{job}/tasks"))

    def shim_metrics(self) -> ShimMetrics | None:
        """The yarnctl shim's counters (the YarnctlShim bean); None when the RM does not run the shim."""
        beans = [b for b in self._jmx(SHIM_BEAN) if b.name == SHIM_BEAN]  # a /jmx that ignored ?qry= sends them all
        if not beans:
            return None
        return parse.shim_metrics(beans[0], (self.active_url or "") + "/jmx")

    def _get_app(self, path: str, app_id: str) -> Reply:
        try:
            return self._get(path)
        except RMHTTPError as e:
            if e.status == 404:
                raise AppNotFound(e.url, app_id, e.remote) from None
            raise


class HdfsDaemon(_Client):
    """The /jmx of one NameNode or DataNode (their web address, e.g. http://namenode:50070)."""

    what = "HDFS daemon"

    def __init__(self, url: str, *, settings: HttpSettings | None = None, transport: Transport | None = None) -> None:
        super().__init__([url], settings=settings, transport=transport)

    def jmx(self, query: str | None = None) -> tuple[JmxBean, ...]:
        """/jmx[?qry=]: the daemon's JMX beans matching an object-name pattern (None: all of them)."""
        return self._jmx(query)


class NodeManager(_Client):
    """The /ws/v1/node REST API and /jmx of one NodeManager (e.g. "http://" + NodeReport.http_address)."""

    what = "NodeManager"

    def __init__(self, url: str, *, settings: HttpSettings | None = None, transport: Transport | None = None,
                 sleep: Callable[[float], None] | None = None) -> None:
        super().__init__([url], settings=settings, transport=transport, sleep=sleep)

    def info(self) -> NMInfo:
        """/ws/v1/node/info: node id, health, resources for containers, pmem/vmem checks, versions."""
        reply = self._get("/ws/v1/node/info")
        return parse.nm_info(parse.root(reply.text, reply.url, "nodeInfo"))

    def containers(self) -> tuple[NMContainer, ...]:
        """/ws/v1/node/containers: containers on this node with state, exit code, user and size (no times)."""
        reply = self._get("/ws/v1/node/containers")
        doc = parse.Fields(parse.load(reply.text, reply.url), reply.url)
        return parse.each(doc.items("containers", "container", required=True), parse.nm_container)

    def jmx(self, query: str | None = "Hadoop:service=NodeManager,name=*") -> tuple[JmxBean, ...]:
        """/jmx[?qry=]: the NM's JMX beans matching an object-name pattern (None: all of them)."""
        return self._jmx(query)

    def container_usage(self) -> tuple[ContainerUsage, ...]:
        """Per-container usage from the NM's ContainerResource_* beans (needs the container monitor running:
        a pmem or vmem check on, and yarn.nodemanager.container-metrics.period-ms > 0 for running containers)."""
        url = (self.active_url or "") + "/jmx"
        beans = self._jmx("Hadoop:service=NodeManager,name=" + parse.CONTAINER_BEAN_PREFIX + "*")
        return tuple(parse.container_usage(b, url) for b in beans
                     if b.short_name.startswith(parse.CONTAINER_BEAN_PREFIX))


def _tasks(reply: Reply) -> tuple[TaskReport, ...]:
    return tuple(parse.task_report(t) for t in parse.Fields(parse.load(reply.text, reply.url), reply.url)
                 .items("tasks", "task", required=True))


class HistoryServer(_Client):
    """The /ws/v1/history REST API of a MapReduce JobHistoryServer (e.g. "http://host:19888")."""

    what = "JobHistoryServer"

    def __init__(self, url: str, *, settings: HttpSettings | None = None, transport: Transport | None = None,
                 sleep: Callable[[float], None] | None = None) -> None:
        super().__init__([url], settings=settings, transport=transport, sleep=sleep)

    def info(self) -> HistoryInfo:
        """/ws/v1/history/info: start time and Hadoop version of the server."""
        reply = self._get("/ws/v1/history/info")
        return parse.history_info(parse.root(reply.text, reply.url, "historyInfo"))

    def jobs(self) -> tuple[HistoryJob, ...]:
        """/ws/v1/history/mapreduce/jobs: the finished jobs it keeps (no average task times: see `job`)."""
        reply = self._get("/ws/v1/history/mapreduce/jobs")
        return tuple(parse.history_job(j) for j in parse.Fields(parse.load(reply.text, reply.url), reply.url)
                     .items("jobs", "job", required=True))

    def job(self, app_or_job_id: str) -> HistoryJob:
        """/ws/v1/history/mapreduce/jobs/{job}: one finished job with its average map, shuffle and reduce times."""
        job = app_or_job_id.replace("application_", "job_", 1)
        reply = self._get(f"/ws/v1/history/mapreduce/jobs/{job}")
        return parse.history_job(parse.root(reply.text, reply.url, "job"))

    def job_tasks(self, app_or_job_id: str) -> tuple[TaskReport, ...]:
        """/ws/v1/history/mapreduce/jobs/{job}/tasks of a finished MapReduce job (an application id is accepted)."""
        job = app_or_job_id.replace("application_", "job_", 1)
        return _tasks(self._get(f"/ws/v1/history/mapreduce/jobs/{job}/tasks"))

    def job_counters(self, app_or_job_id: str) -> dict[str, dict[str, int]]:
        """/ws/v1/history/mapreduce/jobs/{job}/counters: group name -> counter name -> the job's total."""
        job = app_or_job_id.replace("application_", "job_", 1)
        reply = self._get(f"/ws/v1/history/mapreduce/jobs/{job}/counters")
        return parse.job_counters(parse.root(reply.text, reply.url, "jobCounters"))


def _remote_message(text: str) -> str:
    """Hadoop's RemoteException message from an error body, else the body's start."""
    try:
        message = parse.load(text, "")["RemoteException"]["message"]
        if isinstance(message, str):
            return message
    except (RMParseError, KeyError, TypeError):
        pass
    return " ".join(text.split())[:120]


def _hint(status: int) -> str:
    if status in (401, 403):
        return "the daemon wants authentication: is it Kerberized (HttpSettings(auth='kerberos')) and do you have a ticket (klist)?"
    if status == 404:
        return "the daemon does not serve this path: is this a Hadoop 2.7 RM/NM web address?"
    return ""
