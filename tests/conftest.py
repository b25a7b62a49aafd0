"""Test-wide settings: Hypothesis profiles (HYPOTHESIS_PROFILE=thorough for a long search)."""

import os

from hypothesis import HealthCheck, settings

# the default profile is derandomized so CI runs the examples a developer ran; `thorough` keeps searching anew
settings.register_profile("default", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=600, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
