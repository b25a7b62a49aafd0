"""A local Hadoop 2.7.7 cluster (RM + N NMs as separate JVMs) from Maven Central jars, with or without the shim.

    from yarnctl.cluster import LocalCluster
    c = LocalCluster("/tmp/yc")
    info = c.up(nodes=2, native="fifo")          # or policy="fifo" for the shim
    cp = c.run(["pi", "2", "10"], timeout=600)
    app = c.wait_app(app_ids(cp.stderr)[-1])     # yarnctl.rm.AppInfo: app.state, app.final_status, ...
    c.rm().nodes()                               # a yarnctl.rm.ResourceManager for the cluster's RM
    c.down()
"""

from yarnctl.cluster.classpath import ensure_shim_jar, resolve_classpath
from yarnctl.cluster.local import ClusterInfo, DaemonInfo, DownReport, LocalCluster, app_ids

__all__ = ["ClusterInfo", "DaemonInfo", "DownReport", "LocalCluster", "app_ids", "ensure_shim_jar",
           "resolve_classpath"]
