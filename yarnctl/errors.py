"""The one exception hierarchy yarnctl raises for problems a person can fix."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


class YarnctlError(Exception):
    """Base class: the message is one line a person can act on."""


class WorkloadError(YarnctlError):
    """A workload or trace file is malformed; the message names the file and the field."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source, self.field, self.problem = source, field, problem
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {problem}")


class ConfigError(YarnctlError):
    """A policy or CLI configuration value is invalid."""


class UnknownPolicyError(ConfigError):
    """A policy name that is not in the registry."""

    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__(f"unknown policy {name!r}; valid policies: {', '.join(valid)}")


class ClusterError(YarnctlError):
    """The local Hadoop cluster could not be resolved, started, reached or stopped; the message names the log to read."""


class RMError(YarnctlError):
    """A ResourceManager or NodeManager REST/JMX call failed; the message names the URL and what to check."""

    def __init__(self, message: str, url: str = "") -> None:
        self.url = url
        super().__init__(message)


class RMConfigError(RMError, ConfigError):
    """The client cannot be set up: no RM address, a bad yarn-site.xml, a missing optional extra."""


# where each daemon's web address is configured, for the hint of an unreachable one
WEB_ADDRESS = {"NodeManager": "yarn.nodemanager.webapp.address",
               "JobHistoryServer": "mapreduce.jobhistory.webapp.address",
               "HDFS daemon": "dfs.namenode.http-address or dfs.datanode.http.address"}


class RMUnreachable(RMError):
    """No daemon answered: every URL tried (each RM of an HA pair, or the one NM) and what each said."""

    def __init__(self, what: str, path: str, attempts: list[tuple[str, str]], rounds: int) -> None:
        self.path, self.attempts, self.rounds = path, tuple(attempts), rounds
        # one line per URL, last word wins: repeated rounds add nothing a person can use
        last: dict[str, str] = {}
        for url, said in attempts:
            last[url] = said
        tried = "; ".join(f"{url}: {said}" for url, said in last.items())
        super().__init__(
            f"no {what} answered GET {path} ({rounds} round{'s' if rounds != 1 else ''}): {tried}; "
            f"check that the {what} is running and that "
            + ("yarn.resourcemanager.webapp.address[.<rm-id>] (or the URLs given) point at it"
               if what == "ResourceManager" else f"the URL is its web address ({WEB_ADDRESS.get(what, 'its web UI host:port')})"),
            next(iter(last), ""))


class RMHTTPError(RMError):
    """A daemon answered with an HTTP error status; `remote` is Hadoop's RemoteException message if any."""

    def __init__(self, url: str, status: int, remote: str = "", hint: str = "") -> None:
        self.status, self.remote = status, remote
        said = f": {remote}" if remote else ""
        super().__init__(f"GET {url}: HTTP {status}{said}{'; ' + hint if hint else ''}", url)


class AppNotFound(RMHTTPError):
    """The ResourceManager does not know this application id (HTTP 404)."""

    def __init__(self, url: str, app_id: str, remote: str = "") -> None:
        self.app_id = app_id
        super().__init__(url, 404, remote or f"app {app_id} not found",
                         f"the RM has no application {app_id}: check the id, and whether the RM restarted "
                         f"(ids embed the RM start time) or the app aged out (yarn.resourcemanager.max-completed-applications)")


class RMParseError(RMError):
    """A response was not the JSON the Hadoop 2.7 REST API documents; names the URL and the field."""

    def __init__(self, url: str, field: str, problem: str) -> None:
        self.field, self.problem = field, problem
        where = f" field {field!r}" if field else ""
        super().__init__(f"GET {url}:{where} {problem}; is this a Hadoop 2.7 ResourceManager/NodeManager "
                         f"web address (not a proxy or login page)?", url)


def script_exit(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """Run a `python -m` script's `main`: a YarnctlError becomes one `error:` line on stderr and exit 2."""
    try:
        return main(argv)
    except YarnctlError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
