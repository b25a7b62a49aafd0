"""`yarnctl cluster up|status|down`: a local Hadoop 2.7.7 cluster with the shim, from Maven-resolved jars."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's subcommands to `sub`; return their handlers by name."""
    return {}
