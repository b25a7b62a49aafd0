"""The py4j callback server that exposes a PolicyService to the shim (py4j stays in yarnctl/bridge)."""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import socket
import stat
import threading
from pathlib import Path

from py4j.java_gateway import (  # type: ignore[import-untyped]
    CallbackServerParameters,
    GatewayParameters,
    JavaGateway,
)
from py4j.protocol import Py4JNetworkError  # type: ignore[import-untyped]

from yarnctl import jsonout
from yarnctl.bridge.service import PolicyService
from yarnctl.errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 25334  # py4j's default python callback port, which the shim dials by default
# what `yarnctl serve` sets: a waiting heartbeat gets the GIL within 0.2 ms (measured by yarnctl.bridge.gilbench)
SWITCH_INTERVAL_S = 0.0002


def load_token(path: Path) -> str:
    """The bridge auth token in `path`, created (0600, parent 0700) if missing; refused if others can read it."""
    path = path.expanduser()
    if not path.exists():
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process just created it: read theirs
        except OSError as e:
            raise ConfigError(f"{path}: cannot create the bridge token: {e.strerror}") from None
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(32) + "\n")
            log.info("created bridge token file %s", path)
    return read_token(path)


def read_token(path: Path) -> str:
    """The bridge auth token in `path` (never created: a client's view); ConfigError naming what is wrong."""
    path = path.expanduser()
    if not path.exists():
        raise ConfigError(f"{path}: no bridge token file (give the one `yarnctl serve --token-file` uses)")
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path}: the bridge token must be a regular file")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            what = "read" if mode & 0o044 else "change"
            raise ConfigError(f"{path}: mode {mode:04o} lets other users {what} the bridge token; chmod 600 it")
        token = path.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the bridge token: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: the bridge token is not text") from None
    if not token or any(ch.isspace() for ch in token):
        raise ConfigError(f"{path}: expected one token on one line (delete the file to get a new one)")
    return token


