"""The policy registry: one literal dict from policy name to policy class."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yarnctl.errors import UnknownPolicyError
from yarnctl.policies.af import Af
from yarnctl.policies.alignment import HasteA
from yarnctl.policies.base import parse_config
from yarnctl.policies.capacity import Capacity
from yarnctl.policies.contract import Policy
from yarnctl.policies.drf import Drf
from yarnctl.policies.dress import Dress
from yarnctl.policies.fair import Fair
from yarnctl.policies.feedback import Feedback
from yarnctl.policies.ffd_dp import FfdDp
from yarnctl.policies.fifo import Fifo
from yarnctl.policies.haste import Haste
from yarnctl.policies.hmrf import Hmrf
from yarnctl.policies.lt_af import LtAf
from yarnctl.policies.lt_drf import LtDrf
from yarnctl.policies.opera import Opera

REGISTRY: dict[str, Any] = {
    "fifo": Fifo,
    "fair": Fair,
    "drf": Drf,
    "capacity": Capacity,
    "dress": Dress,
    "ffd-dp": FfdDp,
    "haste": Haste,
    "haste-a": HasteA,
    "af": Af,
    "lt-drf": LtDrf,
    "lt-af": LtAf,
    "hmrf": Hmrf,
    "feedback": Feedback,
    "opera": Opera,
}


def make_policy(name: str, params: Mapping[str, Any] | None = None) -> Policy:
    """A fresh policy instance by registry name, with its config built from `params`."""
    cls = REGISTRY.get(name)
    if cls is None:
        raise UnknownPolicyError(name, sorted(REGISTRY))
    policy: Policy = cls(parse_config(cls.Config, params, name))
    return policy
