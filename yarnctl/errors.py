"""The one exception hierarchy yarnctl raises for problems a person can fix."""

from __future__ import annotations


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
