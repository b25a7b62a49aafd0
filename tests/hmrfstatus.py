"""What a live policy server reports of H-MRF's accounting, for the restart and failover tests."""

from __future__ import annotations

import json
from pathlib import Path


def accumulated_vcore_seconds(status_file: Path) -> float:
    """H-MRF's accumulated vcore-seconds over every queue, as the policy server last reported them."""
    tuning = json.loads(status_file.read_text())["tuning"]
    return sum(v for k, v in tuning.items() if k.startswith("hmrf_accumulated_vcore_seconds"))
