"""Strict JSON for people's tools: no NaN or Infinity token."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

from yarnctl import jsonout


def _strict(text: str) -> object:
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the output"))


def test_numbers_not_finite_become_null_or_inf_at_any_depth() -> None:
    doc = {"mean": math.nan, "cap": math.inf, "floor": -math.inf, "xs": (1, 2.5, [math.nan, np.float64("inf")]),
           "ok": 0.25, "n": 3, "name": "inf", "none": None, "flag": True}
    out = io.StringIO()
    jsonout.dump(doc, out)
    assert out.getvalue().endswith("}\n")
    assert _strict(out.getvalue()) == {"mean": None, "cap": "inf", "floor": "-inf", "xs": [1, 2.5, [None, "inf"]],
                                       "ok": 0.25, "n": 3, "name": "inf", "none": None, "flag": True}


def test_dumps_passes_json_arguments_through() -> None:
    assert jsonout.dumps({"b": 1, "a": math.nan}, sort_keys=True, separators=(",", ":")) == '{"a":null,"b":1}'
    assert jsonout.dumps({"at": object}, default=lambda o: "obj") == '{"at": "obj"}'
