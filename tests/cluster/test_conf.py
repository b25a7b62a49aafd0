"""Rendering hadoop-conf/ templates: placeholders, fragment merging, per-NM and shim conf dirs."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from yarnctl.cluster.classpath import repo_root
from yarnctl.cluster.conf import (CONF_FILES, NATIVE_SCHEDULERS, SHIM_SCHEDULER, ClusterConf, NodeManagerConf,
                                  ha_site, merge, placeholders, properties, property_names, recovery_site, render,
                                  render_conf_dir, set_values)
from yarnctl.errors import ClusterError

TEMPLATES = repo_root() / "hadoop-conf"
SITE = """<?xml version="1.0"?>
<configuration>
  <property>
    <!-- a comment -->
    <name>a</name>
    <value>1</value>
  </property>
  <property>
    <name>b</name>
    <value>2</value>
  </property>
</configuration>
"""


def _conf(tmp: Path, native: str | None = "fifo", **kw: object) -> ClusterConf:
    return ClusterConf(dir=tmp, classpath=("/j/a.jar", "/j/b.jar"), rm_port=101, rm_scheduler_port=102,
                       rm_tracker_port=103, rm_admin_port=104, rm_webapp_port=105, native=native,
                       jhs_port=106, jhs_webapp_port=107, jhs_admin_port=108, **kw)  # type: ignore[arg-type]


def _nm(tmp: Path, i: int) -> NodeManagerConf:
    base = 200 + 10 * i
    return NodeManagerConf(i, tmp / f"nm-{i}", base, base + 1, base + 2, base + 3)


def _props(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot()  # also proves the file is well-formed XML
    return {p.findtext("name", ""): p.findtext("value", "") for p in root.iter("property")}


@pytest.mark.parametrize("template,values,expected", [
    ("x=@A@", {"A": "1"}, "x=1"),
    ("@A@:@B_2@", {"A": "h", "B_2": "9"}, "h:9"),
    ("mail@example.com @a@", {}, "mail@example.com @a@"),  # lower case is not a placeholder
    ("@A@@A@", {"A": "z"}, "zz"),
], ids=["one", "two", "not-a-placeholder", "repeated"])
def test_render(template: str, values: dict[str, str], expected: str) -> None:
    assert render(template, values) == expected


def test_render_missing_value_names_it() -> None:
    with pytest.raises(ClusterError, match=r"core-site.xml: no value for placeholder\(s\) @RM_PORT@"):
        render("@HOST@:@RM_PORT@", {"HOST": "h"}, "core-site.xml")


def test_merge_replaces_same_name_keeps_comments_and_order() -> None:
    frag = "<configuration>\n  <property>\n    <!-- new b -->\n    <name>b</name>\n    <value>20</value>\n" \
           "  </property>\n  <property>\n    <name>c</name>\n    <value>3</value>\n  </property>\n</configuration>"
    out = merge(SITE, frag)
    assert property_names(out) == ["a", "b", "c"]
    assert properties(out) == {"a": "1", "b": "20", "c": "3"}
    assert "<!-- a comment -->" in out and "<!-- new b -->" in out
    ET.fromstring(out.split("?>", 1)[1])


def test_set_values_replaces_and_appends() -> None:
    out = set_values(SITE, {"b": "x<y", "z": "9"})
    assert properties(out) == {"a": "1", "b": "x&lt;y", "z": "9"}
    assert _props_text(out) == {"a": "1", "b": "x<y", "z": "9"}


def _props_text(xml: str) -> dict[str, str]:
    root = ET.fromstring(xml.split("?>", 1)[1])
    return {p.findtext("name", ""): p.findtext("value", "") for p in root.iter("property")}


def test_every_template_placeholder_has_a_value(tmp_path: Path) -> None:
    # catches a template and the renderer drifting apart without starting a cluster
    provided = set(_conf(tmp_path).values()) | set(_nm(tmp_path, 0).values())
    used = set()
    for f in TEMPLATES.iterdir():
        if f.suffix in (".xml", ".properties"):
            used |= placeholders(f.read_text())
    assert used <= provided, used - provided


def test_rm_conf_native(tmp_path: Path) -> None:
    out = render_conf_dir(TEMPLATES, tmp_path / "conf", _conf(tmp_path, native="capacity"))
    assert sorted(p.name for p in out.iterdir()) == sorted(CONF_FILES)
    y = _props(out / "yarn-site.xml")
    assert y["yarn.resourcemanager.scheduler.class"] == NATIVE_SCHEDULERS["capacity"]
    assert y["yarn.resourcemanager.webapp.address"] == "127.0.0.1:105"
    assert y["yarn.scheduler.include-port-in-node-name"] == "true"
    assert y["yarn.application.classpath"] == "$HADOOP_CONF_DIR,/j/a.jar,/j/b.jar"
    assert not any(k.startswith("yarnctl.shim.") for k in y)
    assert "yarn.nodemanager.address" not in y  # per-NM only
    m = _props(out / "mapred-site.xml")
    for key in ("yarn.app.mapreduce.am.command-opts", "mapreduce.map.java.opts", "mapreduce.reduce.java.opts"):
        assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in m[key]
        assert "-XX:+IgnoreUnrecognizedVMOptions" in m[key]
    assert m["mapreduce.jobhistory.address"] == "127.0.0.1:106"
    core = _props(out / "core-site.xml")
    assert core["hadoop.tmp.dir"] == f"{tmp_path}/tmp"
    # the local cluster stays on the local file system; MapReduce reads its staging dir from mapred-site only
    assert core["fs.defaultFS"] == "file:///"
    assert "yarn.app.mapreduce.am.staging-dir" not in core
    assert m["yarn.app.mapreduce.am.staging-dir"] == f"{tmp_path}/staging"
    assert m["mapreduce.jobhistory.done-dir"] == f"{tmp_path}/history/done"


def test_nm_confs_differ_only_where_they_must(tmp_path: Path) -> None:
    conf = _conf(tmp_path)
    a = _props(render_conf_dir(TEMPLATES, tmp_path / "a", conf, _nm(tmp_path, 0)) / "yarn-site.xml")
    b = _props(render_conf_dir(TEMPLATES, tmp_path / "b", conf, _nm(tmp_path, 1)) / "yarn-site.xml")
    differ = {k for k in a if a[k] != b.get(k)}
    assert differ == {"yarn.nodemanager.address", "yarn.nodemanager.localizer.address",
                      "yarn.nodemanager.webapp.address", "yarn.nodemanager.local-dirs",
                      "yarn.nodemanager.log-dirs", "yarn.nodemanager.recovery.dir"}
    assert a["yarn.nodemanager.local-dirs"] == f"{tmp_path}/nm-0/local"
    # the shuffle port must live in mapred-site: the NM loads mapred-default.xml after yarn-site.xml
    assert _props(tmp_path / "a" / "mapred-site.xml")["mapreduce.shuffle.port"] == "203"
    assert _props(tmp_path / "b" / "mapred-site.xml")["mapreduce.shuffle.port"] == "213"


def test_nm_conf_runs_the_container_monitor_that_never_kills(tmp_path: Path) -> None:
    # 2.7 monitors containers (ContainerResource_* beans) only with a pmem or vmem check on
    y = _props(render_conf_dir(TEMPLATES, tmp_path / "nm", _conf(tmp_path), _nm(tmp_path, 0)) / "yarn-site.xml")
    assert (y["yarn.nodemanager.pmem-check-enabled"], y["yarn.nodemanager.vmem-check-enabled"]) == ("false", "true")
    assert y["yarn.nodemanager.vmem-pmem-ratio"] == "1000"
    assert y["yarn.nodemanager.container-metrics.enable"] == "true"
    assert y["yarn.nodemanager.container-metrics.period-ms"] == "1000"


def test_recovery_reaches_every_conf_dir(tmp_path: Path) -> None:
    # the RM recovers, and NMs (keeping containers on resync), clients and AMs retry it every second
    conf = _conf(tmp_path, native=None, yarn_site=recovery_site(tmp_path))
    rm = _props(render_conf_dir(TEMPLATES, tmp_path / "conf", conf) / "yarn-site.xml")
    nm = _props(render_conf_dir(TEMPLATES, tmp_path / "nm", conf, _nm(tmp_path, 0)) / "yarn-site.xml")
    for y in (rm, nm):
        assert y["yarn.resourcemanager.recovery.enabled"] == "true"
        assert y["yarn.resourcemanager.work-preserving-recovery.enabled"] == "true"
        assert y["yarn.resourcemanager.connect.retry-interval.ms"] == "1000"
    assert rm["yarn.resourcemanager.fs.state-store.uri"] == f"file://{tmp_path.resolve()}/rm-state"
    assert rm["yarn.resourcemanager.scheduler.class"] == SHIM_SCHEDULER  # the shim fragment is still merged
    plain = _props(render_conf_dir(TEMPLATES, tmp_path / "plain", _conf(tmp_path)) / "yarn-site.xml")
    assert plain["yarn.resourcemanager.recovery.enabled"] == "false"


def test_rm_conf_shim(tmp_path: Path) -> None:
    conf = _conf(tmp_path, native=None, shim={"yarnctl.shim.port": "4242", "yarnctl.shim.token-file": "/t",
                                                "yarnctl.shim.deadline-ms": "25"})
    y = _props(render_conf_dir(TEMPLATES, tmp_path / "conf", conf) / "yarn-site.xml")
    assert y["yarn.resourcemanager.scheduler.class"] == SHIM_SCHEDULER
    assert y["yarnctl.shim.port"] == "4242"
    assert y["yarnctl.shim.token-file"] == "/t"
    assert y["yarnctl.shim.deadline-ms"] == "25"
    assert y["yarnctl.shim.breaker.failures"] == "3"  # untouched default from the fragment
    nm = _props(render_conf_dir(TEMPLATES, tmp_path / "nm", conf, _nm(tmp_path, 0)) / "yarn-site.xml")
    assert not any(k.startswith("yarnctl.shim.") for k in nm)


def test_shim_fragment_is_a_complete_documented_drop_in() -> None:
    text = (TEMPLATES / "yarn-site.shim.xml").read_text()
    assert not placeholders(text)  # literal defaults: usable as is on a real cluster
    # the names and defaults are checked against ShimConfig.java in test_shim_properties.py
    assert _props(TEMPLATES / "yarn-site.shim.xml")["yarn.resourcemanager.scheduler.class"] == \
        "io.yarnctl.shim.YarnctlScheduler"
    for block in text.split("<property>")[1:]:
        assert "<!--" in block.split("<name>")[0], f"undocumented: {block.strip()[:60]}"


def test_unknown_native_scheduler(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="unknown native scheduler 'drf'; valid: fifo, capacity, fair"):
        _ = _conf(tmp_path, native="drf").scheduler_class


def test_ha_site_names_both_rms_on_zookeeper() -> None:
    ports = {"rm1": dict(rm=1, scheduler=2, tracker=3, admin=4, webapp=5),
             "rm2": dict(rm=11, scheduler=12, tracker=13, admin=14, webapp=15)}
    site = ha_site("127.0.0.1", 2181, ports)
    assert site["yarn.resourcemanager.ha.rm-ids"] == "rm1,rm2"
    assert site["yarn.resourcemanager.zk-address"] == "127.0.0.1:2181"
    assert site["yarn.resourcemanager.store.class"].endswith(".ZKRMStateStore")
    assert site["yarn.resourcemanager.work-preserving-recovery.enabled"] == "true"
    # every address an RM serves, per RM: clients, AMs and NMs fail over between them
    assert site["yarn.resourcemanager.scheduler.address.rm2"] == "127.0.0.1:12"
    assert site["yarn.resourcemanager.resource-tracker.address.rm1"] == "127.0.0.1:3"
    assert site["yarn.resourcemanager.webapp.address.rm2"] == "127.0.0.1:15"
    assert {k for k in site if k.endswith(".rm1")} == {k[:-1] + "1" for k in site if k.endswith(".rm2")}
    assert "yarn.resourcemanager.ha.id" not in site  # each RM's own conf dir adds it


def test_with_hdfs_each_nm_and_its_datanode_go_by_their_own_address(tmp_path: Path) -> None:
    conf = dataclasses.replace(_conf(tmp_path), default_fs="hdfs://127.0.0.1:300", fs_dir="/yarnctl",
                               hdfs_bind="127.0.0.1")
    nms = [dataclasses.replace(_nm(tmp_path, i), host=f"127.0.1.{i + 1}", dn_ports=(400 + i, 410 + i, 420 + i))
           for i in (0, 1)]
    for i, nm in enumerate(nms):
        out = render_conf_dir(TEMPLATES, tmp_path / f"nm{i}", conf, nm)
        y, h = _props(out / "yarn-site.xml"), _props(out / "hdfs-site.xml")
        # the node id comes from the address only with a bind host (else "localhost" for every loopback NM)
        assert (y["yarn.nodemanager.address"], y["yarn.nodemanager.bind-host"]) == (f"127.0.1.{i + 1}:{200 + 10 * i}",
                                                                                  f"127.0.1.{i + 1}")
        assert h["dfs.datanode.hostname"] == f"127.0.1.{i + 1}"  # block locations name the YARN node
        # on loopback, where clients reach a DataNode (the NameNode gives them the address it registered from)
        assert (h["dfs.datanode.address"], h["dfs.datanode.ipc.address"], h["dfs.datanode.http.address"]) == (
            f"127.0.0.1:{400 + i}", f"127.0.0.1:{410 + i}", f"127.0.0.1:{420 + i}")
        assert h["dfs.datanode.data.dir"] == f"{tmp_path}/nm-{i}/dfs/data"
    rm = render_conf_dir(TEMPLATES, tmp_path / "rm", conf)
    assert _props(rm / "core-site.xml")["fs.defaultFS"] == "hdfs://127.0.0.1:300"
    assert _props(rm / "mapred-site.xml")["mapreduce.jobhistory.done-dir"] == "/yarnctl/history/done"
    assert _props(rm / "hdfs-site.xml")["dfs.namenode.name.dir"] == f"{tmp_path}/dfs/name"
    # the light mode and docker keep Hadoop's DataNode ports on every interface, and no NM bind host
    y = _props(render_conf_dir(TEMPLATES, tmp_path / "light", _conf(tmp_path), _nm(tmp_path, 0)) / "yarn-site.xml")
    assert "yarn.nodemanager.bind-host" not in y
    assert _props(tmp_path / "light" / "hdfs-site.xml")["dfs.datanode.address"] == "0.0.0.0:50010"
