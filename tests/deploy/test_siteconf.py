"""`python -m yarnctl.cluster.siteconf`: the yarn-site.xml edits docs/deploy.md makes on a real cluster."""

from __future__ import annotations

import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from yarnctl.cluster.classpath import repo_root
from yarnctl.cluster.siteconf import main

FRAGMENT = repo_root() / "hadoop-conf" / "yarn-site.shim.xml"
# the shape of a stock 2.7 install's yarn-site.xml: license comment, one-line properties, descriptions
STOCK = """<?xml version="1.0"?>
<!-- Licensed under the Apache License, Version 2.0 -->
<configuration>
<!-- Site specific YARN configuration properties -->
  <property><name>yarn.resourcemanager.hostname</name><value>rm1.example.com</value></property>
  <property>
    <description>the stock scheduler</description>
    <name>yarn.resourcemanager.scheduler.class</name>
    <value>org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler</value>
  </property>
</configuration>
"""


def _props(path: Path) -> dict[str, str]:
    return {p.findtext("name", ""): p.findtext("value", "") for p in ET.parse(path).getroot().iter("property")}


def test_merge_adds_the_fragment_with_this_clusters_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "yarn-site.xml"
    site.write_text(STOCK)
    site.chmod(0o640)
    assert main(["merge", str(site), str(FRAGMENT), "yarnctl.shim.port=4242",
                 "yarnctl.shim.token-file=/etc/yarnctl/bridge.token"]) == 0
    p = _props(site)
    assert p["yarn.resourcemanager.scheduler.class"] == "io.yarnctl.shim.YarnctlScheduler"
    assert p["yarn.resourcemanager.hostname"] == "rm1.example.com"
    assert (p["yarnctl.shim.port"], p["yarnctl.shim.token-file"]) == ("4242", "/etc/yarnctl/bridge.token")
    assert p["yarnctl.shim.deadline-ms"] == "10"
    assert list(p).count("yarn.resourcemanager.scheduler.class") == 1
    text = site.read_text()
    assert "Licensed under the Apache License" in text and "CapacityScheduler" not in text
    assert stat.S_IMODE(site.stat().st_mode) == 0o640
    assert main(["get", str(site), "yarnctl.shim.port"]) == 0
    assert capsys.readouterr().out == "4242\n"


def test_set_turns_delegation_off(tmp_path: Path) -> None:
    site = tmp_path / "yarn-site.xml"
    site.write_text(FRAGMENT.read_text())
    assert main(["set", str(site), "yarnctl.shim.enabled=false"]) == 0
    assert _props(site)["yarnctl.shim.enabled"] == "false"


@pytest.mark.parametrize("argv,message", [
    (["get", "{site}", "nope"], "error: {site}: no property nope"),
    (["set", "{site}", "novalue"], "error: expected NAME=VALUE, got 'novalue'"),
    (["merge", "{dir}/missing.xml", "{site}"], "error: {dir}/missing.xml: No such file or directory"),
    (["frob", "{site}"], "usage: python -m yarnctl.cluster.siteconf"),
], ids=["get-missing", "set-bad", "merge-no-file", "usage"])
def test_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    site = tmp_path / "yarn-site.xml"
    site.write_text(STOCK)
    fmt = {"site": str(site), "dir": str(tmp_path)}
    assert main([a.format(**fmt) for a in argv]) == 2
    assert capsys.readouterr().err.startswith(message.format(**fmt))
    assert site.read_text() == STOCK
