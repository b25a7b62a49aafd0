"""One source of truth for the shim's properties: ShimConfig.java, the drop-in fragment and the docs agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from yarnctl.cluster.conf import properties

ROOT = Path(__file__).resolve().parents[2]
JAVA = (ROOT / "java-bridge/src/main/java/io/yarnctl/shim/ShimConfig.java").read_text()
FRAGMENT = properties((ROOT / "hadoop-conf/yarn-site.shim.xml").read_text())
DOC_ROWS = dict(re.findall(r"^\| `(yarnctl\.shim\.[\w.-]+)` \| `([^`]*)` \|",
                           (ROOT / "java-bridge/README.md").read_text(), re.M))


def _java_properties() -> dict[str, str]:
    names = dict(re.findall(r'static final String (\w+) = "(yarnctl\.shim\.[\w.-]+)";', JAVA))
    defaults = dict(re.findall(r"static final \w+ DEFAULT_(\w+) = \"?([^\";]*)\"?;", JAVA))
    assert set(names) == set(defaults), f"a property without a default or vice versa: {set(names) ^ set(defaults)}"
    return {name: defaults[const] for const, name in names.items()}


JAVA_PROPS = _java_properties()


def test_the_java_side_defines_the_properties_the_docs_promise() -> None:
    assert len(JAVA_PROPS) >= 10
    assert JAVA_PROPS["yarnctl.shim.deadline-ms"] == "10"


@pytest.mark.parametrize("name", sorted(JAVA_PROPS))
def test_fragment_and_docs_carry_every_java_property_with_its_default(name: str) -> None:
    assert FRAGMENT.get(name) == JAVA_PROPS[name], f"hadoop-conf/yarn-site.shim.xml: {name}"
    assert DOC_ROWS.get(name) == JAVA_PROPS[name], f"java-bridge/README.md: {name}"


def test_no_property_exists_only_in_the_templates_or_docs() -> None:
    extra = {k for k in FRAGMENT if k.startswith("yarnctl.")} - set(JAVA_PROPS)
    assert not extra, f"in yarn-site.shim.xml but unknown to ShimConfig.java: {extra}"
    assert not set(DOC_ROWS) - set(JAVA_PROPS), set(DOC_ROWS) - set(JAVA_PROPS)
