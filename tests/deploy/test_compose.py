"""docker/compose.yaml and docker/Dockerfile: valid, complete, and wired to the same start code as the local cluster.

No Docker engine (nor the compose plugin) runs on the build machines, so the compose file is checked
against the Compose Specification's JSON schema, vendored as tests/deploy/compose-spec.json from
https://github.com/compose-spec/compose-spec/blob/170098ba07d9f53c383a41bfd4c5166b0a4529a6/schema/compose-spec.json
(Apache-2.0), and `docker compose config` runs only where the plugin exists.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from yarnctl.cluster import node
from yarnctl.cluster.classpath import repo_root

ROOT = repo_root()
DOCKER = ROOT / "docker"
SCHEMA = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
HADOOP_SERVICES = {"resourcemanager", "serve", "nodemanager-1", "nodemanager-2", "nodemanager-3", "historyserver",
                   "namenode", "datanode-1", "datanode-2", "datanode-3"}
_VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def _interpolate(v: Any) -> Any:
    # compose's ${VAR:-default} with an empty environment, as `docker compose config` would do
    if isinstance(v, str):
        return _VAR.sub(lambda m: m.group(2) or "", v)
    if isinstance(v, dict):
        return {k: _interpolate(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_interpolate(x) for x in v]
    return v


def _compose() -> dict[str, Any]:
    doc = _interpolate(yaml.safe_load((DOCKER / "compose.yaml").read_text()))
    assert isinstance(doc, dict)
    return doc


def _errors(doc: dict[str, Any]) -> list[str]:
    v = jsonschema.Draft7Validator(SCHEMA)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]


def test_compose_file_follows_the_compose_spec() -> None:
    assert _errors(_compose()) == []


@pytest.mark.parametrize("break_it,why", [
    (lambda d: d.__setitem__("servics", d.pop("services")), "top-level typo"),
    (lambda d: d["services"]["resourcemanager"]["healthcheck"].__setitem__("intervall", "10s"), "unknown key"),
    (lambda d: d["services"]["serve"].__setitem__("depends_on", {"resourcemanager": {"condition": "up"}}),
     "unknown condition"),
], ids=["typo", "healthcheck-key", "condition"])
def test_the_schema_check_catches_a_broken_file(break_it: Any, why: str) -> None:
    doc = copy.deepcopy(_compose())
    break_it(doc)
    assert _errors(doc), why


def test_services_and_health_checks() -> None:
    services = _compose()["services"]
    assert set(services) == HADOOP_SERVICES | {"prometheus", "grafana"}
    for name, s in services.items():
        assert "healthcheck" in s, f"{name} has no health check"
    for name in HADOOP_SERVICES:
        s = services[name]
        role = s["command"][0]
        assert role in node.ROLES, name
        # the health check asks the same entrypoint module about the same role
        assert s["healthcheck"]["test"][-3:] == ["yarnctl.cluster.node", "health", role], name
        assert set(s["environment"]) <= set(node.SETTINGS), set(s["environment"]) - set(node.SETTINGS)
        assert s["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
    assert sorted(s["hostname"] for n, s in services.items() if n.startswith("nodemanager")) == \
        ["nodemanager-1", "nodemanager-2", "nodemanager-3"]


def test_start_order_follows_the_token_and_health() -> None:
    services = _compose()["services"]
    for name, s in services.items():
        for dep, how in s.get("depends_on", {}).items():
            assert dep in services, f"{name} depends on unknown {dep}"
            assert how["condition"] == "service_healthy"
    # the RM entrypoint writes the token the shim reads once at start; serve reuses it
    assert services["serve"]["depends_on"] == {"resourcemanager": {"condition": "service_healthy"}}
    assert all(services[f"nodemanager-{i}"]["depends_on"] == {"resourcemanager": {"condition": "service_healthy"}}
               for i in (1, 2, 3))
    # job history lives on HDFS; DataNodes register with a NameNode that is up (the NameNode's health does
    # not wait for them, so a restart with blocks cannot deadlock on safe mode)
    assert services["historyserver"]["depends_on"] == {"namenode": {"condition": "service_healthy"}}
    assert "depends_on" not in services["namenode"]


def test_hdfs_a_namenode_and_a_datanode_beside_each_nodemanager() -> None:
    services = _compose()["services"]
    fs = "hdfs://namenode:8020"
    for name in HADOOP_SERVICES:
        assert services[name]["environment"]["YARNCTL_DEFAULT_FS"] == fs, name
    assert services["namenode"]["hostname"] == "namenode"
    for i in (1, 2, 3):
        dn = services[f"datanode-{i}"]
        # the NodeManager's network and host name: HDFS block locations name the YARN node
        assert dn["network_mode"] == f"service:nodemanager-{i}"
        assert dn["environment"]["YARNCTL_NM_HOST"] == services[f"nodemanager-{i}"]["hostname"]
        assert dn["volumes"] == [f"datanode-{i}:{node.SETTINGS['YARNCTL_DFS_DIR'][0]}"]
    assert services["namenode"]["volumes"] == [f"namenode:{node.SETTINGS['YARNCTL_DFS_DIR'][0]}"]
    volumes = _compose()["volumes"]
    assert {"namenode", "datanode-1", "datanode-2", "datanode-3"} <= set(volumes)


def test_policy_server_is_on_the_rms_loopback_and_scraped_by_prometheus() -> None:
    services = _compose()["services"]
    assert services["serve"]["network_mode"] == "service:resourcemanager"
    assert node.SETTINGS["YARNCTL_SHIM_ADDRESS"][0] == "127.0.0.1"
    assert "serve" in services["resourcemanager"]["networks"]["default"]["aliases"]
    prom = yaml.safe_load((DOCKER / "prometheus" / "prometheus.yml").read_text())
    targets = [t for job in prom["scrape_configs"] for c in job["static_configs"] for t in c["targets"]]
    assert targets == [f"serve:{node.SETTINGS['YARNCTL_METRICS_PORT'][0]}"]
    # the py4j port is never published; the token volume is mounted by the RM and serve only
    assert "ports" not in services["serve"]
    holders = {n for n, s in services.items() for v in s.get("volumes", []) if v.startswith("secrets:")}
    assert holders == {"resourcemanager", "serve"}


def test_bind_mounts_and_build_inputs_exist() -> None:
    services = _compose()["services"]
    for name, s in services.items():
        for v in s.get("volumes", []):
            src = v.split(":")[0]
            if src.startswith("."):
                assert (DOCKER / src).exists(), f"{name}: {src}"
    dash = json.loads((DOCKER / "grafana" / "yarnctl-dashboard.json").read_text())
    assert dash["uid"] == "yarnctl-serve"
    prov = yaml.safe_load((DOCKER / "grafana/provisioning/dashboards/yarnctl.yaml").read_text())
    assert prov["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"


def test_dockerfile_uses_the_local_clusters_pom_scripts_and_entrypoint() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    for src in re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M):
        for part in src.split():
            assert (ROOT / part).exists(), f"COPY source {part} missing"
    # the jars come from the pom `yarnctl cluster up` resolves, by Maven, not from a tarball
    assert "java-bridge/cluster/pom.xml dependency:copy-dependencies" in text
    assert not re.search(r"hadoop-2\.7\.7\.tar|archive\.apache\.org|curl .*hadoop", text)
    assert 'ENTRYPOINT ["/opt/yarnctl/venv/bin/python", "-m", "yarnctl.cluster.node"]' in text
    assert "COPY docker/bin /opt/yarnctl/docker/bin" in text and "YARNCTL_HOME=/opt/yarnctl" in text
    # node.py finds its templates, daemon script and shim jar under YARNCTL_HOME as laid out there
    assert "/opt/yarnctl/java-bridge/target/yarnctl-shim-0.1.0.jar" in text
    assert "COPY hadoop-conf /opt/yarnctl/hadoop-conf" in text


def _compose_plugin() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _compose_plugin(), reason="no `docker compose` plugin on this machine")
def test_docker_compose_config_accepts_it() -> None:
    r = subprocess.run(["docker", "compose", "-f", str(DOCKER / "compose.yaml"), "config", "-q"],
                       capture_output=True, text=True, env={**os.environ})
    assert r.returncode == 0, r.stderr
