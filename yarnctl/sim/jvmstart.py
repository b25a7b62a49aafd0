"""JVM start-up as CPU work: every container starting at once shares the cores of its pool.

A container's JVM needs `Startup.launch_cpu_s` CPU-seconds before its own work; the containers
starting together in one pool (a node, or the whole cluster when `launch_shared` says its
NodeManagers share one machine) share `Startup.launch_cores` cores, each served at
min(1, cores / starting), processor-shared as an OS scheduler would: one start alone takes
`launch_cpu_s`, twelve on two cores take six times as long, and a wave's starts end together rather
than in launch order. An AM's own start-up after its JVM's (`am_cpu_s`) is served the same way, and
a job's client (`client_cpu_s`, from its submission) is load in the machine's pool that waits for
nothing. A part of SimCluster; off while the pool has no cores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Union

from yarnctl.sim.kernel import END
from yarnctl.sim.parts import SimParts

if TYPE_CHECKING:
    from yarnctl.sim.physics import _Container

Then = Callable[[], None]
DONE_CPU_S = 1e-6


class _Client:
    """A job's client submitting it: CPU work on the machine that nothing waits for."""

    __slots__ = ("seq",)

    def __init__(self, seq: int) -> None:
        self.seq = seq  # below every container's (those count from 1): ends are ordered by seq


_Member = Union["_Container", _Client]


class _Pool:
    """The containers (and clients) starting in one pool, each with its CPU-seconds left as of `since`."""

    __slots__ = ("left", "then", "since", "epoch")

    def __init__(self) -> None:
        self.left: dict[_Member, float] = {}
        self.then: dict[_Member, Then] = {}
        self.since = 0.0
        self.epoch = 0  # bumped at every re-timing: older completion events are stale


class JvmStarts(SimParts):
    """Processor-shared JVM start-ups (Startup.launch_cpu_s on Startup.launch_cores per pool)."""

    def _jvm_starts(self) -> bool:
        return self.startup.launch_cpu_s > 0 and self.startup.launch_cores > 0

    def _am_cpu(self) -> bool:
        return self.startup.am_cpu_s > 0 and self.startup.launch_cores > 0

    def _pool_key(self, c: _Member) -> str:
        return "" if self.startup.launch_shared or isinstance(c, _Client) else c.node.id

    def _start_jvm(self, c: _Container, then: Then, cpu_s: float | None = None) -> None:
        """Start `c`'s JVM (or `cpu_s` of other start-up work) in its pool; `then` runs when it has had its CPU."""
        self._pool_add(c, self.startup.launch_cpu_s if cpu_s is None else cpu_s, then)

    def _start_client(self, job_ordinal: int) -> None:
        """A job's client submits it: `client_cpu_s` of load on the machine's cores, which nothing waits for."""
        if self.startup.client_cpu_s > 0 and self.startup.launch_cores > 0:
            self._pool_add(_Client(-1 - job_ordinal), self.startup.client_cpu_s, _nothing)

    def _pool_add(self, c: _Member, cpu_s: float, then: Then) -> None:
        pool = self.pools.setdefault(self._pool_key(c), _Pool())
        self._pool_progress(pool)
        pool.left[c] = cpu_s
        pool.then[c] = then
        self.future += 1  # something still to come: the start's end
        self._pool_retime(pool)

    def _abort_jvm(self, c: _Container) -> None:
        """Take a container killed while its JVM (or its AM's start-up) runs out of its pool."""
        pool = self.pools.get(self._pool_key(c))
        if pool is None or c not in pool.left:
            return
        self._pool_progress(pool)
        del pool.left[c], pool.then[c]
        self.future -= 1
        self._pool_retime(pool)

    def _pool_rate(self, pool: _Pool) -> float:
        n = len(pool.left)
        return 1.0 if n <= self.startup.launch_cores else self.startup.launch_cores / n

    def _pool_progress(self, pool: _Pool) -> None:
        now = self.k.now
        served = (now - pool.since) * self._pool_rate(pool)
        if served > 0:
            for c in pool.left:
                pool.left[c] = max(pool.left[c] - served, 0.0)
        pool.since = now

    def _pool_retime(self, pool: _Pool) -> None:
        pool.epoch += 1
        if not pool.left:
            return
        # all members progress alike: the ones with the least left end first, together
        left = min(pool.left.values())
        self.k.schedule(self.k.now + left / self._pool_rate(pool), END, self._jvm_started, pool, pool.epoch)

    def _jvm_started(self, pool: _Pool, epoch: int) -> None:
        """The members of `pool` whose CPU is served end; the rest are re-timed."""
        if epoch != pool.epoch:
            return
        self._pool_progress(pool)
        # event times are rounded to the microsecond (kernel.TICK_DIGITS): what is left below a
        # microsecond's CPU is done, or its completion would land on `now` forever
        done = sorted((c for c, left in pool.left.items() if left <= DONE_CPU_S), key=lambda c: c.seq)
        thens = []
        for c in done:
            del pool.left[c]
            thens.append(pool.then.pop(c))
            self.future -= 1
        self._pool_retime(pool)
        for then in thens:
            then()


def _nothing() -> None:
    """A client's end: nothing waits for it."""
