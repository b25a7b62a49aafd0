"""The control loop of `yarnctl serve`: poll the RM and its NodeManagers into Observations, survive outages.

Each tick reads the RUNNING nodes and the ACCEPTED/RUNNING apps from the RM (with each app's
pending asks and accumulated memorySeconds/vcoreSeconds), the shim's counters from the RM's
/jmx, and, unless turned off, every NodeManager's ContainerResource_* usage beans for its
RUNNING containers. The result goes to `feed` (the policy's tune()). When the RM cannot be
read, the last good observation is kept, the state says stale, and the log says so once per
outage (then once a minute); nothing escapes the loop's thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from yarnctl.errors import RMError
from yarnctl.model import ANY, TUNE_INTERVAL_S, AppUsage, ContainerLoad, NodeLoad, Observation
from yarnctl.rm.client import NodeManager, ResourceManager
from yarnctl.rm.models import AppInfo, NodeReport, ShimMetrics
from yarnctl.rm.transport import HttpSettings

log = logging.getLogger(__name__)

LIVE_APP_STATES = ("ACCEPTED", "RUNNING")
RUNNING = "RUNNING"
STALE_REPEAT_S = 60.0  # while the RM stays unreadable, repeat the warning this often
# a reading older than one interval and this is stale even while its next poll still runs: a poll's reads
# take seconds on a busy cluster (each NodeManager up to 4 s), and a hung one gives up only after a minute
OVERDUE_S = 10.0
# a tick must not hang on a dead NodeManager: usage is best-effort, the RM's view is not
NM_SETTINGS = HttpSettings(connect_timeout_s=1.0, read_timeout_s=3.0, retries=0)


@dataclass(frozen=True, slots=True)
class Reading:
    """One successful poll: the observation and the shim's counters (None without the shim)."""

    observation: Observation
    shim: ShimMetrics | None
    nm_failures: int = 0  # NodeManagers whose usage could not be read this tick


