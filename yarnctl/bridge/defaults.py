"""Where the policy server keeps its files by default: one definition each, light enough for every CLI start."""

from pathlib import Path

DEFAULT_TOKEN_FILE = Path("~/.yarnctl/bridge.token")  # the shim's yarnctl.shim.token-file default too
DEFAULT_STATUS_FILE = Path("~/.yarnctl/serve-status.json")  # what `yarnctl status` reads by default
