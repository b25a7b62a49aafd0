"""ResourceManager web addresses from a yarn-site.xml, with or without RM HA.

Keys (Hadoop 2.7 YarnConfiguration): `yarn.resourcemanager.ha.enabled`, `yarn.resourcemanager.ha.rm-ids`,
`yarn.resourcemanager.webapp.address[.<rm-id>]` (default `<hostname>:8088`),
`yarn.resourcemanager.webapp.https.address[.<rm-id>]` (default `<hostname>:8090`, used when
`yarn.http.policy` is HTTPS_ONLY), `yarn.resourcemanager.hostname[.<rm-id>]`. `${name}` references
to other properties of the same file are expanded.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from yarnctl.errors import RMConfigError

_VAR = re.compile(r"\$\{([^}]+)\}")


def read_properties(path: Path | str) -> dict[str, str]:
    """name -> value of a Hadoop *-site.xml; RMConfigError naming the file when it cannot be read."""
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError) as e:
        raise RMConfigError(f"{path}: cannot read as a Hadoop site file ({e})") from None
    props = {}
    for p in tree.getroot().iter("property"):
        name, value = p.findtext("name"), p.findtext("value")
        if name:
            props[name.strip()] = (value or "").strip()
    return props


def _expand(value: str, props: dict[str, str], depth: int = 0) -> str:
    if depth > 20:
        return value
    out = _VAR.sub(lambda m: props.get(m.group(1), m.group(0)), value)
    return out if out == value else _expand(out, props, depth + 1)


def rm_urls_from_props(props: dict[str, str], source: str = "yarn-site.xml") -> list[str]:
    """The RM web base URL(s) the properties describe, in rm-ids order."""
    https = props.get("yarn.http.policy", "HTTP_ONLY").strip().upper() == "HTTPS_ONLY"
    scheme, key, port = ("https", "yarn.resourcemanager.webapp.https.address", 8090) if https else \
        ("http", "yarn.resourcemanager.webapp.address", 8088)

    def url_for(suffix: str) -> str:
        addr = _expand(props.get(key + suffix, ""), props)
        host = _expand(props.get("yarn.resourcemanager.hostname" + suffix, ""), props)
        if not addr:
            if not host:
                raise RMConfigError(f"{source}: neither {key}{suffix} nor yarn.resourcemanager.hostname{suffix} is set")
            addr = f"{host}:{port}"
        h, _, p = addr.rpartition(":")
        if not h or not p.isdigit():
            raise RMConfigError(f"{source}: {key}{suffix} = {addr!r} is not host:port")
        if h == "0.0.0.0" and host:  # a bind-all address: the hostname says where to connect
            h = host
        return f"{scheme}://{h}:{p}"

    if props.get("yarn.resourcemanager.ha.enabled", "false").strip().lower() != "true":
        return [url_for("")]
    ids = [i.strip() for i in props.get("yarn.resourcemanager.ha.rm-ids", "").split(",") if i.strip()]
    if not ids:
        raise RMConfigError(f"{source}: yarn.resourcemanager.ha.enabled is true but yarn.resourcemanager.ha.rm-ids is empty")
    return [url_for("." + i) for i in ids]


def rm_urls_from_yarn_site(path: Path | str) -> list[str]:
    """The RM web base URL(s) of a yarn-site.xml (one without HA, one per rm-id with it)."""
    return rm_urls_from_props(read_properties(path), str(path))
