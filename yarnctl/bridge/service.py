"""The object the shim calls once per heartbeat over py4j: request in, validated decision out."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from bisect import bisect_left
from contextlib import contextmanager
from dataclasses import dataclass, field
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from yarnctl.bridge.decisionlog import DecisionLog
from yarnctl.bridge.livestate import state_doc
from yarnctl.bridge.mirror import Mirror, MirrorMismatch
from yarnctl.bridge.response import encode_decision, encode_error, encode_resync
from yarnctl.bridge.statefile import load_state, locked, save_state
from yarnctl.bridge.swap import Candidate, SwapEvent, SwapPlan, decision_rows, event_text
from yarnctl.bridge.waits import WaitBook
from yarnctl.bridge.wire import WireError, parse_request
from yarnctl.collector import FrozenHeap, collector_paused
from yarnctl.engine import Engine, Validation
from yarnctl.policies.contract import Policy, is_stateful
from yarnctl.model import Assignment, ClusterSnapshot, Decision, Kill, NodeId, Observation
from yarnctl.errors import ConfigError

log = logging.getLogger(__name__)

# histogram bucket upper bounds in µs; the last bucket is everything slower
BUCKETS_US: tuple[int, ...] = (25, 50, 100, 200, 300, 500, 1000, 2000, 5000, 10000, 50000)
MAX_REQUEST_CHARS = 64 << 20  # a full request of ~100k containers is ~10 MB; beyond this is a bug
# cheap beside-work (a delta's decision-log row) left for the next call is done by the worker within this
BESIDE_IDLE_S = 0.05
# a request this long (a full sync of a large cluster) makes a decision-log row that takes milliseconds to write
BESIDE_LARGE_CHARS = 1 << 16
WAIT_NOTED_US = 1000  # a call that waited this long for the lock is counted, and its wait logged
TUNE_NOTED_US = 5000  # a tune that held the lock this long is logged: heartbeats waited behind it
SWAP_EVENTS_KEPT = 20  # the latest swap events the status file lists
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
    tune_errors: int = 0  # control-loop observations the serving policy failed to take in (across swaps)
    waited: int = 0  # calls that waited WAIT_NOTED_US or more for the service lock (another call, a tune, a swap)
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
            "waited": self.waited, "tune_errors": self.tune_errors,
            "rejected_by": dict(self.rejected_by),
            "assigned": self.assigned,
            "full_syncs": self.full_syncs, "auth_failures": self.auth_failures,
            "latency_us": {**{str(b): n for b, n in zip(BUCKETS_US, self.latency_us)},
                           "inf": self.latency_us[-1]},
            "p50_us_le": self.quantile_us(0.5), "p99_us_le": self.quantile_us(0.99),
        }


class Recording:
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


@dataclass(frozen=True, slots=True)
class Active:
    """The policy that decides, with its engine, the file its history lives in and the parameters it was given."""

    policy: Recording
    engine: Engine
    state_file: Path | None
    params: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Answered:
    """One answered call, as the work beside its answer (shadow, explanation, decision-log row) needs it."""

    seq: int
    node: str
    serving: bool  # the serving policy decided it (not a candidate's canary)
    decided_by: str
    outcome: str
    us: int
    t_ms: int  # when the answer went back: the decision-log row's time, whenever it is written
    request: str
    parsed: bool
    response: str
    rejected: list[list[str]]
    why: dict[str, str]
    seen: tuple[ClusterSnapshot, NodeId] | None
    decided: tuple[ClusterSnapshot, NodeId, Decision] | None
    waited_us: int | None


class PolicyService:
    """PolicyService.decide(String) -> String for the shim: parse, mirror, snapshot, Engine, encode."""

    class Java:
        implements = ["io.yarnctl.shim.PolicyService"]

    def __init__(self, policy: Policy, decision_log: DecisionLog | None = None,
                 max_request_chars: int = MAX_REQUEST_CHARS, max_am_share: float | None = None,
                 state_file: Path | None = None, waits: WaitBook | None = None,
                 state_path: Callable[[Policy], Path | None] | None = None,
                 params: Mapping[str, Any] | None = None, beside_thread: bool = False) -> None:
        # why the oldest pending apps wait, refreshed beside the decisions (`yarnctl explain`), from the last
        # decided call's snapshot, node and accepted decision
        self.waits = waits if waits is not None else WaitBook()
        self._decided: tuple[ClusterSnapshot, NodeId, Decision] | None = None
        self._seen: tuple[ClusterSnapshot, NodeId] | None = None  # this call's snapshot and node, once built
        self.max_am_share = max_am_share
        self.mirror = Mirror()
        # decision items refused, by RejectCode value: one count across policy swaps
        self.stats = ServiceStats(rejected_by=Counter())
        self._full_syncs = lambda: self.stats.full_syncs  # for collector_paused, made once: decide() is the hot path
        self._heap = FrozenHeap()
        # the last decided call's time, store and version: between calls the mirror holds what that call's policy
        # saw (`last_snapshot`); and that state, kept when a failed call left it untouched, until the next full sync
        self._last_t_s: float | None = None
        self._last_state: object = None
        self._last_version = -1
        self._gap: ClusterSnapshot | None = None
        self.decision_log = decision_log
        self.max_request_chars = max_request_chars
        self._last_seq = 0
        # where a policy swapped in keeps its history (None: it keeps none across restarts)
        self.state_path = state_path or (lambda p: None)
        # A stateful policy's saved history; the policy servers of HA ResourceManagers share one file.
        # A server writes it only if it decided since its last save and nobody else wrote it since
        # (else it is the old active: its history is the stale one). A server that starts deciding
        # after an idle spell first takes the newer file its peer wrote and claims it at once by
        # writing it back, so the old active's later saves are refused. flock makes each
        # read-compare-write atomic between the servers.
        active = Recording(policy)
        self._install(Active(active, self._engine(active), state_file, dict(params or {})))
        # a hot swap (bridge/swap.py): the policy under check, the one the last swap replaced, what happened
        self.candidate: Candidate | None = None
        self.previous: Active | None = None
        self.swaps: deque[dict[str, Any]] = deque(maxlen=SWAP_EVENTS_KEPT)
        self.swap_counts: Counter[str] = Counter()
        self._swaps_begun = 0
        self._last_obs: Observation | None = None  # the control loop's latest, given to a candidate at once
        # py4j runs each Java connection on its own thread: a late call must not interleave with
        # the next one on the mirror
        self._lock = threading.Lock()
        # The work beside an answer (a candidate's shadow decision, explaining the waiting apps, the
        # decision-log row) is the last call's until done: whoever takes the lock next does it first, so
        # it always sees the state its call left, in order. With beside_thread (serve) a worker does it
        # after the answer has gone, so the shim's deadline does not cover it: at once when it is costly
        # (a shadow decision, an explanation due, a large request's row), else at the next call or within
        # BESIDE_IDLE_S. Waking the worker at every answer cost the shim 10-20% of its heartbeats/s on 2
        # cores (docs/performance.md).
        self._beside: Callable[[], None] | None = None
        self._beside_due: threading.Event | None = None
        self._closed = False
        if beside_thread:
            self._beside_due = threading.Event()
            threading.Thread(target=self._beside_loop, name="yarnctl-beside", daemon=True).start()

    @contextmanager
    def _held(self) -> Iterator[None]:
        """The service lock, with the last call's beside-work done first."""
        with self._lock:
            self._do_beside()
            yield

    def _do_beside(self) -> None:
        """The last call's beside-work, if not yet done (under the service lock)."""
        work, self._beside = self._beside, None
        if work is None:
            return
        try:
            work()
        except Exception:  # beside the decision, already answered: log it and go on
            log.exception("the work beside an answer (shadow, explain, decision log) failed")

    def _beside_loop(self) -> None:
        """The worker that does a call's beside-work once its answer has gone, if the next call has not."""
        assert self._beside_due is not None
        while not self._closed:
            if not self._beside_due.wait(BESIDE_IDLE_S) and self._beside is None:
                continue  # nothing left over: not worth the lock
            with self._lock:
                self._beside_due.clear()
                self._do_beside()

    def close(self) -> None:
        """Finish the last call's beside-work and stop the worker (before the decision log closes)."""
        with self._held():
            self._closed = True
        if self._beside_due is not None:
            self._beside_due.set()

    def _engine(self, policy: Recording) -> Engine:
        """An engine for `policy`; once installed, it counts its refusals in the service's one counter."""
        return Engine(policy, max_am_share=self.max_am_share)

    @property
    def last_snapshot(self) -> ClusterSnapshot | None:
        """The cluster as the last decided call's policy saw it (None before one).

        Taken from the mirror on demand, under the service lock. Between calls the mirror holds that call's
        state (an answer reaches it only as the next request), and the service keeps no snapshot meanwhile,
        so the next request's changes are written into the mirror's maps in place, not into copies
        (`ClusterState._own`); one taken here costs those copies only while it is held. While the mirror
        awaits the shim's full sync after a failed call, it is the last decided call's state if the failed
        call left it untouched (a request that did not parse), else None.
        """
        with self._lock:
            return self._last_snapshot_locked()

    def cluster_now(self) -> tuple[ClusterSnapshot | None, bool]:
        """`last_snapshot` and whether the server awaits the shim's full sync after a failed call, read together."""
        with self._lock:
            return self._last_snapshot_locked(), self.awaiting_full_sync

    @property
    def awaiting_full_sync(self) -> bool:
        """True after a failed call (bad request, mismatch, internal error) until the shim's next full sync."""
        return self._last_t_s is not None and self.mirror.seq is None

    def _last_snapshot_locked(self) -> ClusterSnapshot | None:
        """`last_snapshot`, the service lock held by the caller."""
        if self._last_t_s is None:
            return None
        if self.mirror.seq is None:
            return self._gap
        return self.mirror.snapshot(self._last_t_s)

    def _note_gap(self) -> None:
        """After a failed call: keep the last decided call's state to show until the full sync, if still there."""
        state = self.mirror.state
        if (self._gap is None and self._last_t_s is not None and state is self._last_state
                and state.version == self._last_version):
            # the next request is a full sync into a new store: this one's maps are never written again
            self._gap = state.snapshot(self._last_t_s)

    def _install(self, active: Active) -> None:
        """Make `active` the policy that decides (at start, and at a swap between calls)."""
        active.engine.rejected_by = self.stats.rejected_by  # type: ignore[assignment]
        self._generation = getattr(self, "_generation", 0) + 1  # a save begun before a swap must not touch the next
        self.active = active
        self._policy, self.engine, self.policy_name = active.policy, active.engine, active.policy.name
        # the policy's tuning values, replaced whole when the control loop changes them (lock-free reads)
        self.tuning: dict[str, float] = active.engine.tuning()
        self.state_file = active.state_file if is_stateful(active.policy.policy) else None
        self._state_mtime = _mtime(self.state_file)
        self._calls_saved = self.stats.calls
        self._peer_wrote = False
        self._decided = None
        self.waits.clear()  # reasons the last policy gave are not this one's

    def tune(self, obs: Observation) -> None:
        """Feed a control-loop observation to the policy (and a candidate under check), between heartbeats."""
        with self._held():
            t0 = time.perf_counter_ns()
            # kept without its snapshot, which would hold the mirror's maps until the next tick (`last_snapshot`)
            self._last_obs = dataclasses.replace(obs, snapshot=None)
            obs = self._with_snapshot(obs)
            before = self.engine.stats["tune_errors"]
            changed = self.engine.tune(obs)
            self.stats.tune_errors += self.engine.stats["tune_errors"] - before
            if self.candidate is not None:
                self._tune_candidate(self.candidate, obs)
            # read every tick: values may also move in decide() (H-MRF's accounting), not only in tune()
            self.tuning = self.engine.tuning()
            if changed:
                log.info("policy %s tuned: %s", self.policy_name,
                         ", ".join(f"{k}={v:g}" for k, v in sorted(self.tuning.items())))
            held = (time.perf_counter_ns() - t0) // 1000
            if held >= TUNE_NOTED_US:
                log.warning("policy %s took %.1f ms to tune: heartbeats waited that long", self.policy_name,
                            held / 1000)

    def _with_snapshot(self, obs: Observation) -> Observation:
        """`obs` with the mirror's snapshot when it has none (the RM's REST API has no container start times; the mirror has)."""
        return obs if obs.snapshot is not None else dataclasses.replace(obs, snapshot=self._last_snapshot_locked())

    def policy_state(self) -> dict[str, Any] | None:
        """The policy's saved state, taken between heartbeats (None for a stateless policy or a failing save)."""
        with self._held():
            taken = self._state_locked()
        return None if taken is None else taken[2]

    def _state_locked(self) -> tuple[str, Path | None, dict[str, Any], int, int] | None:
        """(policy name, its state file, its state, calls so far, generation), taken under the service lock."""
        if not is_stateful(self.engine.policy):
            return None
        try:
            state = self.engine.policy.save_state()  # type: ignore[attr-defined]
            json.dumps(state)  # fail here, where it is logged, rather than half-way through the file write
        except Exception:
            log.exception("policy %s failed to save its state; keeping the last saved file", self.policy_name)
            return None
        return self.policy_name, self.state_file, dict(state), self.stats.calls, self._generation

    def save_state_file(self) -> bool:
        """Write the policy's state if it decided since its last save and no other server wrote the file since; True when written."""
        if self.state_file is None or self.stats.calls == self._calls_saved:
            return False
        with self._held():
            taken = self._state_locked()
        if taken is None:
            return False
        name, path, state, calls, generation = taken
        if path is None:
            return False
        try:
            with locked(path):
                if generation != self._generation:  # a swap in between: the next policy saves its own
                    return False
                now = _mtime(path)
                if now is not None and now != self._state_mtime:
                    if not self._peer_wrote:
                        log.info("policy %s: another policy server saved %s since this one did; not overwriting "
                                 "it (this one's history is older)", name, path)
                    self._peer_wrote = True
                    return False
                if not save_state(path, name, state):
                    return False
                if generation == self._generation:
                    self._calls_saved, self._state_mtime = calls, _mtime(path)
        except OSError as e:  # the lock file: the server keeps deciding, the next save tries again
            log.warning("cannot lock %s: %s", path, e.strerror or e)
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

    def settle(self) -> None:
        """Before serving: collect and freeze the process's start-up heap once, off the first full sync's path."""
        self._heap.settle()

    def decide(self, request: str) -> str:
        """Answer one heartbeat; never raises (py4j would turn it into a Java exception)."""
        t_in = time.perf_counter_ns()
        with self._lock:  # `_held` and the collector's pause written out: two generators' cost on every delta
            self._do_beside()
            if len(request) <= BESIDE_LARGE_CHARS:
                return self._answer(request, t_in)
            with collector_paused(self._full_syncs, self._heap):
                return self._answer(request, t_in)

    def _answer(self, request: str, t_in: int) -> str:
        """`decide` under the service lock, the last call's beside-work done."""
        t0 = time.perf_counter_ns()
        # behind another call, a tune, a swap or the last call's beside-work: the shim's clock runs meanwhile
        waited = (t0 - t_in) // 1000
        if waited >= WAIT_NOTED_US:
            self.stats.waited += 1
        seq, node, parsed = self._last_seq + 1, "", False
        if self.state_file is not None and (
                self._peer_wrote or time.time() - (self.stats.last_call_s or 0.0) > TAKEOVER_IDLE_S):
            self._adopt_newer_state()
        rejected: list[list[str]] = []
        why: dict[str, str] = {}
        decided_by, canary = self.policy_name, False
        self._seen = None
        try:
            if len(request) > self.max_request_chars:
                raise WireError("request", f"{len(request)} characters, over the limit of {self.max_request_chars}")
            req = parse_request(request)
            seq, node, parsed = req.seq, req.node, True
            self._last_seq = seq
            self.mirror.apply(req)
            self.stats.full_syncs += req.full
            resp, outcome, decided_by, canary = self._decide(seq, node, req.t_ms, rejected, why)
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
        if self.mirror.seq is None:
            self._note_gap()
        us = (time.perf_counter_ns() - t0) // 1000
        self.stats.calls += 1
        self.stats.observe(us)
        self.stats.last_call_s = time.time()
        # a canary's decision is not the serving policy's (the two may share a name: new parameters)
        self._beside = partial(self._beside_work, Answered(
            seq, node, not canary, decided_by, outcome, us, time.time_ns() // 1_000_000, request, parsed, resp,
            rejected, why, self._seen, self._decided, waited if waited >= WAIT_NOTED_US else None))
        self._seen = self._decided = None  # the beside-work holds them now, until the next call's start at the latest
        if self._beside_due is None or self._closed:
            self._do_beside()
        elif self.candidate is not None or self.waits.due() or len(request) > BESIDE_LARGE_CHARS:
            self._beside_due.set()  # costly: better done now, between calls, than by the next one
        # settling a candidate (a take-over's save, install and audit) is left to the status tick, off
        # the path of an answer the shim is waiting for
        return resp

    def _beside_work(self, a: Answered) -> None:
        """A call's shadow decision, explanation and decision-log row, beside its answer (under the service lock)."""
        waiting: dict[str, dict[str, Any]] = {}
        # a candidate is shadowed also when the serving policy failed (it may be what replaces it)
        shadow = self._shadow(a.seq, a.seen, a.decided) if a.serving else None
        if a.outcome == "ok" and a.serving and a.decided is not None:  # a canary's decision is not the serving one's
            self._explain(a.seq, a.node, a.decided, waiting)
        if self.decision_log is not None:
            self.decision_log.write(a.seq, a.node, a.decided_by, a.outcome, a.us, a.request, a.parsed, a.response,
                                    a.rejected, a.why, waiting, shadow, a.waited_us, t_ms=a.t_ms)

    def _explain(self, seq: int, node: str, decided: tuple[ClusterSnapshot, NodeId, Decision],
                 waiting: dict[str, dict[str, Any]]) -> None:
        """Why the oldest pending apps got nothing from the decision just made (WaitBook: when due, within its budget)."""
        before = self.engine.stats["explain_errors"]  # a policy's why_waiting that raised (the engine goes on)
        try:
            waiting.update((a, w.as_dict()) for a, w in self.waits.record(self.engine, *decided).items())
            self.stats.explain_errors += self.engine.stats["explain_errors"] - before
        except Exception:  # explaining is beside the decision: it must never cost one
            self.stats.explain_errors += 1
            log.exception("call %d from %s: explaining the waiting apps failed; the decision stands", seq, node)

    def _decide(self, seq: int, node: str, t_ms: int, rejected: list[list[str]],
                why: dict[str, str]) -> tuple[str, str, str, bool]:
        """The encoded answer, its outcome, the policy that decided it and whether that was the candidate at a canary node."""
        self._decided = None
        snap = self.mirror.snapshot(t_ms / 1000)
        self._last_t_s, self._last_state, self._last_version = t_ms / 1000, self.mirror.state, snap.version
        self._gap = None
        self._seen = (snap, node)
        cand = self.candidate
        if cand is not None and not cand.failure and cand.applies(node):
            canary = self._canary(seq, cand, snap, node, rejected, why)
            if canary is not None:
                return canary, "ok", cand.name, True
        result = self._run(self._policy, self.engine, snap, node)
        if result is None:
            self.stats.policy_errors += 1
            self.stats.errors += 1
            # the mirror is still right; the answer says "decide natively" and the shim resyncs next
            return encode_error(seq, self._policy.failure or f"policy {self.policy_name} returned no Decision"), \
                "error", self.policy_name, False
        return self._accept(seq, snap, node, result, rejected, why), "ok", self.policy_name, False

    def _canary(self, seq: int, cand: Candidate, snap: ClusterSnapshot, node: NodeId, rejected: list[list[str]],
                why: dict[str, str]) -> str | None:
        """The candidate's answer at a canary node's heartbeat; None when it failed (dropped; the serving policy decides)."""
        try:
            result = self._run(cand.policy, cand.engine, snap, node)
            if result is not None:
                answer = self._accept(seq, snap, node, result, rejected, why)
                cand.applied += 1
                cand.rejected += len(result.rejected)
                cand.observe(self._last_run_us)
                for r in result.rejected:  # refused items of an applied decision count as the serving one's do
                    self.stats.rejected_by[r.code.value] += 1  # type: ignore[index]
                return answer
            cand.failure = cand.policy.failure or f"policy {cand.name} returned no Decision"
        except Exception as e:  # its malformed decision must not cost the call: the serving policy decides it
            log.exception("call %d from %s: canary %s failed", seq, node, cand.name)
            cand.failure = f"canary {cand.name} failed: {type(e).__name__}: {e}"[:500]
            rejected.clear()
            why.clear()
            self._decided = None
        log.warning("call %d from %s: canary %s failed (%s); %s decides", seq, node, cand.name, cand.failure,
                    self.policy_name)
        return None

    def _run(self, policy: Recording, engine: Engine, snap: ClusterSnapshot, node: NodeId) -> Validation | None:
        """`engine`'s validated decision on `snap`, None when its policy raised or returned no Decision."""
        policy.failure = ""
        before = engine.stats["policy_errors"]
        t0 = time.perf_counter_ns()
        result = engine.decide(snap, node)
        self._last_run_us = (time.perf_counter_ns() - t0) // 1000
        return None if engine.stats["policy_errors"] != before else result

    def _accept(self, seq: int, snap: ClusterSnapshot, node: NodeId, result: Validation, rejected: list[list[str]],
                why: dict[str, str]) -> str:
        """Count and encode a validated decision; its refusals go to the log rows."""
        for r in result.rejected:
            item = r.item
            # [row key, what it named, code, particulars]: the code is the shim's vocabulary (RejectCode)
            if isinstance(item, Assignment):
                rejected.append(["a", item.app_id, r.code.value, r.detail])
            elif isinstance(item, Kill):
                rejected.append(["k", item.container_id, r.code.value, r.detail])
            else:
                rejected.append(["r", item.node_id, r.code.value, r.detail])
        answer = encode_decision(seq, result.accepted)  # first: a decision that cannot be encoded counts nothing
        why.update(result.accepted.reasons)
        self._decided = (snap, node, result.accepted)
        self.stats.assigned += result.accepted.containers()
        self.stats.ok += 1
        return answer

    # ------------------------------------------------------------------ hot swap (bridge/swap.py)

    def _shadow(self, seq: int, seen: tuple[ClusterSnapshot, NodeId] | None,
                decided: tuple[ClusterSnapshot, NodeId, Decision] | None) -> dict[str, Any] | None:
        """The candidate's decision on the call the serving policy just decided (or failed), for the log (not applied)."""
        cand = self.candidate
        if cand is None or cand.failure or seen is None:
            return None
        snap, node = seen
        accepted = decided[2] if decided is not None else None
        try:
            result = self._run(cand.policy, cand.engine, snap, node)
        except Exception as e:  # the engine swallows policy errors; anything else is ours, and must not cost the call
            log.exception("call %d from %s: shadowing %s failed", seq, node, cand.name)
            cand.failure = f"shadowing {cand.name} failed: {type(e).__name__}: {e}"[:500]
            return None
        if result is None:
            cand.failure = cand.policy.failure or f"policy {cand.name} returned no Decision"
            return {"policy": cand.name, "phase": cand.phase.value, "error": cand.failure}
        cand.observe(self._last_run_us)
        cand.rejected += len(result.rejected)
        mine = decision_rows(result.accepted)
        same = accepted is not None and mine == decision_rows(accepted)
        cand.differ += not same
        doc: dict[str, Any] = {"policy": cand.name, "phase": cand.phase.value, "us": self._last_run_us, "same": same}
        if not same:
            doc["assign"] = [list(a) for a in mine[0]]
            if mine[1]:
                doc["kill"] = [list(k) for k in mine[1]]
            if mine[2]:
                doc["resize"] = [list(r) for r in mine[2]]
        if result.rejected:
            doc["rejected"] = [[r.code.value, r.detail] for r in result.rejected]
        return doc

    def _check_candidate(self) -> None:
        """Drop a candidate that failed, or settle one whose window is over (under the service lock)."""
        cand = self.candidate
        if cand is None:
            return
        if cand.failure:
            self._settle(SwapEvent.DROPPED, cand.failure)
        elif cand.due(time.monotonic()):
            why = cand.verdict()
            self._settle(SwapEvent.DROPPED if why else SwapEvent.ACTIVE, why)

    def control(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """One control-socket command (show, set, rollback, state); ConfigError for a bad one."""
        cmd = doc.get("command")
        if cmd == "show":
            return {"swap": self.swap_status()}
        if cmd == "set":
            plan = doc.get("plan")
            if not isinstance(plan, dict):
                raise ConfigError("set: expected a plan (policy, params, check_calls or check_s, canary)")
            return {"event": self.begin_swap(SwapPlan.from_doc(plan))}
        if cmd == "rollback":
            return {"event": self.rollback()}
        if cmd == "state":
            with self._held():  # one policy and its parameters, and the snapshot of the same call
                snap, active, at = self._last_snapshot_locked(), self.active, self.stats.last_call_s
                awaiting = self.awaiting_full_sync
            if snap is None:
                raise ConfigError("the server's copy of the cluster awaits the shim's full sync after a failed call "
                                  "that changed it" if awaiting else
                                  "no heartbeat decided yet: the server has not seen the cluster")
            return {"state": state_doc(snap, active.policy.name, active.params, at)}
        raise ConfigError(f"unknown command {cmd!r}; expected show, set, rollback or state")

    def check_swap(self) -> None:
        """Drop a failed candidate, or settle one whose window is over, between calls (the status tick: every second)."""
        with self._held():
            self._check_candidate()

    def begin_swap(self, plan: SwapPlan) -> dict[str, Any]:
        """Build `plan`'s policy and start its check; ConfigError when it cannot be built or a swap is under way."""
        from yarnctl.policies import make_policy

        policy = make_policy(plan.policy, plan.params)  # outside the lock: the calls go on meanwhile
        state_file = self.state_path(policy) if is_stateful(policy) else None
        if state_file is not None:
            load_state(state_file, policy.name, policy)  # type: ignore[arg-type]
        rec = Recording(policy)
        engine = self._engine(rec)
        with self._held():
            if self.candidate is not None:
                raise ConfigError(f"{self.candidate.name} is under check since "
                                  f"{time.monotonic() - self.candidate.started:.0f} s; `yarnctl policy rollback` "
                                  f"cancels it")
            self._swaps_begun += 1
            self.candidate = Candidate(plan, rec, engine, state_file, self.policy_name, swap=self._swaps_begun)
            if self._last_obs is not None:  # what the control loop saw last: DRESS's δ starts from the cluster now
                self._tune_candidate(self.candidate, self._with_snapshot(self._last_obs))
            return self._event(self.candidate.phase, self.candidate, None)

    def _tune_candidate(self, cand: Candidate, obs: Observation) -> None:
        before = cand.engine.stats["tune_errors"]
        cand.engine.tune(obs)
        cand.tune_errors += cand.engine.stats["tune_errors"] - before
        if cand.tune_errors and not cand.failure:  # stop it deciding canary nodes on stale values at once
            cand.failure = f"{cand.name} failed to take in a control-loop observation (see the server log)"

    def rollback(self) -> dict[str, Any]:
        """Cancel a candidate under check, else return to the policy the last swap replaced; ConfigError with neither."""
        with self._held():
            if self.candidate is not None:
                return self._settle(SwapEvent.CANCELLED, "yarnctl policy rollback")
            if self.previous is None:
                raise ConfigError(f"nothing to roll back to: {self.policy_name} has served since the server started")
            back, self.previous, gone = self.previous, self.active, self.policy_name
            self._save_locked()
            self._hand_over(back.policy, back.state_file)
            self._install(back)
            if self._last_obs is not None:  # it saw no observation while it was not serving
                back.engine.tune(self._with_snapshot(self._last_obs))
                self.tuning = back.engine.tuning()
            return self._event(SwapEvent.ROLLED_BACK, None, f"from {gone}")

    def swap_status(self) -> dict[str, Any]:
        """The policy serving, a candidate under check, the one a rollback returns to, and the latest events."""
        cand = self.candidate
        return {"policy": self.policy_name, "params": dict(self.active.params),
                "candidate": cand.as_status(time.monotonic()) if cand else None,
                "previous": self.previous.policy.name if self.previous else None,
                "counts": dict(self.swap_counts), "events": list(self.swaps)}

    def _settle(self, how: SwapEvent, why: str | None) -> dict[str, Any]:
        """End the candidate's check: it takes over (ACTIVE) or is dropped (DROPPED, CANCELLED)."""
        cand = self.candidate
        assert cand is not None
        self.candidate = None
        if how is SwapEvent.ACTIVE:
            self._save_locked()
            self._hand_over(cand.policy, cand.state_file)
            self.previous = self.active
            self._install(Active(cand.policy, cand.engine, cand.state_file, dict(cand.plan.params)))
        return self._event(how, cand, why)

    def _hand_over(self, to: Recording, state_file: Path | None) -> None:
        """A policy taking over the serving one's state file takes its history in memory (hmrf with new parameters)."""
        if state_file is None or state_file != self.state_file or not is_stateful(to.policy):
            return
        try:
            to.policy.load_state(self.engine.policy.save_state())  # type: ignore[attr-defined]
        except Exception:  # it keeps the history it loaded from the file
            log.exception("policy %s could not take over %s's history; it keeps what %s held", to.name,
                          self.policy_name, state_file)

    def _save_locked(self) -> None:
        """Save the outgoing policy's state before a swap (under the service lock)."""
        taken = self._state_locked()
        if taken is None:
            return
        name, path, state, _, _ = taken
        if path is None:
            return
        try:
            with locked(path):
                if _mtime(path) not in (None, self._state_mtime):  # another policy server's (HA): its history is newer
                    return
                save_state(path, name, state)
        except OSError as e:
            log.warning("cannot lock %s: %s", path, e.strerror or e)

    def _event(self, how: SwapEvent, cand: Candidate | None, why: str | None) -> dict[str, Any]:
        """Record one swap event: the status list, the counts, the decision log and the server log."""
        doc: dict[str, Any] = {"at": round(time.time(), 3), "event": how.value, "policy": self.policy_name}
        if cand is not None:
            doc.update(swap=cand.swap, candidate=cand.name, replacing=cand.replacing, plan=cand.plan.as_doc(), calls=cand.calls,
                       applied=cand.applied, differ=cand.differ, rejected=cand.rejected, p95_us=cand.p95_us(),
                       elapsed_s=round(time.monotonic() - cand.started, 1))
        if why:
            doc["why"] = why
        self.swaps.append(doc)
        self.swap_counts[how.value] += 1
        if self.decision_log is not None:
            self.decision_log.event(doc)
        level = logging.WARNING if how in (SwapEvent.DROPPED, SwapEvent.ROLLED_BACK) else logging.INFO
        log.log(level, "swap: %s", event_text(doc))
        return doc


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
