"""Render hadoop-conf/ templates into a local cluster's conf dirs.

Substitution is deliberately tiny: `@NAME@` (capitals, digits, underscores) is replaced by
`values["NAME"]`; a placeholder without a value is an error, so a template and its caller cannot
drift apart silently. Fragments (yarn-site.nodemanager.xml, yarn-site.shim.xml) are merged into
yarn-site.xml property by property: a fragment's property replaces the site's property of the
same name, comments kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from yarnctl.errors import ClusterError

PLACEHOLDER = re.compile(r"@([A-Z][A-Z0-9_]*)@")
# one <property> block with the comments and blank space right before it
_PROPERTY = re.compile(r"(?:[ \t]*<!--(?:(?!-->).)*-->\s*)*[ \t]*<property>.*?</property>[ \t]*\n?", re.S)
_NAME = re.compile(r"<name>\s*(.*?)\s*</name>", re.S)
_VALUE = re.compile(r"(<value>)(.*?)(</value>)", re.S)

NATIVE_SCHEDULERS = {
    "fifo": "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler",
    "capacity": "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler",
    "fair": "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler",
}
SHIM_SCHEDULER = "io.yarnctl.shim.YarnctlScheduler"
# the scheduler the shim extends: FifoScheduler (the default), or CapacityScheduler with the operator's queue
# tree, ACLs and queue metrics from capacity-scheduler.xml (docs/design/queues.md)
SHIM_HOSTS = {"fifo": SHIM_SCHEDULER, "capacity": "io.yarnctl.shim.YarnctlCapacityScheduler"}
# the NodeManager main class in the shim jar: stock but for the heartbeat thread an RM restart may lose (docs/cluster.md)
NM_MAIN = "io.yarnctl.nm.ResyncSafeNodeManager"

# every container JVM YARN lets us configure (MR AM and tasks) gets these; see docker/bin/yarnctl-daemon
CONTAINER_JAVA_OPTS = ("-XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.lang=ALL-UNNAMED "
                       "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true")
# Work-preserving RM restart (`up(recovery=True)`): the RM keeps its state in a file-system store under
# the cluster dir and, restarted, takes back the running AMs and containers that NodeManagers report.
# Clients, AMs and NMs retry the RM every second instead of 30 s (yarn-default), so a restart costs seconds.
def recovery_site(cluster_dir: Path) -> dict[str, str]:
    """The yarn-site properties of a work-preserving, file-system-backed RM restart."""
    return {
        "yarn.resourcemanager.recovery.enabled": "true",
        "yarn.resourcemanager.work-preserving-recovery.enabled": "true",
        "yarn.resourcemanager.store.class":
            "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore",
        "yarn.resourcemanager.fs.state-store.uri": (cluster_dir / "rm-state").resolve().as_uri(),
        "yarn.resourcemanager.connect.retry-interval.ms": "1000",
        "yarn.resourcemanager.connect.max-wait.ms": "300000",
    }


# RM HA (`up(ha=True)`): two ResourceManagers elect the active one through ZooKeeper and keep their
# state there (ZKRMStateStore, work-preserving). Every conf dir names both RMs' addresses; each RM's
# own dir adds yarn.resourcemanager.ha.id (both run on one host, so Hadoop cannot tell them apart
# by address). A short ZooKeeper session makes a killed active's lock expire in seconds.
RM_ADDRESS_KEYS = {"rm": "address", "scheduler": "scheduler.address", "tracker": "resource-tracker.address",
                   "admin": "admin.address", "webapp": "webapp.address"}
HA_ZK_SESSION_MS = 4000


def ha_site(host: str, zk_port: int, rm_ports: Mapping[str, Mapping[str, int]]) -> dict[str, str]:
    """The yarn-site properties of RM HA with ZooKeeper; `rm_ports` maps rm1/rm2 to their RM_ADDRESS_KEYS ports."""
    site = {
        "yarn.resourcemanager.ha.enabled": "true",
        "yarn.resourcemanager.ha.rm-ids": ",".join(rm_ports),
        "yarn.resourcemanager.cluster-id": "yarnctl-local",
        "yarn.resourcemanager.zk-address": f"{host}:{zk_port}",
        "yarn.resourcemanager.zk-timeout-ms": str(HA_ZK_SESSION_MS),
        "yarn.resourcemanager.recovery.enabled": "true",
        "yarn.resourcemanager.work-preserving-recovery.enabled": "true",
        "yarn.resourcemanager.store.class": "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore",
        # clients, AMs and NMs try the other RM after 1 s, not yarn-default's 30 s
        "yarn.resourcemanager.connect.retry-interval.ms": "1000",
        "yarn.resourcemanager.connect.max-wait.ms": "300000",
        "yarn.client.failover-sleep-base-ms": "500",
        "yarn.client.failover-sleep-max-ms": "2000",
    }
    for rm_id, ports in rm_ports.items():
        site[f"yarn.resourcemanager.hostname.{rm_id}"] = host
        for key, suffix in RM_ADDRESS_KEYS.items():
            site[f"yarn.resourcemanager.{suffix}.{rm_id}"] = f"{host}:{ports[key]}"
    return site


CONF_FILES = ("core-site.xml", "hdfs-site.xml", "yarn-site.xml", "mapred-site.xml", "capacity-scheduler.xml",
              "fair-scheduler.xml",
              "log4j.properties")


def render(template: str, values: Mapping[str, str], source: str = "template") -> str:
    """Replace every @NAME@ in `template`; fail naming the first placeholder without a value."""
    missing = sorted({m.group(1) for m in PLACEHOLDER.finditer(template)} - set(values))
    if missing:
        raise ClusterError(f"{source}: no value for placeholder(s) {', '.join('@' + m + '@' for m in missing)}")
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def placeholders(template: str) -> set[str]:
    """The @NAME@ placeholders a template uses."""
    return {m.group(1) for m in PLACEHOLDER.finditer(template)}


def property_names(site_xml: str) -> list[str]:
    """Names of the <property> elements of a Hadoop site file, in order."""
    return [_name_of(block) for block in _PROPERTY.findall(_body(site_xml))]


def properties(site_xml: str) -> dict[str, str]:
    """name -> raw value text of a Hadoop site file (no XML unescaping: values here are plain)."""
    out = {}
    for block in _PROPERTY.findall(_body(site_xml)):
        m = _VALUE.search(block)
        out[_name_of(block)] = m.group(2).strip() if m else ""
    return out


def merge(site_xml: str, fragment_xml: str) -> str:
    """Add the fragment's properties (with their comments) to the site file, replacing same-named ones."""
    blocks = _PROPERTY.findall(_body(fragment_xml))
    names = {_name_of(b) for b in blocks}
    head, body, tail = _split(site_xml)
    kept = _PROPERTY.sub(lambda m: "" if _name_of(m.group(0)) in names else m.group(0), body)
    return head + kept.rstrip() + "\n\n" + "".join(b if b.endswith("\n") else b + "\n" for b in blocks) + tail


