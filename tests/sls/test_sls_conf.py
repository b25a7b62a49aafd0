"""The classpath directory of one SLS run."""

from __future__ import annotations

from pathlib import Path

from yarnctl.cluster.conf import properties
from yarnctl.sls.conf import (CAPACITY_METRICS, FIFO_METRICS, MR_AM_SIMULATOR, WEB_TEMPLATES, SlsConf, scheduler_class,
                              write_conf_dir)

PORTS = {"rm": 1, "scheduler": 2, "tracker": 3, "admin": 4, "webapp": 5}


def test_shim_run_maps_the_shim_to_fifo_metrics_and_sets_its_port(tmp_path: Path) -> None:
    c = SlsConf(scheduler_class(None), PORTS, 6, shim={"yarnctl.shim.port": "7"})
    d = write_conf_dir(tmp_path / "conf", c)
    yarn = properties((d / "yarn-site.xml").read_text())
    assert yarn["yarn.resourcemanager.scheduler.class"] == "io.yarnctl.shim.YarnctlScheduler"
    assert yarn["io.yarnctl.shim.YarnctlScheduler"] == FIFO_METRICS
    assert yarn["yarnctl.shim.port"] == "7"
    assert yarn["yarn.resourcemanager.webapp.address"] == "127.0.0.1:5"
    assert yarn["yarn.sls.metrics.web.address.port"] == "6"
    assert int(yarn["yarn.sls.metrics.timer.window.size"]) >= 10_000
    assert properties((d / "core-site.xml").read_text())["hadoop.security.token.service.use_ip"] == "false"
    runner = properties((d / "sls-runner.xml").read_text())
    assert runner["yarn.sls.am.type.mapreduce"] == MR_AM_SIMULATOR
    assert (runner["yarn.sls.nm.memory.mb"], runner["yarn.sls.nm.vcores"]) == ("4096", "4")
    assert all((d / t).is_file() for t in WEB_TEMPLATES)


def test_native_run_has_no_shim_properties(tmp_path: Path) -> None:
    d = write_conf_dir(tmp_path, SlsConf(scheduler_class("fifo"), PORTS, 6))
    yarn = properties((d / "yarn-site.xml").read_text())
    assert yarn["yarn.resourcemanager.scheduler.class"].endswith(".fifo.FifoScheduler")
    assert not [k for k in yarn if "yarnctl" in k]


TREE = """<?xml version="1.0"?>
<configuration>
  <property><name>yarn.scheduler.capacity.root.queues</name><value>a,b</value></property>
  <property><name>yarn.scheduler.capacity.root.a.capacity</name><value>70</value></property>
  <property><name>yarn.scheduler.capacity.root.b.capacity</name><value>30</value></property>
</configuration>
"""


def test_an_operators_tree_runs_the_shim_on_capacity_scheduler_with_its_metrics(tmp_path: Path) -> None:
    c = SlsConf(scheduler_class(None, "capacity"), PORTS, 6, shim={"yarnctl.shim.port": "7"}, capacity_site=TREE)
    d = write_conf_dir(tmp_path, c)
    yarn = properties((d / "yarn-site.xml").read_text())
    assert yarn["yarn.resourcemanager.scheduler.class"] == "io.yarnctl.shim.YarnctlCapacityScheduler"
    assert yarn["io.yarnctl.shim.YarnctlCapacityScheduler"] == CAPACITY_METRICS
    cs = properties((d / "capacity-scheduler.xml").read_text())
    # the operator's tree, and SLS's unmanaged AMs allowed the whole queue since the file does not say
    assert (cs["yarn.scheduler.capacity.root.queues"], cs["yarn.scheduler.capacity.root.a.capacity"]) == ("a,b", "70")
    assert cs["yarn.scheduler.capacity.maximum-am-resource-percent"] == "1.0"


def test_an_am_share_the_operator_set_is_kept(tmp_path: Path) -> None:
    tree = TREE.replace("</configuration>", "  <property><name>yarn.scheduler.capacity.maximum-am-resource-percent"
                                            "</name><value>0.2</value></property>\n</configuration>")
    d = write_conf_dir(tmp_path, SlsConf(scheduler_class("capacity"), PORTS, 6, capacity_site=tree))
    assert properties((d / "capacity-scheduler.xml").read_text())["yarn.scheduler.capacity.maximum-am-resource-percent"] \
        == "0.2"
