"""Flag value types shared by the subcommands: argparse refuses a bad value on one line, before any work starts."""

from __future__ import annotations

import argparse
import math
import threading
from collections.abc import Callable
from pathlib import Path


def _amount(noun: str, *, zero: bool, longest: float = math.inf) -> Callable[[str], float]:
    """A type for a finite `noun` ("number of seconds") > 0, or >= 0 with `zero`, and at most `longest`."""
    def parse(text: str) -> float:
        value = _number(text, f"a {noun}")
        if not (0 <= value if zero else 0 < value) or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite {noun} {'>=' if zero else '>'} 0, got {text}")
        if value > longest:
            raise argparse.ArgumentTypeError(f"expected at most {longest:.3g} {noun.split()[-1]}, got {text}")
        return value

    return parse


LONGEST_S = threading.TIMEOUT_MAX  # a wait past it overflows (status --watch 1e300 was a traceback)
seconds = _amount("number of seconds", zero=False, longest=LONGEST_S)  # timeouts, intervals
gap = _amount("number of seconds", zero=True, longest=LONGEST_S)  # between submissions: 0 submits at once
milliseconds = _amount("number of milliseconds", zero=False)  # a latency limit
percent = _amount("percentage", zero=True)  # an error bound


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
