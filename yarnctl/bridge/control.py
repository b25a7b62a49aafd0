"""The policy server's control socket: `yarnctl policy` commands, one JSON line each way over a Unix socket.

The socket file is the owner's alone (0600), and every request carries the bridge token as well
(the file mode guards the host, the token the people who share the account). Commands:
`show`, `set` (a `SwapPlan`) and `rollback` (bridge/swap.py). The answer is {"ok": true, ...} or
{"ok": false, "error": "one line"}; a malformed request is answered, logged and counted, never fatal.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import socket
import socketserver
import stat
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from yarnctl.errors import ConfigError, YarnctlError

log = logging.getLogger(__name__)

MAX_LINE = 1 << 16  # a request is a policy name and its parameters; anything longer is not one
MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux, 104 on the BSDs
Handler = Callable[[Mapping[str, Any]], Mapping[str, Any]]


class ControlError(YarnctlError):
    """The control socket could not be reached or refused the request; the message says which and why."""


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    control: ControlServer


class _Connection(socketserver.StreamRequestHandler):
    timeout = 10.0  # a client that connects and says nothing must not hold a thread forever

    def handle(self) -> None:
        ctl = self.server.control  # type: ignore[attr-defined]
        try:
            raw = self.rfile.readline(MAX_LINE + 1)
        except OSError:
            return
        if not raw:  # the client left without asking (a readiness probe: cluster up, restart-serve): no request to refuse
            return
        answer = ctl.answer(raw)
        try:
            self.wfile.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
        except OSError:
            pass  # the client left; it learns nothing, the server goes on


class ControlServer:
    """Serves `handler` on the Unix socket `path` to clients that send the token."""

    def __init__(self, path: Path, token: str, handler: Handler) -> None:
        self.path, self._token, self._handler = path.expanduser(), token, handler
        self.refused = 0  # requests without the right token, or not JSON: logged and counted
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Bind the socket (0600), replacing a stale one; ConfigError when another server listens there."""
        path = self.path
        if len(str(path)) > MAX_SOCKET_PATH:
            raise ConfigError(f"--control-socket {path}: {len(str(path))} characters, over the {MAX_SOCKET_PATH} a "
                              f"Unix socket path may have; give a shorter one")
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"--control-socket {path}: cannot create its directory: {e.strerror}") from None
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise ConfigError(f"--control-socket {path}: a file that is not a socket is there; give another path")
            if accepts(path):
                raise ConfigError(f"--control-socket {path}: another policy server listens there; give another path")
            path.unlink()  # a server that died without cleaning up
        old = os.umask(0o177)  # the socket is created 0600: no window in which others may connect
        try:
            server = _Server(str(path), _Connection)
        except OSError as e:
            raise ConfigError(f"--control-socket {path}: cannot listen: {e.strerror}") from None
        finally:
            os.umask(old)
        server.control = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5},
                                        name="control-socket", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and remove the socket file."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._server = None
        try:
            self.path.unlink()
        except OSError:
            pass

    def answer(self, raw: bytes) -> dict[str, Any]:
        """The answer to one request line (never raises)."""
        if len(raw) > MAX_LINE:
            return self._refuse(f"request over {MAX_LINE} bytes")
        try:
            doc = json.loads(raw)
        except ValueError:
            return self._refuse("request is not one line of JSON")
        if not isinstance(doc, dict):
            return self._refuse("request is not a JSON object")
        token = doc.pop("token", None)
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), self._token.encode()):
            return self._refuse("wrong or missing bridge token")
        try:
            return {"ok": True, **self._handler(doc)}
        except YarnctlError as e:
            return {"ok": False, "error": str(e)}
        except Exception as e:  # a bug in a command must not stop the server that decides
            log.exception("control request %s failed", doc.get("command"))
            return {"ok": False, "error": f"internal error: {type(e).__name__}: {e}"[:500]}

    def _refuse(self, why: str) -> dict[str, Any]:
        self.refused += 1
        log.warning("control socket %s: refused a request: %s (%d so far)", self.path, why, self.refused)
        return {"ok": False, "error": why}


def accepts(path: Path, timeout_s: float = 1.0) -> bool:
    """True when something accepts connections on the Unix socket `path` (a dead server's file refuses them)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)
        try:
            s.connect(str(path))
        except OSError:
            return False
    return True


def request(path: Path, token: str, doc: Mapping[str, Any], timeout_s: float = 30.0) -> dict[str, Any]:
    """Send one command to the control socket at `path`; its answer, or ControlError naming what failed."""
    path = path.expanduser()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)
        try:
            s.connect(str(path))
            s.sendall(json.dumps({**doc, "token": token}, separators=(",", ":")).encode() + b"\n")
            with s.makefile("rb") as f:
                raw = f.readline(MAX_LINE * 16)
        except FileNotFoundError:
            raise ControlError(f"{path}: no control socket (is `yarnctl serve` running, and with this path?)") from None
        except PermissionError:
            raise ControlError(f"{path}: permission denied (the socket is its owner's alone; run as that user)") \
                from None
        except OSError as e:
            raise ControlError(f"{path}: cannot talk to the policy server: {e.strerror or e}") from None
    try:
        answer = json.loads(raw)
    except ValueError:
        raise ControlError(f"{path}: the policy server closed the connection without an answer") from None
    if not isinstance(answer, dict):
        raise ControlError(f"{path}: not an answer from a policy server: {raw[:80]!r}")
    if not answer.get("ok"):
        raise ControlError(f"the policy server refused: {answer.get('error', 'no reason given')}")
    return answer
