"""Offline replay of a decision log: what another policy would have decided on the same calls."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarnctl.bridge.decisionlog import DecisionLogError, LogReader
from yarnctl.bridge.mirror import Mirror, MirrorMismatch
from yarnctl.bridge.response import response_from_doc, to_decision
from yarnctl.bridge.swap import decision_rows
from yarnctl.bridge.wire import WireError, request_from_doc
from yarnctl.engine import Engine
from yarnctl.policies.contract import Policy

NOT_SIMULATED = ("consequences are not simulated: every call is replayed on the state the cluster reached "
                 "under the logged decisions, so later calls do not reflect what the replayed policy "
                 "would have changed")


@dataclass
class ReplayReport:
    """What a replay found: calls compared, calls that differ and containers assigned per app."""

    log: str
    policy: str
    logged_policies: list[str]
    replayed: int = 0
    differ: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    logged_containers: Counter[str] = field(default_factory=Counter)
    replay_containers: Counter[str] = field(default_factory=Counter)
    truncated: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        apps = sorted(set(self.logged_containers) | set(self.replay_containers))
        return {
            "log": self.log, "policy": self.policy, "logged_policies": self.logged_policies,
            "calls_replayed": self.replayed, "calls_differing": self.differ, "calls_skipped": dict(self.skipped),
            "containers": {"logged": sum(self.logged_containers.values()),
                           "replayed": sum(self.replay_containers.values())},
            "per_app": {a: {"logged": self.logged_containers[a], "replayed": self.replay_containers[a]}
                        for a in apps},
            "truncated": self.truncated, "note": NOT_SIMULATED,
        }


def replay(path: Path, policy: Policy) -> ReplayReport:
    """Rebuild the mirror from every logged request and compare `policy` with the logged decisions."""
    reader = LogReader(path)
    mirror, engine = Mirror(), Engine(policy)
    report = ReplayReport(str(path), policy.name, [])
    seen_policies: dict[str, None] = {}
    first_bad = ""
    for lineno, rec in enumerate(reader, 1):
        seen_policies[str(rec.get("policy"))] = None
        req_doc = rec["req"]
        try:
            if not isinstance(req_doc, dict):  # the server could not parse it either
                raise WireError("req", "not a JSON object")
            req = request_from_doc(req_doc)
        except WireError as e:
            report.skipped["bad request"] += 1
            first_bad = first_bad or f"record {lineno}: {e}"
            continue
        try:
            mirror.apply(req)
        except MirrorMismatch:
            report.skipped["resync"] += 1
            continue
        if rec["outcome"] != "ok":  # the shim decided natively; its allocations arrive as alloc rows
            report.skipped[str(rec["outcome"])] += 1
            continue
        try:
            if not isinstance(rec["resp"], dict):
                raise WireError("resp", "not a JSON object")
            logged = to_decision(response_from_doc(rec["resp"]), req.seq, req.node)
        except WireError as e:
            raise DecisionLogError(f"{path}: record {lineno}: logged response: {e}") from None
        mine = engine.decide(mirror.snapshot(req.t_ms / 1000), req.node).accepted
        report.replayed += 1
        report.differ += decision_rows(mine) != decision_rows(logged)
        for a in logged.assignments:
            report.logged_containers[a.app_id] += a.count
        for a in mine.assignments:
            report.replay_containers[a.app_id] += a.count
    if reader.records == 0:
        raise DecisionLogError(f"{path}: no decision log records")
    if report.replayed == 0:  # nothing was compared: not a report worth exit 0
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(report.skipped.items()))
        raise DecisionLogError(f"{path}: none of its {reader.records} records could be replayed (skipped {skipped})"
                               + (f"; the first unreadable request: {first_bad}" if first_bad else ""))
    report.truncated = reader.truncated
    report.logged_policies = list(seen_policies)
    return report
