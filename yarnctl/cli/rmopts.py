"""The ResourceManager client that the --rm/--yarn-site options of `serve` and `status` name."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the HTTP client loads only when a command uses it: every CLI start imports this module
    from yarnctl.rm import HttpSettings, ResourceManager


def resource_manager(args: argparse.Namespace, settings: HttpSettings,
                     default_urls: Sequence[str] = ()) -> ResourceManager | None:
    """A client for --yarn-site, else the --rm URLs (repeated or comma-separated), else `default_urls`; None if none."""
    from yarnctl.rm import ResourceManager

    if args.yarn_site is not None:
        return ResourceManager.from_yarn_site(args.yarn_site, settings=settings)
    urls = [u.strip() for arg in args.rm for u in arg.split(",") if u.strip()] or list(default_urls)
    return ResourceManager(urls, settings=settings) if urls else None
