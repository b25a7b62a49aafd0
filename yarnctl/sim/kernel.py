"""A tiny discrete-event kernel: a heap of (time, priority, sequence or rank, callback) and a clock."""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Collection
from typing import Any

# Event times are rounded to the microsecond, so a task that ends "at" a heartbeat and the
# heartbeat itself land on the same float and meet in priority order, however each was computed.
TICK_DIGITS = 6

# Priorities of events at the same instant: arrivals, then task ends, then the AMs' own checks, then the
# MapReduce AMs' heartbeats, then the control loop's tick, then heartbeats, so a heartbeat at time t sees
# every container that finished at t (and every job submitted at t, and δ tuned at t). Distinct priorities
# keep the order independent of insertion order. Queue samples (SimCluster(sample_queues_s=...)) come last:
# they only read the state every other event left.
SUBMIT, END, AM, AM_BEAT, TUNE, HEARTBEAT, SAMPLE = 0, 1, 2, 3, 4, 5, 6
PERIODIC = (TUNE, SAMPLE)  # events that reschedule themselves: alone, they would keep a stalled run alive


_MASK64 = (1 << 64) - 1


def _mix(x: int) -> int:
    """SplitMix64's finaliser: 64 well-mixed bits from `x`, a bijection on 64-bit integers."""
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & _MASK64
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & _MASK64
    return x ^ (x >> 31)


class Kernel:
    """Runs callbacks in (time, priority, insertion or rank) order; equal-time events are deterministic."""

    __slots__ = ("now", "stage", "_heap", "_seq", "stopped")

    def __init__(self) -> None:
        self.now = 0.0
        self.stage = -1  # the highest priority run at this instant: the events up to it have had their turn
        self._heap: list[tuple[float, int, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = 0
        self.stopped = False

    def schedule(self, at: float, priority: int, fn: Callable[..., Any], *args: Any) -> None:
        """Call `fn(*args)` at time `at` (never earlier than now)."""
        self._seq += 1
        at = round(at, TICK_DIGITS)
        heapq.heappush(self._heap, (at if at > self.now else self.now, priority, self._seq, fn, args))

    def schedule_ranked(self, at: float, priority: int, rank: int, fn: Callable[..., Any], *args: Any) -> None:
        """`schedule`, ordered among the events of `priority` at `at` by `rank` instead of insertion.

        A priority's events are all ranked or all sequenced, and ranks are unique at an instant: an entity
        that sleeps and wakes takes the same place among the others as if it had stayed scheduled.
        """
        at = round(at, TICK_DIGITS)
        heapq.heappush(self._heap, (at if at > self.now else self.now, priority, rank, fn, args))

    def cancel(self, instants: Collection[float], fn: Callable[..., Any], *args: Any) -> None:
        """Take the events `fn(*args)` at `instants` off the queue: a scan and a rebuild of it, O(queued events)."""
        heap = self._heap
        kept = [e for e in heap if not (e[0] in instants and e[3] == fn and e[4] == args)]
        if len(kept) < len(heap):
            heap[:] = kept
            heapq.heapify(heap)  # the order events run in is their keys' alone, whatever the heap's layout

    def pending(self) -> int:
        """Number of events still queued."""
        return len(self._heap)

    def busy(self, periodic: tuple[int, ...] = ()) -> bool:
        """Whether an event of a kind not in `periodic` is queued (usually the first one looked at)."""
        return any(e[1] not in periodic for e in self._heap)

    def step(self) -> bool:
        """Run the next event; False when there is none."""
        if not self._heap:
            return False
        at, priority, _, fn, args = heapq.heappop(self._heap)
        if at != self.now:
            self.now, self.stage = at, priority
        elif priority > self.stage:
            self.stage = priority
        fn(*args)
        return True

    def run(self, until: float = float("inf")) -> None:
        """Run events until the heap is empty, `until` is passed, or `stop()` is called."""
        heap, pop = self._heap, heapq.heappop
        while heap and not self.stopped:
            if heap[0][0] > until:
                if until != self.now:  # the clock moves on to an instant where nothing has run yet
                    self.now, self.stage = until, -1
                return
            at, priority, _, fn, args = pop(heap)
            if at != self.now:
                self.now, self.stage = at, priority
            elif priority > self.stage:
                self.stage = priority  # an event scheduled for now may come after later priorities had their turn
            fn(*args)

    def stop(self) -> None:
        """End `run` after the current event."""
        self.stopped = True


class SeededKernel(Kernel):
    """A Kernel whose events of one priority at one instant run in an order drawn from `order_seed`.

    The model does not know which of two simultaneous events comes first; runs under several seeds
    show how much its results depend on that choice (`sim/noise.py`). The same seed gives the same order.
    """

    __slots__ = ("_rng", "_salt", "_ranks")

    def __init__(self, order_seed: int) -> None:
        super().__init__()
        self._rng = random.Random(order_seed)
        # the ranks' places from the seed alone, apart from the stream the other events draw from
        self._salt = _mix(order_seed & _MASK64 ^ 0x9E3779B97F4A7C15)
        self._ranks: dict[int, int] = {}  # rank -> its drawn place

    def schedule(self, at: float, priority: int, fn: Callable[..., Any], *args: Any) -> None:
        """`Kernel.schedule`, placed at random among the events of `priority` at `at`."""
        self._seq += 1
        at = round(at, TICK_DIGITS)
        # drawn bits above the sequence: a random order, and still a unique key (no comparison reaches fn)
        key = self._rng.getrandbits(32) << 40 | self._seq
        heapq.heappush(self._heap, (at if at > self.now else self.now, priority, key, fn, args))

    def schedule_ranked(self, at: float, priority: int, rank: int, fn: Callable[..., Any], *args: Any) -> None:
        """`Kernel.schedule_ranked` with each rank's place drawn from the seed alone: still kept across sleeps."""
        key = self._ranks.get(rank)
        if key is None:
            key = self._ranks[rank] = _mix(rank ^ self._salt) >> 32 << 40 | rank
        super().schedule_ranked(at, priority, key, fn, *args)