def check_address(address: str, allow_remote: bool) -> None:
    """Refuse an address that does not resolve, and one beyond loopback unless `allow_remote`: the token alone then guards the RM's scheduler."""
    try:
        infos = socket.getaddrinfo(address, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as e:  # with --allow-remote too: it ended in py4j's traceback at bind time
        raise ConfigError(f"--address {address}: cannot resolve it: {e.strerror}") from None
    except UnicodeError as e:  # e.g. an empty label ("a..b"): the IDNA codec refuses it
        raise ConfigError(f"--address {address}: not a host name: {e}") from None
    if allow_remote:
        return
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if not ip.is_loopback:
            raise ConfigError(f"--address {address} is not a loopback address ({ip}); the shim and the "
                              f"server normally share the RM host: pass --allow-remote to listen there anyway")


def _start_failure(record: logging.LogRecord) -> bool:
    """Drop py4j's own report of a callback server that could not start: `PolicyServer.start` says it in one line."""
    return not record.getMessage().startswith("An error occurred while trying to start the callback server")


class _CalleeGateway(JavaGateway):  # type: ignore[misc]
    """A JavaGateway that never dials Java: py4j's own failure cleanup would send Java's gateway a shutdown."""

    def shutdown(self, raise_exception: bool = False) -> None:
        self.shutdown_callback_server(raise_exception)


_PY4J_AUTH_LOGGERS = ("py4j.java_gateway", "py4j.clientserver")  # where py4j logs a failed authentication


class _AuthFailures(logging.Filter):
    """py4j's failed-login ERRORs with tracebacks, as one counted WARNING line per connection.

    py4j logs a refused token as "Could not authenticate connection.". When the login itself breaks
    (e.g. the peer closed mid-login: the shim gives up on a connection past its deadline), it logs "An
    exception occurred while trying to authenticate a connection" first, on the same thread: that
    one becomes the line, naming the cause, and the refusal after it is dropped.
    """

    _BROKEN = "An exception occurred while trying to authenticate a connection"

    def __init__(self, service: PolicyService) -> None:
        super().__init__()
        self.service = service
        self._broken = threading.local()  # this connection thread logged a broken login just now

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message == self._BROKEN:
            self.service.stats.auth_failures += 1
            cause = record.exc_info[1] if record.exc_info else None
            # the type, and an OSError's reason: never the exception's text, which may quote what was sent
            what = type(cause).__name__ + (f": {cause.strerror}" if isinstance(cause, OSError) and cause.strerror else "")
            self._broken.pending = True
            self._one_line(record, "a connection broke during its login (%s; %d failed logins so far), e.g. the shim "
                                   "giving up on a call past its deadline", what, self.service.stats.auth_failures)
            return True
        if message != "Could not authenticate connection.":
            return True
        if getattr(self._broken, "pending", False):
            self._broken.pending = False
            return False  # its cause is the line just logged
        self.service.stats.auth_failures += 1
        # a port probe or a health check connects without the token: worth a line, not a stack
        self._one_line(record, "refused a connection without the bridge token (%d so far; a port probe, "
                               "a shim with another token, or someone else)", self.service.stats.auth_failures)
        return True

    @staticmethod
    def _one_line(record: logging.LogRecord, msg: str, *args: object) -> None:
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.msg, record.args = msg, args
        record.exc_info, record.exc_text = None, None


class PolicyServer:
    """A py4j callback server with `service` as its Python entry point (object id "t")."""

    def __init__(self, service: PolicyService, token: str, address: str = DEFAULT_ADDRESS,
                 port: int = DEFAULT_PORT) -> None:
        self.service, self.address, self.port = service, address, port
        self._token = token
        self._gateway: JavaGateway | None = None
        self._auth_filter = _AuthFailures(service)

    def start(self) -> int:
        """Listen (without connecting to Java) and return the bound port."""
        # py4j logs every callback at INFO: at 2,000 heartbeats/s that is the whole log
        logging.getLogger("py4j").setLevel(logging.WARNING)
        for name in _PY4J_AUTH_LOGGERS:
            logging.getLogger(name).addFilter(self._auth_filter)
        starting = logging.getLogger("py4j.java_gateway")
        starting.addFilter(_start_failure)
        try:
            # eager_load=False: Python is the callee only; nothing dials the Java gateway. The shim
            # reaches `service` through CallbackClient.getPythonServerEntryPoint, i.e. object "t"
            # in the gateway's proxy pool, which JavaGateway fills from python_server_entry_point.
            self._gateway = _CalleeGateway(
                gateway_parameters=GatewayParameters(eager_load=False),
                callback_server_parameters=CallbackServerParameters(
                    address=self.address, port=self.port, auth_token=self._token, daemonize=True,
                    daemonize_connections=True, accept_timeout=0.5),
                python_server_entry_point=self.service)
        except Py4JNetworkError as e:  # py4j logs it with a traceback too: `_start_failure` keeps that out
            cause = getattr(e, "cause", None)
            why = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause or e)
            raise ConfigError(f"cannot listen on {self.address}:{self.port}: {why}") from None
        finally:
            starting.removeFilter(_start_failure)
        cb = self._gateway.get_callback_server()
        # py4j binds in start() but calls listen() later in its accept thread: a shim dialling in
        # between is refused. Listening here first closes that window (a second listen() is harmless).
        cb.server_socket.listen(5)
        self.port = int(cb.get_listening_port())
        return self.port

    def stop(self) -> None:
        """Close every callback connection and stop listening."""
        if self._gateway is not None:
            self._gateway.shutdown_callback_server()
            self._gateway.close(keep_callback_server=True)
            self._gateway = None
        for name in _PY4J_AUTH_LOGGERS:
            logging.getLogger(name).removeFilter(self._auth_filter)


def write_status(path: Path, doc: dict[str, object]) -> None:
    """Replace `path` with `doc` as JSON atomically (readers never see half a file)."""
    path = path.expanduser()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(jsonout.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")  # strict: tools read it
        os.replace(tmp, path)
    except OSError as e:  # the status file is for tooling; the server keeps serving
        log.warning("cannot write status file %s: %s", path, e.strerror)

