"""HTTP GETs for the RM/NM clients: the only module of yarnctl that imports `requests`.

A `Transport` does one GET and reports what came back, redirects included (never followed):
deciding where to go next is the failover logic's job (`yarnctl.rm.failover`), so credentials are
only ever sent to addresses the user configured. Tests inject a fake `Transport`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import requests
import urllib3

from yarnctl.errors import RMConfigError

Auth = Literal["none", "kerberos"]
MAX_BODY_BYTES = 256 << 20  # the nodes or apps of a large cluster are a few MB: more is garbage, or an attack


class TransportFailure(Exception):
    """The request got no HTTP answer at all (refused, DNS, TLS, timeout); the message says which."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One HTTP answer: status, the Location header (for redirects) and the body text."""

    url: str
    status: int
    text: str
    location: str = ""
    content_type: str = ""


class Transport(Protocol):
    """Does one GET; raises TransportFailure when there is no HTTP answer."""

    def get(self, url: str, params: Mapping[str, str]) -> Reply: ...


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """How the clients talk HTTP: timeouts, retry rounds and backoff, TLS verification, auth.

    `verify` is True (system CAs), False (no verification) or the path of a CA bundle.
    `retries` counts extra rounds over all addresses after the first; only GETs are ever sent,
    so a retry is always safe. Backoff before round n (1-based) is min(backoff_s * 2**(n-1), backoff_max_s).
    """

    connect_timeout_s: float = 3.05
    read_timeout_s: float = 10.0
    answer_timeout_s: float = 60.0  # a whole answer: a server trickling bytes never trips the read timeout
    retries: int = 2
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    verify: bool | str = True
    auth: Auth = "none"

    def backoff(self, round_no: int) -> float:
        """Seconds to wait before retry round `round_no` (1 = the first retry)."""
        return float(min(self.backoff_s * 2 ** (round_no - 1), self.backoff_max_s))


def kerberos_auth() -> Any:
    """A SPNEGO auth handler from the optional `requests-kerberos` package (imported only when asked for)."""
    try:
        from requests_kerberos import OPTIONAL, HTTPKerberosAuth  # type: ignore[import-not-found]
    except ImportError:
        raise RMConfigError("Kerberos/SPNEGO auth needs the optional extra: pip install 'yarnctl[kerberos]' "
                            "(the requests-kerberos package is not installed)") from None
    # OPTIONAL: Hadoop's SPNEGO filter does not always send a mutual-auth token back
    return HTTPKerberosAuth(mutual_authentication=OPTIONAL)


class HttpTransport:
    """A `requests.Session` with explicit (connect, read) timeouts, TLS settings and optional SPNEGO."""

    def __init__(self, settings: HttpSettings | None = None, session: requests.Session | None = None) -> None:
        self.settings = settings or HttpSettings()
        self.session = session or requests.Session()
        self.session.verify = self.settings.verify
        self.session.headers["Accept"] = "application/json"
        if self.settings.auth == "kerberos":
            self.session.auth = kerberos_auth()

    def get(self, url: str, params: Mapping[str, str]) -> Reply:
        """GET without following redirects; TransportFailure when no whole HTTP answer came back."""
        s = self.settings
        try:
            with self.session.get(url, params=dict(params), allow_redirects=False, stream=True,
                                  timeout=(s.connect_timeout_s, s.read_timeout_s)) as r:
                body = _body(r, time.monotonic() + s.answer_timeout_s, s.answer_timeout_s)
        except requests.exceptions.ConnectTimeout:
            raise TransportFailure(f"connect timed out after {s.connect_timeout_s:g} s") from None
        except requests.exceptions.ReadTimeout:
            raise TransportFailure(f"no answer within the {s.read_timeout_s:g} s read timeout") from None
        except requests.exceptions.SSLError as e:
            raise TransportFailure(f"TLS error ({_reason(e)}); check the CA bundle (verify=)") from None
        except requests.exceptions.ConnectionError as e:
            raise TransportFailure(f"connection failed ({_reason(e)})") from None
        except requests.exceptions.RequestException as e:
            raise TransportFailure(f"request failed ({_reason(e)})") from None
        except ValueError as e:  # requests reading a Location it cannot parse, e.g. http://[::1/x
            raise TransportFailure(f"unreadable answer ({e})") from None
        return Reply(url=r.url or url, status=r.status_code, text=_text(body, r.encoding),
                     location=r.headers.get("Location", ""), content_type=r.headers.get("Content-Type", ""))

    def close(self) -> None:
        """Close pooled connections."""
        self.session.close()


def _body(r: requests.Response, deadline: float, timeout_s: float) -> bytes:
    """The answer's bytes, decompressed; TransportFailure past MAX_BODY_BYTES or the deadline."""
    body = bytearray()
    try:
        # read1: what has arrived (read(n) waits for n bytes, so a trickle of bytes never met the deadline);
        # urllib3 2 bounds each decompressed piece too, so a gzip bomb is cut off like an endless body
        while chunk := r.raw.read1(1 << 16, decode_content=True):
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise TransportFailure(f"an answer of more than {MAX_BODY_BYTES >> 20} MiB: no RM or NM sends one")
            if time.monotonic() > deadline:
                raise TransportFailure(f"the answer was not complete within {timeout_s:g} s")
    except urllib3.exceptions.ReadTimeoutError:
        raise TransportFailure("the answer stopped for longer than the read timeout") from None
    except urllib3.exceptions.HTTPError as e:  # a cut-off body, bad chunking or bad gzip
        raise TransportFailure(f"a broken answer ({_reason(e)})") from None
    return bytes(body)


def _text(body: bytes, encoding: str | None) -> str:
    try:
        return body.decode(encoding or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _reason(e: BaseException) -> str:
    """The useful part of a requests/urllib3 exception chain, e.g. '[Errno 111] Connection refused'."""
    text = str(e)
    m = _ERRNO.search(text)
    return m.group(0).rstrip() if m else text[:200]


_ERRNO = re.compile(r"\[Errno -?\d+\] [^'\")]+")
