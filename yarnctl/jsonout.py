"""JSON for people's tools: strict, with no NaN or Infinity token (JSON.parse refuses them, jq 1.6 misreads one).

A number not defined (NaN: a mean of nothing, an estimate not made yet) is written as null; an
infinite one as the string "inf" or "-inf", which is how a parameter is given on the command line
(`--param hmrf.window_s=inf`). Python's json writes both as bare NaN/Infinity unless told not to.
"""

from __future__ import annotations

import json
import math
import sys
from typing import IO, Any


def plain(v: Any) -> Any:
    """`v` with each float that is not finite replaced (NaN by None, ±inf by "inf"/"-inf"), in dicts, lists, tuples."""
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def dumps(doc: Any, **kwargs: Any) -> str:
    """`doc` as strict JSON text (json.dumps's keyword arguments apply)."""
    return json.dumps(plain(doc), allow_nan=False, **kwargs)


def dump(doc: Any, out: IO[str] | None = None, **kwargs: Any) -> None:
    """Write `doc` as strict JSON, indented by one, and a newline, to `out` (standard output by default)."""
    kwargs.setdefault("indent", 1)
    (out or sys.stdout).write(dumps(doc, **kwargs) + "\n")
