"""`yarnctl serve` and `yarnctl replay`: the py4j policy server and offline replay of its decision log."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's subcommands to `sub`; return their handlers by name."""
    return {}
