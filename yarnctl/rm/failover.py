"""Where a GET goes: the active one of several ResourceManagers, found and re-found during calls.

Hadoop 2.7 RM HA (RMWebAppFilter): a standby RM answers REST calls with HTTP 307 and a "This is
standby RM. The redirect url is: ..." page, except `/ws/v1/cluster/info` (which reports
`haState`), `/jmx`, `/conf`, `/logs`, `/stacks` and `/logLevel`, which it serves itself. So:

- a call goes to the RM that answered last (the remembered active), then to the others in order;
- no HTTP answer (refused, timeout, TLS) or a 502/503/504 moves on to the next RM;
- a 307 is followed only to a *configured* RM (credentials never go to an arbitrary host), which
  then becomes the remembered active; a redirect elsewhere is reported, not followed;
- for the paths a standby serves itself, the RM's `haState` is checked first (at most every
  `recheck_s` per RM), so `/jmx` never silently reads a standby;
- when a whole round fails, the next round starts after an exponential backoff; after the last,
  RMUnreachable names every URL tried and what each said.

With a single base URL (one RM without HA, or a NodeManager) there is nothing to check or fail
over to, and only the retry rounds apply.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import urlsplit

from yarnctl.errors import RMConfigError, RMUnreachable
from yarnctl.rm.transport import HttpSettings, Reply, Transport, TransportFailure

log = logging.getLogger(__name__)

INFO_PATH = "/ws/v1/cluster/info"
# paths a standby RM serves itself instead of redirecting (RMWebAppFilter, 2.7.7) that the
# clients read; /info carries haState itself, the others need it checked first
CHECK_HA_STATE_FIRST = ("/jmx",)
TRANSIENT_STATUSES = (502, 503, 504)
REDIRECT_STATUSES = (301, 302, 303, 307, 308)


def normalise_base(url: str) -> str:
    """'host:8088' -> 'http://host:8088'; no trailing slash. RMConfigError for an empty address."""
    url = url.strip()
    if not url.rstrip("/"):
        raise RMConfigError("empty ResourceManager/NodeManager address")
    if "://" not in url:
        url = "http://" + url
    try:
        parts = urlsplit(url)  # before the slashes go: "http://" stripped to "http:" read as a host named http
    except ValueError:  # e.g. an unclosed IPv6 bracket, "[::1"
        raise RMConfigError(f"{url!r} is not an http(s)://host:port address") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RMConfigError(f"{url!r} is not an http(s)://host:port address")
    try:
        parts.port  # noqa: B018 (urlsplit checks the port only when asked)
    except ValueError:
        raise RMConfigError(f"{url!r} has a bad port; expected http(s)://host:port") from None
    return url.rstrip("/")


def _netloc(url: str) -> str:
    """host:port of `url`, '' when it has none a configured address could match (a Location with a bad port)."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return ""
    return f"{(parts.hostname or '').lower()}:{port}"


