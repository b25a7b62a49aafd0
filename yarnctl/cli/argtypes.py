"""Flag value types shared by the subcommands: argparse refuses a bad value on one line, before any work starts."""

from __future__ import annotations

import argparse
import math
import threading
from pathlib import Path


def seconds(text: str) -> float:
    """A finite number of seconds > 0 (timeouts, intervals)."""
    value = _number(text, "a number of seconds")
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {text}")
    return _at_most(value, text)


def gap(text: str) -> float:
    """A finite number of seconds >= 0 (a gap between submissions: 0 submits at once)."""
    value = _number(text, "a number of seconds")
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds >= 0, got {text}")
    return _at_most(value, text)


def milliseconds(text: str) -> float:
    """A finite number of milliseconds > 0 (a latency limit)."""
    value = _number(text, "a number of milliseconds")
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a finite number of milliseconds > 0, got {text}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 for any free one."""
    value = _integer(text, "a port")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port in 0-65535, got {text}")
    return value


def positive(text: str) -> int:
    """An integer >= 1 (counts, milliseconds)."""
    value = _integer(text, "an integer")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text}")
    return value


def percent(text: str) -> float:
    """A finite percentage >= 0 (an error bound)."""
    value = _number(text, "a percentage")
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite percentage >= 0, got {text}")
    return value


LONGEST_S = threading.TIMEOUT_MAX  # a wait past it overflows (status --watch 1e300 was a traceback)


def _at_most(value: float, text: str) -> float:
    if value > LONGEST_S:
        raise argparse.ArgumentTypeError(f"expected at most {LONGEST_S:.3g} seconds, got {text}")
    return value


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


def _integer(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


def path(text: str) -> Path:
    """A file or directory path; an empty one is refused (Path("") is the working directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r}")
    return Path(text)
