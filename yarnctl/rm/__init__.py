"""Typed clients for the Hadoop 2.7 ResourceManager/NodeManager REST APIs and /jmx (the only user of `requests`).

    from yarnctl.rm import ResourceManager, NodeManager, HistoryServer, HttpSettings
    rm = ResourceManager(["http://rm1:8088", "http://rm2:8088"], settings=HttpSettings(read_timeout_s=5))
    rm.apps(states=["RUNNING"])        # -> tuple[AppInfo, ...], pending asks parsed
    NodeManager("http://nm1:8042").container_usage()
    HistoryServer("http://jhs:19888").info()

Errors are the RMError family of yarnctl.errors: RMUnreachable, RMHTTPError, AppNotFound,
RMParseError, RMConfigError.
"""

from yarnctl.errors import AppNotFound, RMConfigError, RMError, RMHTTPError, RMParseError, RMUnreachable
from yarnctl.rm.client import SHIM_BEAN, HdfsDaemon, HistoryServer, NodeManager, ResourceManager
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
from yarnctl.rm.transport import HttpSettings, HttpTransport, Reply, Transport, TransportFailure
from yarnctl.rm.yarnsite import rm_urls_from_yarn_site

__all__ = [
    "AppAttempt", "AppInfo", "AppNotFound", "ClusterInfo", "ClusterMetrics", "ContainerUsage",
    "FifoSchedulerInfo", "HdfsDaemon", "HistoryInfo", "HistoryJob", "HistoryServer", "HttpSettings", "HttpTransport", "JmxBean", "NMContainer",
    "NMInfo", "NodeManager", "NodeReport", "QueueInfo", "RMConfigError", "RMError", "RMHTTPError", "RMParseError",
    "RMUnreachable", "Reply", "ResourceManager", "ResourceRequestInfo", "SHIM_BEAN", "SchedulerInfo", "ShimMetrics",
    "TaskReport",
    "Transport", "TransportFailure", "UsageStat", "rm_urls_from_yarn_site",
]
