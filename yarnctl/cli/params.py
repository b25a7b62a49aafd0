"""Policy parameters from the command line: `--policy-config FILE` and `--param POLICY.KEY=VALUE`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import yaml

from yarnctl.errors import ConfigError
from yarnctl.sim.workload import load_yaml


class OtherPolicyError(ConfigError):
    """Parameters given for a policy the command does not run; `policy` names it."""

    def __init__(self, message: str, policy: str) -> None:
        super().__init__(message)
        self.policy = policy


def check_max_am_share(args: argparse.Namespace) -> None:
    """`--max-am-share` (simulate, serve): a fraction in (0, 1] or absent; ConfigError otherwise."""
    if args.max_am_share is not None and not 0 < args.max_am_share <= 1:
        raise ConfigError(f"--max-am-share {args.max_am_share:g}: expected a fraction in (0, 1]")


def policy_params(args: argparse.Namespace, policies: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each policy's parameters from --policy-config FILE, then --param POLICY.KEY=VALUE (later wins)."""
    params: dict[str, dict[str, Any]] = {}
    if args.policy_config:
        try:
            doc = load_yaml(args.policy_config.read_text()) or {}
        except UnicodeDecodeError as e:
            raise ConfigError(f"{args.policy_config}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        except OSError as e:
            raise ConfigError(f"{args.policy_config}: cannot read: {e.strerror}") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"{args.policy_config}: malformed YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
            raise ConfigError(f"{args.policy_config}: expected a mapping of policy name to parameters")
        params.update({str(k): dict(v) for k, v in doc.items()})
    for item in args.param:
        name, sep, value = item.partition("=")
        policy, dot, key = name.partition(".")
        if not sep or not dot or not policy or not key:
            raise ConfigError(f"--param {item!r}: expected POLICY.KEY=VALUE, e.g. fair.assign_multiple=true")
        try:
            params.setdefault(policy, {})[key] = yaml.safe_load(value) if value else ""
        except yaml.YAMLError as e:
            raise ConfigError(f"--param {item!r}: malformed value: {str(e).splitlines()[0]}") from None
    for name in params:
        if name not in policies:
            raise OtherPolicyError(f"parameters given for {name!r}, which is not among --policy {','.join(policies)}",
                                   name)
    return params
