"""The decision log: one compact JSON line per call (request and response as sent), and its reader."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from yarnctl.errors import YarnctlError
from yarnctl.paths import file_in_the_way

log = logging.getLogger(__name__)

FLUSH_EVERY_S = 1.0
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


class DecisionLogError(YarnctlError):
    """A decision log that cannot be read; the message names the file (and line)."""


class DecisionLog:
    """Buffered JSON-lines writer; a background thread flushes it at least every second."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # a text UTF-8 cannot hold (a lone surrogate) is written as its JSON escape, so a record never
            # stops between its pieces (`write`) and glues the next one to its head
            self._f: IO[str] | None = open(path, "a", encoding="utf-8", errors="backslashreplace", buffering=1 << 16)
        except OSError as e:
            blocker = file_in_the_way(path.parent)
            why = f"{blocker} is a file, not a directory" if blocker is not None else e.strerror
            raise DecisionLogError(f"{path}: cannot open the decision log: {why}") from None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_loop, name="decision-log-flush", daemon=True)
        self._flusher.start()

    def write(self, seq: int, node: str, policy: str, outcome: str, us: int, request: str, parsed: bool,
              response: str, rejected: list[list[str]], why: Mapping[str, str] | None = None,
              waiting: Mapping[str, Mapping[str, Any]] | None = None,
              shadow: Mapping[str, Any] | None = None, waited_us: int | None = None, t_ms: int | None = None) -> None:
        """Append one record; `request` is embedded as-is when it is one line of valid JSON.

        `why` is the policy's per-app reasons for what it decided (Decision.reasons), if it gave any;
        `waiting` why apps it left waiting got nothing (bridge/waits.py: code, text, values), when explained;
        `shadow` what a candidate policy under check decided on the same call, not applied (bridge/swap.py);
        `waited_us` how long the call waited for the service's lock, when that was long enough to note;
        `t_ms` when the call was answered (the row's `t`; now, if not given).
        """
        if not parsed:  # garbage is kept, as a JSON string, so the line stays valid
            req = _ENCODE(request if isinstance(request, str) else repr(request))
        elif "\n" in request or "\r" in request:  # valid but multi-line: the line must stay one line
            req = _ENCODE(json.loads(request))
        else:
            req = request
        extra = f',"why":{_ENCODE(dict(why))}' if why else ""
        if waiting:
            extra += f',"waiting":{_ENCODE(dict(waiting))}'
        if shadow:
            extra += f',"shadow":{_ENCODE(dict(shadow))}'
        if waited_us is not None:
            extra += f',"waited_us":{int(waited_us)}'
        t = time.time_ns() // 1_000_000 if t_ms is None else t_ms
        head = (f'{{"t":{t},"seq":{seq},"node":{_ENCODE(node)},"policy":{_ENCODE(policy)},'
                f'"outcome":"{outcome}","us":{us},"req":')
        tail = f',"resp":{response},"rejected":{_ENCODE(rejected) if rejected else "[]"}{extra}}}\n'
        with self._lock:
            if self._f is not None:  # in three writes: a full sync's request (~1 MB) is not copied into a line first
                self._f.write(head)
                self._f.write(req)
                self._f.write(tail)

    def event(self, doc: Mapping[str, Any]) -> None:
        """Append a record that is not a call (a policy swap: `doc` has its "event"); readers skip it."""
        line = _ENCODE({"t": time.time_ns() // 1_000_000, **doc}) + "\n"
        with self._lock:
            if self._f is not None:
                self._f.write(line)

    def flush(self) -> None:
        """Write buffered records to the file."""
        with self._lock:
            if self._f is not None:
                try:
                    self._f.flush()
                except OSError as e:  # a full disk must not stop the scheduler
                    log.error("decision log %s: %s", self.path, e)

    def _flush_loop(self) -> None:
        while not self._stop.wait(FLUSH_EVERY_S):
            self.flush()

    def close(self) -> None:
        """Flush and close; later writes are dropped."""
        self._stop.set()
        self.flush()
        with self._lock:
            if self._f is not None:
                self._f.close()
                self._f = None


@dataclass
class LogReader:
    """Iterates a decision log's call records (dicts); a cut-off last line ends it and sets `truncated`.

    Event records (a policy swap: `"event"` instead of a call's fields) are not calls: they are counted
    in `events`, not yielded.
    """

    path: Path
    truncated: bool = False
    records: int = 0
    events: int = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            f = open(self.path, "rb")  # bytes: only \n ends a record
        except OSError as e:
            raise DecisionLogError(f"{self.path}: cannot read the decision log: {e.strerror}") from None
        with f:
            lineno = 0
            for raw in f:
                lineno += 1
                if not raw.strip():
                    continue
                try:
                    rec = json.loads(raw)
                except ValueError:
                    if not raw.endswith(b"\n") and raw.startswith(b'{"t":'):  # the writer was cut off mid-line
                        self.truncated = True
                        log.warning("%s: line %d is cut off (the server stopped mid-write); ignored",
                                    self.path, lineno)
                        return
                    raise DecisionLogError(f"{self.path}:{lineno}: not a decision log record (not JSON)") from None
                if isinstance(rec, dict) and isinstance(rec.get("event"), str):
                    self.events += 1
                    continue
                if not (isinstance(rec, dict) and {"seq", "node", "outcome", "req", "resp"} <= rec.keys()):
                    raise DecisionLogError(f"{self.path}:{lineno}: not a decision log record "
                                           f"(needs seq, node, outcome, req, resp)")
                self.records += 1
                yield rec
