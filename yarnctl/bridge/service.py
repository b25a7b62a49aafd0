"""The object the shim calls once per heartbeat over py4j: request in, validated decision out."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from bisect import bisect_left
from dataclasses import dataclass, field
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from yarnctl.bridge.decisionlog import DecisionLog
from yarnctl.bridge.mirror import Mirror, MirrorMismatch
from yarnctl.bridge.response import encode_decision, encode_error, encode_resync
from yarnctl.bridge.statefile import load_state, locked, save_state
from yarnctl.bridge.waits import WaitBook
from yarnctl.bridge.wire import WireError, parse_request
from yarnctl.engine import Engine
from yarnctl.policies.contract import Policy, is_stateful
from yarnctl.model import Assignment, ClusterSnapshot, Decision, Kill, NodeId, Observation
from yarnctl.errors import ConfigError

log = logging.getLogger(__name__)

# histogram bucket upper bounds in µs; the last bucket is everything slower
BUCKETS_US: tuple[int, ...] = (25, 50, 100, 200, 300, 500, 1000, 2000, 5000, 10000, 50000)
MAX_REQUEST_CHARS = 64 << 20  # a full request of ~100k containers is ~10 MB; beyond this is a bug
TAKEOVER_IDLE_S = 3.0  # a call after this long without any may be the first as the active RM's server


@dataclass
class ServiceStats:
    """Counters and a latency histogram of PolicyService.decide."""

    calls: int = 0
    ok: int = 0
    resync: int = 0
    errors: int = 0
    policy_errors: int = 0
    explain_errors: int = 0  # calls whose waiting apps could not be explained (logged; the decision stands)
    # by RejectCode value, as the shim counts them: the engine's own counter, shared
    rejected_by: Mapping[str, int] = field(default_factory=dict)
    assigned: int = 0
    full_syncs: int = 0
    auth_failures: int = 0  # connections refused for a wrong or missing token (a probe, a stale shim, an intruder)
    latency_us: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS_US) + 1))
    latency_sum_us: int = 0  # the histogram's sum, for Prometheus' rate(sum)/rate(count)
    last_call_s: float | None = None  # wall-clock time.time() of the last call's end; None before any

    @property
    def rejected(self) -> int:
        """Decision items the validation refused."""
        return sum(self.rejected_by.values())

    def observe(self, us: int) -> None:
        """Count one call's latency."""
        self.latency_us[bisect_left(BUCKETS_US, us)] += 1
        self.latency_sum_us += us

    def quantile_us(self, q: float) -> int | None:
        """The bucket bound below which a fraction `q` of calls finished (None before any call)."""
        total = sum(self.latency_us)
        if not total:
            return None
        seen = 0
        for i, n in enumerate(self.latency_us):
            seen += n
            if seen >= q * total:
                return BUCKETS_US[i] if i < len(BUCKETS_US) else -1
        return -1

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able counters, the histogram as {"le_µs": count} and bucket p50/p99."""
        return {
            "calls": self.calls, "ok": self.ok, "resync": self.resync, "errors": self.errors,
            "policy_errors": self.policy_errors, "explain_errors": self.explain_errors, "rejected": self.rejected,
            "rejected_by": dict(self.rejected_by),
            "assigned": self.assigned,
            "full_syncs": self.full_syncs, "auth_failures": self.auth_failures,
            "latency_us": {**{str(b): n for b, n in zip(BUCKETS_US, self.latency_us)},
                           "inf": self.latency_us[-1]},
            "p50_us_le": self.quantile_us(0.5), "p99_us_le": self.quantile_us(0.99),
        }


class _Recording:
    """Wraps a policy to remember its last exception (Engine logs and swallows it)."""

    def __init__(self, policy: Policy) -> None:
        self.policy, self.name, self.failure = policy, policy.name, ""
        # the wrapped policy's capability flags, as the contract declares them
        self.time_dependent, self.resizes_nodes = policy.time_dependent, policy.resizes_nodes

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.policy, attr)  # tune(), tuning() and any other policy attribute pass through

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        try:
            return self.policy.decide(snap, node_id)
        except Exception as e:
            self.failure = f"policy {self.name} raised {type(e).__name__}: {e}"[:500]
            raise


class PolicyService:
    """PolicyService.decide(String) -> String for the shim: parse, mirror, snapshot, Engine, encode."""

    class Java:
        implements = ["io.yarnctl.shim.PolicyService"]

    def __init__(self, policy: Policy, decision_log: DecisionLog | None = None,
                 max_request_chars: int = MAX_REQUEST_CHARS, max_am_share: float | None = None,
                 state_file: Path | None = None, waits: WaitBook | None = None) -> None:
        self._policy = _Recording(policy)
        # why the oldest pending apps wait, refreshed beside the decisions (`yarnctl explain`), from the last
        # decided call's snapshot, node and accepted decision
        self.waits = waits if waits is not None else WaitBook()
        self._decided: tuple[ClusterSnapshot, NodeId, Decision] | None = None
        self.policy_name: str = policy.name
        self.engine = Engine(self._policy, max_am_share=max_am_share)
        self.mirror = Mirror()
        self.stats = ServiceStats(rejected_by=self.engine.rejected_by)
        # the snapshot the policy saw on the last decided call: immutable, so scrapes read it lock-free
        self.last_snapshot: ClusterSnapshot | None = None
        self.decision_log = decision_log
        self.max_request_chars = max_request_chars
        self._last_seq = 0
        # the policy's tuning values, replaced whole when the control loop changes them (lock-free reads)
        self.tuning: dict[str, float] = self.engine.tuning()
        # A stateful policy's saved history; the policy servers of HA ResourceManagers share one file.
        # A server writes it only if it decided since its last save and nobody else wrote it since
        # (else it is the old active: its history is the stale one). A server that starts deciding
        # after an idle spell first takes the newer file its peer wrote and claims it at once by
        # writing it back, so the old active's later saves are refused. flock makes each
        # read-compare-write atomic between the servers.
        self.state_file = state_file if is_stateful(policy) else None
        self._state_mtime = _mtime(self.state_file)
        self._calls_saved = 0
        self._peer_wrote = False
        # py4j runs each Java connection on its own thread: a late call must not interleave with
        # the next one on the mirror
        self._lock = threading.Lock()

    def tune(self, obs: Observation) -> None:
        """Feed a control-loop observation to the policy, between heartbeats (never during one)."""
        with self._lock:
            if obs.snapshot is None:  # the RM's REST API has no container start times; the mirror has
                obs = dataclasses.replace(obs, snapshot=self.last_snapshot)
            changed = self.engine.tune(obs)
            # read every tick: values may also move in decide() (H-MRF's accounting), not only in tune()
            self.tuning = self.engine.tuning()
            if changed:
                log.info("policy %s tuned: %s", self.policy_name,
                         ", ".join(f"{k}={v:g}" for k, v in sorted(self.tuning.items())))

    def policy_state(self) -> dict[str, Any] | None:
        """The policy's saved state, taken between heartbeats (None for a stateless policy or a failing save)."""
        if not is_stateful(self.engine.policy):
            return None
        with self._lock:
            try:
                state = self.engine.policy.save_state()  # type: ignore[attr-defined]
                json.dumps(state)  # fail here, where it is logged, rather than half-way through the file write
            except Exception:
                log.exception("policy %s failed to save its state; keeping the last saved file", self.policy_name)
                return None
        return dict(state)

    def save_state_file(self) -> bool:
        """Write the policy's state if it decided since its last save and no other server wrote the file since; True when written."""
        if self.state_file is None or self.stats.calls == self._calls_saved:
            return False
        calls = self.stats.calls
        state = self.policy_state()
        if state is None:
            return False
        try:
            with locked(self.state_file):
                now = _mtime(self.state_file)
                if now is not None and now != self._state_mtime:
                    if not self._peer_wrote:
                        log.info("policy %s: another policy server saved %s since this one did; not overwriting "
                                 "it (this one's history is older)", self.policy_name, self.state_file)
                    self._peer_wrote = True
                    return False
                if not save_state(self.state_file, self.policy_name, state):
                    return False
                self._calls_saved, self._state_mtime = calls, _mtime(self.state_file)
        except OSError as e:  # the lock file: the server keeps deciding, the next save tries again
            log.warning("cannot lock %s: %s", self.state_file, e.strerror or e)
            return False
        return True

    def _adopt_newer_state(self) -> None:
        """Take the state file when another server wrote it since this one last did (an RM failover), and claim it."""
        assert self.state_file is not None
        try:
            with locked(self.state_file):
                mtime = _mtime(self.state_file)
                if mtime is None or mtime == self._state_mtime:
                    return
                self._state_mtime, self._peer_wrote = mtime, False
                try:
                    load_state(self.state_file, self.policy_name, self.engine.policy)  # type: ignore[arg-type]
                except ConfigError as e:  # keep deciding on the state we have
                    log.warning("policy %s: not taking over the saved state: %s", self.policy_name, e)
                    return
                log.info("policy %s: took over the state another policy server saved in %s", self.policy_name,
                         self.state_file)
                self.tuning = self.engine.tuning()
                # claim it (decide() holds the service lock: save the policy directly, not via policy_state)
                if save_state(self.state_file, self.policy_name, self.engine.policy.save_state()):  # type: ignore[attr-defined]
                    self._state_mtime, self._calls_saved = _mtime(self.state_file), self.stats.calls
        except OSError as e:
            log.warning("cannot lock %s: %s", self.state_file, e.strerror or e)

    def decide(self, request: str) -> str:
        """Answer one heartbeat; never raises (py4j would turn it into a Java exception)."""
        with self._lock:
            t0 = time.perf_counter_ns()
            seq, node, parsed = self._last_seq + 1, "", False
            if self.state_file is not None and (
                    self._peer_wrote or time.time() - (self.stats.last_call_s or 0.0) > TAKEOVER_IDLE_S):
                self._adopt_newer_state()
            rejected: list[list[str]] = []
            why: dict[str, str] = {}
            waiting: dict[str, dict[str, Any]] = {}
            try:
                if len(request) > self.max_request_chars:
                    raise WireError("request", f"{len(request)} characters, over the limit of {self.max_request_chars}")
                req = parse_request(request)
                seq, node, parsed = req.seq, req.node, True
                self._last_seq = seq
                self.mirror.apply(req)
                self.stats.full_syncs += req.full
                resp, outcome = self._decide(seq, node, req.t_ms, rejected, why)
            except MirrorMismatch as e:
                log.info("call %d from %s: resync: %s", seq, node, e)
                resp, outcome = encode_resync(seq), "resync"
                self.stats.resync += 1
            except WireError as e:
                if len(request) <= self.max_request_chars:  # not worth decoding megabytes of garbage again
                    seq = _seq_of(request, seq)
                self._last_seq = seq
                self.mirror.invalidate()  # the shim sends full state after any failed call
                log.warning("call %d: bad request: %s", seq, e)
                resp, outcome = encode_error(seq, f"bad request: {e}"), "error"
                self.stats.errors += 1
            except Exception as e:  # a bug here must not reach the RM: decide natively, count it
                self.mirror.invalidate()
                log.exception("call %d from %s: internal error", seq, node)
                resp, outcome = encode_error(seq, f"internal error: {type(e).__name__}: {e}"[:500]), "error"
                self.stats.errors += 1
            us = (time.perf_counter_ns() - t0) // 1000
            self.stats.calls += 1
            self.stats.observe(us)
            self.stats.last_call_s = time.time()
            if outcome == "ok":  # after the latency is taken: explaining is beside the decision, within a budget
                self._explain(seq, node, waiting)
            if self.decision_log is not None:
                self.decision_log.write(seq, node, self.policy_name, outcome, us, request, parsed, resp, rejected,
                                        why, waiting)
            return resp

    def _explain(self, seq: int, node: str, waiting: dict[str, dict[str, Any]]) -> None:
        """Why the oldest pending apps got nothing from the decision just made (WaitBook: when due, within its budget)."""
        decided = self._decided
        if decided is None:
            return
        before = self.engine.stats["explain_errors"]  # a policy's why_waiting that raised (the engine goes on)
        try:
            waiting.update((a, w.as_dict()) for a, w in self.waits.record(self.engine, *decided).items())
            self.stats.explain_errors += self.engine.stats["explain_errors"] - before
        except Exception:  # explaining is beside the decision: it must never cost one
            self.stats.explain_errors += 1
            log.exception("call %d from %s: explaining the waiting apps failed; the decision stands", seq, node)

    def _decide(self, seq: int, node: str, t_ms: int, rejected: list[list[str]],
                why: dict[str, str]) -> tuple[str, str]:
        self._policy.failure = ""
        self._decided = None
        before = self.engine.stats["policy_errors"]
        snap = self.mirror.snapshot(t_ms / 1000)
        self.last_snapshot = snap
        result = self.engine.decide(snap, node)
        if self.engine.stats["policy_errors"] != before:
            self.stats.policy_errors += 1
            self.stats.errors += 1
            # the mirror is still right; the answer says "decide natively" and the shim resyncs next
            return encode_error(seq, self._policy.failure or f"policy {self.policy_name} returned no Decision"), \
                "error"
        for r in result.rejected:
            item = r.item
            # [row key, what it named, code, particulars]: the code is the shim's vocabulary (RejectCode)
            if isinstance(item, Assignment):
                rejected.append(["a", item.app_id, r.code.value, r.detail])
            elif isinstance(item, Kill):
                rejected.append(["k", item.container_id, r.code.value, r.detail])
            else:
                rejected.append(["r", item.node_id, r.code.value, r.detail])
        why.update(result.accepted.reasons)
        self._decided = (snap, node, result.accepted)
        self.stats.assigned += result.accepted.containers()
        self.stats.ok += 1
        return encode_decision(seq, result.accepted), "ok"


def _seq_of(request: str, fallback: int) -> int:
    """The request's seq when it can be read, else the seq the shim most likely sent (>= 1 per the schema)."""
    try:
        seq = json.loads(request).get("seq")
    except Exception:
        return max(fallback, 1)
    return seq if type(seq) is int and seq >= 1 else max(fallback, 1)


def _mtime(path: Path | None) -> float | None:
    """The file's modification time (ns precision), None when there is no file."""
    try:
        return path.stat().st_mtime_ns / 1e9 if path is not None else None
    except OSError:
        return None
