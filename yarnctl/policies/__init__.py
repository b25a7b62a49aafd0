"""The policy registry: one literal dict from policy name to policy class."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yarnctl.engine import Policy
from yarnctl.errors import UnknownPolicyError
from yarnctl.policies.alignment import HasteA
from yarnctl.policies.base import parse_config
from yarnctl.policies.capacity import Capacity
from yarnctl.policies.drf import Drf
from yarnctl.policies.fair import Fair
from yarnctl.policies.ffd_dp import FfdDp
from yarnctl.policies.fifo import Fifo
from yarnctl.policies.haste import Haste

REGISTRY: dict[str, Any] = {
    "fifo": Fifo,
    "fair": Fair,
    "drf": Drf,
    "capacity": Capacity,
    "ffd-dp": FfdDp,
    "haste": Haste,
    "haste-a": HasteA,
}


def make_policy(name: str, params: Mapping[str, Any] | None = None) -> Policy:
    """A fresh policy instance by registry name, with its config built from `params`."""
    cls = REGISTRY.get(name)
    if cls is None:
        raise UnknownPolicyError(name, sorted(REGISTRY))
    policy: Policy = cls(parse_config(cls.Config, params, name))
    return policy
