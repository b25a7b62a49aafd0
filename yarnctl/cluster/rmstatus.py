"""The ResourceManager's part of `yarnctl cluster status --json`, under Hadoop's own REST and JMX key names."""

from __future__ import annotations

import dataclasses
from typing import Any

from yarnctl.errors import RMError
from yarnctl.rm import ClusterMetrics, NodeReport, ResourceManager, ShimMetrics

UNFINISHED_STATES = ("NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING")


def rm_status(rm: ResourceManager) -> dict[str, Any]:
    """The RM's part of `status` (rm, apps, resources, nodes, running_apps), or rm_error; Hadoop's key names."""
    try:
        cluster, metrics = rm.cluster_info(), rm.metrics()
        nodes, apps = rm.nodes(), rm.apps(states=UNFINISHED_STATES)
    except RMError as e:
        return {"rm_error": str(e)}
    rm_doc = {"id": cluster.id, "startedOn": cluster.started_on_ms, "state": cluster.state,
              "haState": cluster.ha_state, "rmStateStoreName": cluster.rm_state_store,
              "resourceManagerVersion": cluster.rm_version, "hadoopVersion": cluster.hadoop_version,
              "haZooKeeperConnectionState": cluster.ha_zookeeper_state}
    running = [{"id": a.id, "name": a.name, "state": a.state, "progress": a.progress} for a in apps]
    return {"rm": rm_doc, "nodes": [_node_status(n) for n in nodes], "apps": _app_counts(metrics),
            "resources": _resources(metrics), "running_apps": running}


def _app_counts(m: ClusterMetrics) -> dict[str, int]:
    return {"appsSubmitted": m.apps_submitted, "appsPending": m.apps_pending, "appsRunning": m.apps_running,
            "appsCompleted": m.apps_completed, "appsFailed": m.apps_failed, "appsKilled": m.apps_killed}


def _resources(m: ClusterMetrics) -> dict[str, int]:
    return {"allocatedMB": m.allocated.memory_mb, "availableMB": m.available.memory_mb,
            "totalMB": m.total.memory_mb, "allocatedVirtualCores": m.allocated.vcores,
            "availableVirtualCores": m.available.vcores, "totalVirtualCores": m.total.vcores,
            "containersAllocated": m.containers_allocated}


def _node_status(n: NodeReport) -> dict[str, Any]:
    return {"id": n.id, "state": n.state, "http": n.http_address, "containers": n.num_containers,
            "used_mb": n.used.memory_mb, "avail_mb": n.available.memory_mb, "used_vcores": n.used.vcores,
            "avail_vcores": n.available.vcores}


def shim_status(rm: ResourceManager) -> dict[str, Any] | None:
    """The shim's counters under the bean's attribute names (Delegated, FallbackTimeout...), or the error."""
    try:
        m = rm.shim_metrics()
    except RMError as e:
        return {"error": str(e)}
    return None if m is None else _bean_names(m)


def _bean_names(m: ShimMetrics) -> dict[str, Any]:
    # every ShimMetrics field is its JMX attribute in snake_case (full_syncs <- FullSyncs), but for the
    # refusals by code, which the bean gives as one string (RejectedByReason: "locality=1,no-fit=3")
    doc = {"".join(w.capitalize() for w in k.split("_")): v for k, v in dataclasses.asdict(m).items()
           if k != "rejected_by"}
    doc["RejectedByReason"] = ",".join(f"{code}={n}" for code, n in sorted(m.rejected_by.items()))
    return doc