def set_values(site_xml: str, values: Mapping[str, str]) -> str:
    """Set property values by name; names the file lacks are appended as new properties."""
    todo = dict(values)

    def sub(m: re.Match[str]) -> str:
        block = m.group(0)
        name = _name_of(block)
        if name not in todo:
            return block
        value = escape(todo.pop(name))
        return _VALUE.sub(lambda v: v.group(1) + value + v.group(3), block, count=1)

    head, body, tail = _split(site_xml)
    body = _PROPERTY.sub(sub, body)
    extra = "".join(f"  <property>\n    <name>{escape(k)}</name>\n    <value>{escape(v)}</value>\n  </property>\n"
                    for k, v in todo.items())
    return head + body + extra + tail


@dataclass(frozen=True, slots=True)
class NodeManagerConf:
    """What differs between the NodeManagers of one cluster."""

    index: int
    dir: Path
    port: int
    localizer_port: int
    webapp_port: int
    shuffle_port: int
    # with HDFS on the local cluster: the loopback address this NM (and its DataNode) goes by, so that
    # block locations name one YARN node each, and its DataNode's ports and storage (`dir`/dfs/data)
    host: str | None = None
    dn_ports: tuple[int, int, int] | None = None  # block transfer, IPC, web/JMX

    def values(self) -> dict[str, str]:
        out = {"NM_DIR": str(self.dir), "NM_PORT": str(self.port), "NM_LOCALIZER_PORT": str(self.localizer_port),
               "NM_WEBAPP_PORT": str(self.webapp_port), "NM_SHUFFLE_PORT": str(self.shuffle_port)}
        if self.host is not None:
            out["NM_HOST"] = self.host
        if self.dn_ports is not None:
            out |= {"DN_PORT": str(self.dn_ports[0]), "DN_IPC_PORT": str(self.dn_ports[1]),
                    "DN_WEBAPP_PORT": str(self.dn_ports[2]), "DFS_DIR": str(self.dir / "dfs")}
        return out


