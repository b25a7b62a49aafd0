"""What stands in the way of making a directory, said plainly (mkdir says only "File exists" or "Not a directory")."""

from __future__ import annotations

from pathlib import Path


def file_in_the_way(path: Path) -> Path | None:
    """The nearest of `path` and its parents that exists, when it is not a directory; None when none is in the way."""
    for p in (path, *path.parents):
        try:
            if p.exists():
                return None if p.is_dir() else p
        except OSError:  # a parent this user cannot search: making the directory will say so
            return None
    return None
