"""Where the running policy server is: its status file (given, the local cluster's, or the default one)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from yarnctl.bridge.defaults import DEFAULT_STATUS_FILE, DEFAULT_TOKEN_FILE
from yarnctl.errors import ConfigError

FRESH_S = 5.0  # a status file rewritten every second is stale after this long: its server is gone


def local_cluster() -> tuple[list[str], Path | None]:
    """The local cluster's RM URLs and the active RM's serve status file, when `yarnctl cluster up` left one running."""
    from yarnctl.cluster.local import find_running
    from yarnctl.errors import ClusterError

    cluster = find_running()
    if cluster is None:
        return [], None
    try:
        return cluster.info().rm_urls, cluster.active_status_file()
    except ClusterError:  # stopped between the two reads
        return [], None


def running_server(path: Path | None) -> dict[str, Any]:
    """The status document of the running `yarnctl serve` (the given file, the local cluster's, or the default one)."""
    path = path or local_cluster()[1] or DEFAULT_STATUS_FILE.expanduser()
    doc, _ = read_status(path)
    if doc is None and path.is_file():  # there but not JSON: "stopped or older" would send the reader astray
        raise ConfigError(f"{path}: not the status file of `yarnctl serve` (unreadable, or not a JSON object)")
    if doc is None or not doc.get("running"):
        raise ConfigError(f"no running yarnctl serve at {path} (its status file is missing, stopped or older than "
                          f"{FRESH_S:g} s); give --serve-status FILE")
    check_status(doc, str(path))
    return doc


def check_status(doc: dict[str, Any], source: str, required: tuple[str, ...] = ("pid", "policy", "waiting")) -> None:
    """WorkloadError naming `source` and the field when a status document lacks a `required` field or has one wrong."""
    from yarnctl.sim.workload.reader import Reader, show

    r = Reader(source)
    for key in required:
        if key not in doc:
            raise r.fail(key, "missing; is this the status file of `yarnctl serve`?")
    if "pid" in doc:
        r.integer(doc["pid"], "pid")
    if "policy" in doc:
        r.string(doc["policy"], "policy")
    for app, reasons in r.mapping(doc.get("waiting") or {}, "waiting").items():
        if not isinstance(reasons, list):
            raise r.fail(f"waiting.{app}", f"expected a list of reasons, got {show(reasons)}")
        for i, why in enumerate(reasons):
            r.required(why, f"waiting.{app}[{i}]", ("at", "node", "code", "text"))
            r.number(why["at"], f"waiting.{app}[{i}].at")
    for key in ("control", "token_file"):  # null: no control socket, or the default token file
        if doc.get(key) is not None and (not isinstance(doc[key], str) or not doc[key]):
            raise r.fail(key, f"expected a path or null, got {show(doc[key])}")
    for key in ("calls", "errors", "rejected"):
        if doc.get(key) is not None:
            r.integer(doc[key], key, minimum=0)


def read_status(path: Path | None) -> tuple[dict[str, Any] | None, str | None]:
    """The status document at `path` marked running or not, and the path; (None, path) when unreadable."""
    if path is None:
        return None, None
    if not path.is_file():
        return None, str(path)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None, str(path)
    if not isinstance(doc, dict):
        return None, str(path)
    # rewritten every second while serving: an old file or a "stopped" stamp means no server now
    doc["running"] = "stopped" not in doc and time.time() - path.stat().st_mtime < FRESH_S
    return doc, str(path)


def control_target(args: Any) -> tuple[Path, str, dict[str, Any] | None]:
    """The control socket and token of `--control-socket`/`--token-file`, else those the running server's status
    file names (`--serve-status`, the local cluster's, the default); with that status document when read."""
    from yarnctl.bridge.server import read_token

    socket_path, token_file, doc = args.control_socket, args.token_file, None
    if socket_path is None:
        doc = running_server(args.serve_status)
        if not doc.get("control"):
            raise ConfigError(f"the policy server (pid {doc.get('pid')}) runs without a control socket "
                              f"(--no-control, or a yarnctl older than hot swap): restart it without --no-control")
        socket_path = Path(doc["control"])
        token_file = token_file or Path(doc.get("token_file") or DEFAULT_TOKEN_FILE)
    return socket_path, read_token(token_file or DEFAULT_TOKEN_FILE), doc