@dataclass(frozen=True, slots=True)
class ClusterConf:
    """Everything the templates need for one local cluster."""

    dir: Path
    classpath: tuple[str, ...]
    rm_port: int
    rm_scheduler_port: int
    rm_tracker_port: int
    rm_admin_port: int
    rm_webapp_port: int
    host: str = "127.0.0.1"
    nm_memory_mb: int = 4096
    nm_vcores: int = 4
    nm_heartbeat_ms: int = 1000
    native: str | None = "fifo"          # None: the shim
    shim: Mapping[str, str] = field(default_factory=dict)  # yarnctl.shim.* overrides when the shim is on
    jhs_port: int = 10020
    jhs_webapp_port: int = 19888
    jhs_admin_port: int = 10033
    # where each daemon lives: all `host` on the local cluster, one host per daemon in docker/
    rm_host: str | None = None
    jhs_host: str | None = None
    nm_host: str | None = None   # the NodeManager's own host name (its conf dir only)
    yarn_site: Mapping[str, str] = field(default_factory=dict)  # set in every conf dir's yarn-site.xml
    shim_on: str = "fifo"  # the shim's host scheduler (SHIM_HOSTS)
    capacity_site: Mapping[str, str] = field(default_factory=dict)  # set in capacity-scheduler.xml
    # the file system jobs use (fs.defaultFS) and the dir on it holding MapReduce staging and job history
    # (default: `dir`): HDFS (hdfs-site.xml) in docker and on the local cluster, file:/// in its light mode
    default_fs: str = "file:///"
    fs_dir: str | None = None
    dfs_dir: Path | None = None          # NameNode/DataNode storage (default: dir/dfs)
    dfs_replication: int = 1
    nn_webapp_port: int = 50070
    dn_webapp_port: int = 50075
    dn_port: int = 50010
    dn_ipc_port: int = 50020
    hdfs_bind: str = "0.0.0.0"  # where the NameNode's web port and the DataNodes listen (loopback on the local cluster)

    @property
    def scheduler_class(self) -> str:
        if self.native is None:
            try:
                return SHIM_HOSTS[self.shim_on]
            except KeyError:
                raise ClusterError(f"unknown shim host {self.shim_on!r}; valid: {', '.join(SHIM_HOSTS)}") from None
        try:
            return NATIVE_SCHEDULERS[self.native]
        except KeyError:
            raise ClusterError(f"unknown native scheduler {self.native!r}; valid: {', '.join(NATIVE_SCHEDULERS)}") from None

    def values(self) -> dict[str, str]:
        return {
            "CLUSTER_DIR": str(self.dir), "HOST": self.host, "RM_HOST": self.rm_host or self.host,
            "JHS_HOST": self.jhs_host or self.host, "NM_HOST": self.nm_host or self.host,
            "RM_PORT": str(self.rm_port), "RM_SCHEDULER_PORT": str(self.rm_scheduler_port),
            "RM_TRACKER_PORT": str(self.rm_tracker_port), "RM_ADMIN_PORT": str(self.rm_admin_port),
            "RM_WEBAPP_PORT": str(self.rm_webapp_port),
            "NM_MEMORY_MB": str(self.nm_memory_mb), "NM_VCORES": str(self.nm_vcores),
            "NM_HEARTBEAT_MS": str(self.nm_heartbeat_ms),
            "SCHEDULER_CLASS": self.scheduler_class,
            "CLASSPATH_COMMAS": ",".join(self.classpath),
            "CONTAINER_JAVA_OPTS": CONTAINER_JAVA_OPTS,
            "JHS_PORT": str(self.jhs_port), "JHS_WEBAPP_PORT": str(self.jhs_webapp_port),
            "JHS_ADMIN_PORT": str(self.jhs_admin_port),
            "DEFAULT_FS": self.default_fs, "FS_DIR": self.fs_dir or str(self.dir),
            "DFS_DIR": str(self.dfs_dir or self.dir / "dfs"), "DFS_REPLICATION": str(self.dfs_replication),
            "NN_WEBAPP_PORT": str(self.nn_webapp_port), "DN_WEBAPP_PORT": str(self.dn_webapp_port),
            "DN_PORT": str(self.dn_port), "DN_IPC_PORT": str(self.dn_ipc_port), "HDFS_BIND": self.hdfs_bind,
        }


