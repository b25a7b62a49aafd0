"""OPERA [OPERA]: opportunistic assignment of idle resources to short tasks."""

from yarnctl.policies.opera.policy import Opera, OperaConfig

__all__ = ["Opera", "OperaConfig"]
