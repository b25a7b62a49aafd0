"""One source of truth for the shim's properties: ShimConfig.java, the drop-in fragment and the docs agree.

Both ways: every property ShimConfig.java defines is in hadoop-conf/yarn-site.shim.xml, the table of
java-bridge/README.md and the table of docs/deploy.md with the same default, and none of those
names a yarnctl.shim.* property the Java code does not know.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from yarnctl.cluster.conf import properties

ROOT = Path(__file__).resolve().parents[2]
JAVA = (ROOT / "java-bridge/src/main/java/io/yarnctl/shim/ShimConfig.java").read_text()
FRAGMENT = properties((ROOT / "hadoop-conf/yarn-site.shim.xml").read_text())
_ROW = re.compile(r"^\| `(yarnctl\.shim\.[\w.-]+)` \| `([^`]*)` \|", re.M)
DOCS = {doc: dict(_ROW.findall((ROOT / doc).read_text())) for doc in ("java-bridge/README.md", "docs/deploy.md")}
DOC_ROWS = DOCS["java-bridge/README.md"]
# every yarnctl.shim.* name mentioned anywhere in these files, tables or prose
MENTIONED = {doc: set(re.findall(r"(?<![\w.])yarnctl\.shim\.[a-z][\w.-]*[a-z]", (ROOT / doc).read_text()))
             for doc in ("java-bridge/README.md", "docs/deploy.md", "hadoop-conf/yarn-site.shim.xml",
                         "hadoop-conf/README.md")}


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
    for doc, rows in DOCS.items():
        assert rows.get(name) == JAVA_PROPS[name], f"{doc}: {name}"


def test_no_property_exists_only_in_the_templates_or_docs() -> None:
    extra = {k for k in FRAGMENT if k.startswith("yarnctl.")} - set(JAVA_PROPS)
    assert not extra, f"in yarn-site.shim.xml but unknown to ShimConfig.java: {extra}"
    for doc, rows in DOCS.items():
        assert not set(rows) - set(JAVA_PROPS), f"{doc}: {set(rows) - set(JAVA_PROPS)}"
    for doc, names in MENTIONED.items():
        assert names <= set(JAVA_PROPS), f"{doc} mentions unknown {names - set(JAVA_PROPS)}"


@pytest.mark.parametrize("table,row", [
    ("docs/deploy.md", "| `yarnctl.shim.deadline-ms` | `25` |"),
    ("docs/deploy.md", "| `yarnctl.shim.deadline-msec` | `10` |"),
], ids=["wrong-default", "unknown-name"])
def test_the_table_check_would_catch_a_drifted_row(table: str, row: str) -> None:
    text = (ROOT / table).read_text().replace("| `yarnctl.shim.deadline-ms` | `10` |", row)
    rows = dict(_ROW.findall(text))
    drifted = {k for k in set(rows) | set(JAVA_PROPS) if rows.get(k) != JAVA_PROPS.get(k)}
    assert drifted
