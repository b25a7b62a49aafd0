"""A policy's saved state on disk, so `yarnctl serve` restarts without forgetting history (H-MRF accounting).

The file is one JSON object {"format": 1, "policy": name, "saved": epoch s, "state": {...}},
replaced atomically (temp file + rename) so a crash mid-write leaves the previous version.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from yarnctl.policies.contract import Stateful
from yarnctl.errors import ConfigError

log = logging.getLogger(__name__)

FORMAT = 1


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on the state file for read-compare-write, shared by every policy server using it (flock)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def save_state(path: Path, policy_name: str, state: dict[str, Any]) -> bool:
    """Write `state` for `policy_name` to `path` atomically; False (logged) when the disk refuses."""
    doc = {"format": FORMAT, "policy": policy_name, "saved": time.time(), "state": state}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
        return True
    except OSError as e:  # the server keeps deciding; the next save tries again
        log.warning("cannot save policy state to %s: %s", path, e.strerror or e)
        return False


def load_state(path: Path, policy_name: str, policy: Stateful) -> bool:
    """Restore `policy` from `path` if it exists (False when it does not); ConfigError naming what is wrong."""
    if not path.exists():
        return False
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the policy state: {e.strerror or e}") from None
    except ValueError as e:
        raise ConfigError(f"{path}: not JSON ({e}); move it away to start with no history") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("state"), dict):
        raise ConfigError(f"{path}: not a yarnctl policy state file (format {FORMAT}); move it away to start "
                          f"with no history")
    if doc.get("policy") != policy_name:
        raise ConfigError(f"{path}: holds the state of policy {doc.get('policy')!r}, not {policy_name!r}; give "
                          f"--state-file another path")
    try:
        policy.load_state(doc["state"])
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{path}: policy {policy_name} cannot load its state: {e}; move it away to start with "
                          f"no history") from None
    log.info("policy %s: state restored from %s (saved %.0f s ago)", policy_name, path,
             time.time() - float(doc.get("saved", time.time())))
    return True
