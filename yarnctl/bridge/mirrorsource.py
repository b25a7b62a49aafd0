"""Control-loop observations from the shim's own reports, for `yarnctl serve` without an RM address."""

from __future__ import annotations

import dataclasses

from yarnctl.bridge.service import PolicyService
from yarnctl.errors import RMError
from yarnctl.model import Observation
from yarnctl.rm.observe import Reading


class MirrorSource:
    """Observations built from the last snapshot the shim sent: allocations and asks, no usage, no seconds.

    Without --rm a tunable policy still ticks (DRESS moves δ from pending demand and releases), but
    what needs the RM's REST API or the NodeManagers (H-MRF's memorySeconds, measured usage for
    feedback/opera) stays unknown, and the observation says so (`usage_measured` False).
    """

    where = "the shim's heartbeats (no RM REST API)"

    def __init__(self, service: PolicyService) -> None:
        self.service = service

    def read(self) -> Reading:
        """The last decided call's snapshot as an observation (an empty one before the first heartbeat)."""
        snap, awaiting = self.service.cluster_now()  # together: a full sync may land between two reads
        if awaiting:
            # nothing new to show until the shim's full sync: a stale tick, never an empty cluster (which a policy
            # would read as every node gone, as usage feedback's estimator does)
            raise RMError("the shim's state in this server awaits its full sync after a failed call; "
                          "the policy keeps its last tuning")
        obs = Observation.build(0.0, [], []) if snap is None else Observation.from_snapshot(snap)
        # without the snapshot, which `PolicyService.tune` gives the policy again: the loop keeps its last reading,
        # and a snapshot kept between calls would make the mirror copy each map it writes (`ClusterState._own`)
        return Reading(dataclasses.replace(obs, snapshot=None), None)

    def close(self) -> None:
        """Nothing to close: the mirror belongs to the service."""
