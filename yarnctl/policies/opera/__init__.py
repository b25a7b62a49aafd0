"""OPERA (002_09dd669584f5ac37.txt): opportunistic assignment of idle resources to short tasks."""

from yarnctl.policies.opera.policy import Opera, OperaConfig

__all__ = ["Opera", "OperaConfig"]