class ClusterObserver:
    """Reads one RM (HA set) and its NodeManagers into a Reading."""

    def __init__(self, rm: ResourceManager, *, usage: bool = True,
                 node_manager: Callable[[str], NodeManager] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.rm = rm
        self.usage = usage
        self.node_manager = node_manager or (lambda url: NodeManager(url, settings=NM_SETTINGS))
        self.clock = clock
        self._nms: dict[str, NodeManager] = {}

    @property
    def where(self) -> str:
        """The RM address(es) polled."""
        return ", ".join(self.rm.urls)

    def read(self) -> Reading:
        """Poll once; RMError when the RM cannot be read (a NodeManager that cannot is only counted)."""
        nodes = self.rm.nodes(states=[RUNNING])
        apps = self.rm.apps(states=LIVE_APP_STATES)
        shim = self.rm.shim_metrics()
        loads: list[ContainerLoad] = []
        failures = 0
        if self.usage:
            for node in nodes:
                try:
                    loads.extend(self._node_usage(node))
                except RMError as e:
                    failures += 1
                    log.debug("no container usage from %s: %s", node.id, e)
            for address in self._nms.keys() - {n.http_address for n in nodes}:
                self._nms.pop(address).close()  # a node gone, or back on another port: one client per live node
        obs = Observation.build(self.clock(), [_node_load(n) for n in nodes], [_app_usage(a) for a in apps],
                                loads, usage_measured=self.usage and failures < len(nodes))
        return Reading(obs, shim, failures)

    def _node_usage(self, node: NodeReport) -> list[ContainerLoad]:
        nm = self._nms.get(node.http_address)
        if nm is None:
            address = node.http_address if "://" in node.http_address else "http://" + node.http_address
            nm = self._nms[node.http_address] = self.node_manager(address)
        # beans outlive their container by yarn.nodemanager.container-metrics.unregister-delay-ms:
        # only RUNNING containers count, or a finished one would look busy for seconds
        running = {c.id for c in nm.containers() if c.state == RUNNING}
        out = []
        for u in nm.container_usage():
            if u.container_id in running and u.pmem_mb is not None:
                cpu = u.cpu_percent.avg / 100.0 if u.cpu_percent is not None else 0.0
                out.append(ContainerLoad(u.container_id, app_of(u.container_id), node.id, u.pmem_mb.avg, cpu))
        return out

    def close(self) -> None:
        """Close the pooled connections of every client."""
        for nm in self._nms.values():
            nm.close()
        self.rm.close()


def app_of(container_id: str) -> str:
    """The application id of a container id (container_<ts>_<app>_<attempt>_<n>, or container_e<epoch>_...)."""
    parts = container_id.split("_")
    if len(parts) >= 5 and parts[1].startswith("e"):  # 2.7 with an RM epoch: container_e17_1410901177871_0001_01_000005
        parts = [parts[0], *parts[2:]]
    if len(parts) < 4:
        return container_id
    return f"application_{parts[1]}_{parts[2]}"


def _node_load(n: NodeReport) -> NodeLoad:
    return NodeLoad(n.id, n.capacity, n.used)


def _app_usage(a: AppInfo) -> AppUsage:
    asks = [r for r in a.resource_requests if r.resource_name == ANY]
    return AppUsage(a.id, a.queue, a.user, a.allocated, a.pending, sum(r.num_containers for r in asks),
                    a.memory_seconds, a.vcore_seconds)


@dataclass(frozen=True, slots=True)
class LoopState:
    """What the control loop knows now: the last good reading, whether it is stale, and its counters."""

    reading: Reading | None = None
    ok_at: float | None = None     # wall-clock time of the last good poll
    stale: bool = False            # the last poll failed: `reading` is older than one interval
    error: str = ""                # why the last poll failed ("" when it did not)
    polls: int = 0
    failures: int = 0
    feed_errors: int = 0
    poll_s: float = 0.0            # how long the last poll took
    interval_s: float = 0.0

    def age_s(self, now: float) -> float | None:
        """Seconds since the last good poll (None before one)."""
        return None if self.ok_at is None else max(0.0, now - self.ok_at)

    def stale_at(self, now: float) -> bool:
        """Whether the policy works from old data at `now`: the last poll failed, none has succeeded, or one is
        overdue (a poll hanging on a slow RM is not a failure until it gives up, up to a minute later)."""
        age = self.age_s(now)
        return self.stale or age is None or age > self.interval_s + OVERDUE_S


class Source(Protocol):
    """Where a control loop reads the cluster from: the RM and NodeManagers, or the shim's own reports."""

    @property
    def where(self) -> str:
        """What is read, for the log."""
        ...

    def read(self) -> Reading:
        """Poll once; RMError when the cluster cannot be read."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class ControlLoop:
    """Polls `observer` every `interval_s` on a daemon thread and feeds each observation to `feed`."""

    def __init__(self, observer: Source, feed: Callable[[Observation], None], interval_s: float = TUNE_INTERVAL_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.observer = observer
        self.feed = feed
        self.interval_s = interval_s
        self.clock = clock
        # replaced whole on every tick: readers (metrics scrapes, the status file) never see half an update
        self.state = LoopState(interval_s=interval_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._outage = 0  # failed polls since the last good one
        self._warned_at = 0.0
        self._started = clock()

    def start(self) -> None:
        """Start polling (the first poll at once)."""
        self._thread = threading.Thread(target=self._run, name="yarnctl-control-loop", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop polling and wait for the current poll to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
        self.observer.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.poll()
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - started)))

    def poll(self) -> LoopState:
        """One tick: read, feed, update the state; never raises."""
        t0 = time.monotonic()
        st = self.state
        try:
            reading = self.observer.read()
        except Exception as e:  # RMError is the expected kind; anything else is a bug, still survivable
            if not isinstance(e, RMError) and _one_line(e) != st.error:  # its traceback once, not every tick
                log.exception("control loop: reading the cluster failed")
            self.state = replace(st, stale=True, error=_one_line(e), polls=st.polls + 1, failures=st.failures + 1,
                                 poll_s=time.monotonic() - t0)
            self._warn_stale()
            return self.state
        feed_errors = st.feed_errors
        try:
            self.feed(reading.observation)
        except Exception:
            feed_errors += 1
            log.exception("control loop: feeding the observation to the policy failed")
        if self._outage:
            log.info("control loop: the cluster is readable again after %d failed poll(s)", self._outage)
            self._outage = 0
        self.state = LoopState(reading, self.clock(), False, "", st.polls + 1, st.failures, feed_errors,
                               time.monotonic() - t0, self.interval_s)
        return self.state

    def _warn_stale(self) -> None:
        self._outage += 1
        now = self.clock()
        if self._outage > 1 and now - self._warned_at < STALE_REPEAT_S:
            return
        self._warned_at = now
        age = self.state.age_s(now)
        if age is None and now - self._started < STALE_REPEAT_S:
            # started before its RM (as `yarnctl cluster up` does): not a problem yet
            log.info("control loop: waiting for the cluster: %s", self.state.error)
            return
        kept = f"keeping the observation from {age:.0f} s ago (stale)" if age is not None else "no observation yet"
        log.warning("control loop: cannot read the cluster: %s; %s", self.state.error, kept)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:1000]  # long enough for an HA pair's RMUnreachable, short enough for a status file