class Failover:
    """Sends GETs to the active one of `bases`; see the module docstring for the rules."""

    def __init__(self, bases: Sequence[str], transport: Transport, settings: HttpSettings, *,
                 what: str = "ResourceManager", recheck_s: float = 10.0,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not bases:
            raise RMConfigError(f"no {what} address given")
        self.bases = tuple(dict.fromkeys(normalise_base(b) for b in bases))
        self.transport, self.settings, self.what = transport, settings, what
        self.recheck_s, self._sleep, self._clock = recheck_s, sleep, clock
        self._active: str | None = self.bases[0] if len(self.bases) == 1 else None
        self._confirmed: dict[str, float] = {}  # base -> clock() when it last said haState ACTIVE
        self._lock = threading.Lock()
        self._by_netloc = {_netloc(b): b for b in self.bases}

    @property
    def active(self) -> str | None:
        """The base URL that answered last (None until one has, with several RMs)."""
        return self._active

    @property
    def ha(self) -> bool:
        return len(self.bases) > 1

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Reply:
        """GET `path` from the active daemon: the first HTTP answer that is not a redirect or transient error.

        Returns 2xx and non-transient 4xx/5xx replies (the caller maps them to errors); raises
        RMUnreachable after `settings.retries` extra rounds.
        """
        params = params or {}
        attempts: list[tuple[str, str]] = []
        rounds = self.settings.retries + 1
        for round_no in range(rounds):
            if round_no:
                delay = self.settings.backoff(round_no)
                log.info("no %s answered GET %s; retry %d/%d in %.1f s", self.what, path, round_no,
                         self.settings.retries, delay)
                self._sleep(delay)
            reply = self._one_round(path, params, attempts)
            if reply is not None:
                return reply
        raise RMUnreachable(self.what, path, attempts, rounds)

    def _order(self) -> list[str]:
        active = self._active
        return ([active] if active else []) + [b for b in self.bases if b != active]

    def _one_round(self, path: str, params: Mapping[str, str], attempts: list[tuple[str, str]]) -> Reply | None:
        queue, tried = self._order(), set()
        while queue:
            base = queue.pop(0)
            if base in tried:
                continue
            tried.add(base)
            if self.ha and path in CHECK_HA_STATE_FIRST and not self._fresh(base):
                state = self._ha_state(base, attempts)
                if state != "ACTIVE":
                    continue
            try:
                reply = self.transport.get(base + path, params)
            except TransportFailure as e:
                self._failed(base, str(e), attempts)
                continue
            if reply.status in REDIRECT_STATUSES:
                target = self._by_netloc.get(_netloc(reply.location)) if reply.location else None
                if target and target not in tried:
                    attempts.append((base, f"standby, HTTP {reply.status} to {target}"))
                    log.info("%s %s is standby; following its redirect to %s", self.what, base, target)
                    self._forget(base)
                    queue.insert(0, target)
                else:
                    why = "not a configured RM, not followed" if not target else "already tried"
                    attempts.append((base, f"HTTP {reply.status} redirect to {reply.location or '(no Location)'} "
                                           f"({why})"))
                    self._forget(base)
                continue
            if reply.status in TRANSIENT_STATUSES:
                self._failed(base, f"HTTP {reply.status}", attempts)
                continue
            if self.ha and path == INFO_PATH and reply.status == 200:
                state = _ha_state_of(reply.text)
                if state != "ACTIVE":
                    attempts.append((base, f"haState {state or 'unknown'}"))
                    self._forget(base)
                    continue
                self._confirmed[base] = self._clock()
            self._became_active(base)
            return reply
        return None

    def _fresh(self, base: str) -> bool:
        at = self._confirmed.get(base)
        return at is not None and self._clock() - at < self.recheck_s

    def _ha_state(self, base: str, attempts: list[tuple[str, str]]) -> str:
        """haState of one RM from its /ws/v1/cluster/info ('' when it did not say)."""
        try:
            reply = self.transport.get(base + INFO_PATH, {})
        except TransportFailure as e:
            self._failed(base, str(e), attempts)
            return ""
        state = _ha_state_of(reply.text) if reply.status == 200 else ""
        if state == "ACTIVE":
            self._confirmed[base] = self._clock()
        else:
            attempts.append((base, f"haState {state}" if state else f"HTTP {reply.status} from {INFO_PATH}"))
            self._forget(base)
        return state

    def ha_states(self) -> dict[str, str]:
        """Every configured RM's haState (ACTIVE, STANDBY, INITIALIZING...) or what went wrong asking it."""
        out = {}
        for base in self.bases:
            try:
                reply = self.transport.get(base + INFO_PATH, {})
            except TransportFailure as e:
                out[base] = f"unreachable: {e}"
                continue
            out[base] = (_ha_state_of(reply.text) or "unknown") if reply.status == 200 else f"HTTP {reply.status}"
        return out

    def _failed(self, base: str, said: str, attempts: list[tuple[str, str]]) -> None:
        attempts.append((base, said))
        if self.ha:
            log.warning("%s %s failed (%s); trying the next one", self.what, base, said)
        self._forget(base)

    def _forget(self, base: str) -> None:
        with self._lock:
            self._confirmed.pop(base, None)
            if self._active == base and self.ha:
                self._active = None

    def _became_active(self, base: str) -> None:
        with self._lock:
            if self._active != base and self.ha:
                log.info("active %s is now %s", self.what, base)
            self._active = base


def _ha_state_of(text: str) -> str:
    """clusterInfo.haState of an /info body, '' when it is not there."""
    try:
        doc = json.loads(text)
        state = doc["clusterInfo"]["haState"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return ""
    return state if isinstance(state, str) else ""
