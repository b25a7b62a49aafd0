"""Edit a Hadoop site file from the shell: what docs/deploy.md uses to drop the shim into a yarn-site.xml.

    python -m yarnctl.cluster.siteconf merge SITE FRAGMENT [NAME=VALUE ...]   add FRAGMENT's properties
                                                                             (replacing same-named ones),
                                                                             then set NAME=VALUE
    python -m yarnctl.cluster.siteconf set SITE NAME=VALUE [...]              set (or add) properties
    python -m yarnctl.cluster.siteconf get SITE NAME                          print one property's value

SITE is rewritten in place (through a temporary file, keeping its mode); comments and the other
properties stay as they were. Errors are one line on stderr, exit 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import unescape

from yarnctl.cluster.conf import merge, properties, set_values
from yarnctl.errors import ClusterError

USAGE = ("usage: python -m yarnctl.cluster.siteconf merge SITE FRAGMENT [NAME=VALUE ...] | "
         "set SITE NAME=VALUE [...] | get SITE NAME")


def assignments(pairs: Sequence[str]) -> dict[str, str]:
    """NAME=VALUE words as a dict; ClusterError naming a word without '='."""
    out = {}
    for p in pairs:
        name, sep, value = p.partition("=")
        if not sep or not name:
            raise ClusterError(f"expected NAME=VALUE, got {p!r}")
        out[name] = value
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise ClusterError(f"{path}: {e.strerror}") from None


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".yarnctl-tmp")
    tmp.write_text(text)
    os.chmod(tmp, path.stat().st_mode & 0o7777)
    tmp.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: see the module docstring."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if len(args) >= 3 and args[0] == "merge":
            site = Path(args[1])
            text = set_values(merge(_read(site), _read(Path(args[2]))), assignments(args[3:]))
            _write(site, text)
        elif len(args) >= 3 and args[0] == "set":
            site = Path(args[1])
            _write(site, set_values(_read(site), assignments(args[2:])))
        elif len(args) == 3 and args[0] == "get":
            props = properties(_read(Path(args[1])))
            if args[2] not in props:
                raise ClusterError(f"{args[1]}: no property {args[2]}")
            print(unescape(props[args[2]]))
        else:
            print(USAGE, file=sys.stderr)
            return 2
    except ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
