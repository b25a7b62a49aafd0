"""Helpers for bridge tests: the shared wire fixtures in schema/fixtures and a driven PolicyService."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "schema" / "wire.schema.json"
FIXTURES = ROOT / "schema" / "fixtures"
STATE = ["request-full.json", "request-delta.json", "request-delta-2.json"]

APP1 = "application_1700000000000_0001"
APP2 = "application_1700000000000_0002"
C1 = "container_1700000000000_0001_01_000001"
C2 = "container_1700000000000_0001_01_000002"
C3 = "container_1700000000000_0002_01_000001"


def text(name: str) -> str:
    """The fixture file's text exactly as stored (multi-line JSON)."""
    return (FIXTURES / name).read_text()


def doc(name: str) -> Any:
    """The fixture file, decoded."""
    return json.loads(text(name))


def compact(d: Any) -> str:
    """`d` as the shim sends it: one line, no spaces."""
    return json.dumps(d, separators=(",", ":"))