def render_conf_dir(templates: Path, out: Path, conf: ClusterConf, nm: NodeManagerConf | None = None) -> Path:
    """Write core/hdfs/yarn/mapred-site.xml, capacity/fair-scheduler.xml and log4j.properties into `out`.

    With `nm`, the NodeManager's ports and dirs (yarn-site.nodemanager.xml,
    mapred-site.nodemanager.xml) are merged in: its own conf dir. Without, the result is the
    ResourceManager's and clients' conf dir; the shim fragment goes into that copy only.
    """
    values = conf.values() | (nm.values() if nm else {})
    out.mkdir(parents=True, exist_ok=True)
    for name in CONF_FILES:
        text = render(_read(templates / name), values, str(templates / name))
        frag = templates / name.replace(".xml", ".nodemanager.xml")
        if nm is not None and name.endswith("-site.xml") and frag.is_file():
            text = merge(text, render(_read(frag), values, str(frag)))
        if nm is None and name == "yarn-site.xml" and conf.native is None:
            frag = templates / "yarn-site.shim.xml"
            text = set_values(merge(text, _read(frag)),
                              {"yarn.resourcemanager.scheduler.class": conf.scheduler_class, **conf.shim})
        if nm is not None and name == "yarn-site.xml" and nm.host is not None:
            # the NM takes its node id from yarn.nodemanager.address only with a bind host set (else the
            # canonical name of the address it listens on: "localhost" for every loopback NM)
            text = set_values(text, {"yarn.nodemanager.bind-host": nm.host})
        if name == "yarn-site.xml" and conf.yarn_site:
            text = set_values(text, conf.yarn_site)
        if name == "capacity-scheduler.xml" and conf.capacity_site:
            text = set_values(text, conf.capacity_site)
        (out / name).write_text(text)
    return out


HDFS_WEBAPPS = ("hdfs", "datanode", "secondary")


def hdfs_webapps(conf_dir: Path) -> None:
    """webapps/hdfs and webapps/datanode on the classpath (the conf dir comes first there).

    The NameNode and DataNode refuse to start without them, and Maven Central's hadoop-hdfs jar leaves
    them out (only the release tarball ships the HTML UI). Empty ones serve what the daemons register in
    code (/jmx, /webhdfs, /conf, /logLevel); the HTML pages are not there.
    """
    for app in HDFS_WEBAPPS:
        d = conf_dir / "webapps" / app
        d.mkdir(parents=True, exist_ok=True)
        (d / "index.html").write_text(f"<html><body>HDFS {app}: no HTML UI in this image (Hadoop's jars from Maven "
                                      "Central); see <a href=\"/jmx\">/jmx</a></body></html>\n")


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise ClusterError(f"{path}: cannot read template: {e.strerror}") from None


def _split(site_xml: str) -> tuple[str, str, str]:
    start = site_xml.find("<configuration>")
    end = site_xml.rfind("</configuration>")
    if start < 0 or end < start:
        raise ClusterError("not a Hadoop site file: no <configuration> element")
    start += len("<configuration>")
    return site_xml[:start], site_xml[start:end], site_xml[end:]


def _body(site_xml: str) -> str:
    return _split(site_xml)[1]


def _name_of(block: str) -> str:
    m = _NAME.search(block)
    if not m:
        raise ClusterError(f"a <property> without <name>: {block.strip()[:80]}")
    return m.group(1)
