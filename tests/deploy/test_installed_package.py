"""yarnctl installed as the Docker image installs it (`pip install` of the source, not editable): serve starts.

The image runs `pip install /opt/yarnctl/src`, so a module that reads a file of the source tree at
import (schema/, tests/) breaks `yarnctl serve` in the container and nowhere else; `make docker-test`
found one. This installs the package the same way into a temporary dir and starts serve from it,
away from the source tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from yarnctl.cluster.classpath import repo_root


def test_serve_starts_from_an_installed_package(tmp_path: Path) -> None:
    # what the image copies (the package and its metadata), so pip builds in tmp_path, not in the checkout
    src, site = tmp_path / "src", tmp_path / "site"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(repo_root() / name, src / name)
    shutil.copytree(repo_root() / "yarnctl", src / "yarnctl", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(site), str(src)], check=True, timeout=600, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(site), "HOME": str(tmp_path)}
    where = subprocess.run([sys.executable, "-c", "import yarnctl; print(yarnctl.__file__)"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(site)), where  # the installed copy, not the source tree
    proc = subprocess.Popen([sys.executable, "-m", "yarnctl.cli.main", "serve", "--policy", "dress", "--port", "0",
                             "--token-file", str(tmp_path / "token")], env=env, cwd=tmp_path,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 60
        assert proc.stderr is not None
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break  # serve exited
            lines.append(line)
            if "serving policy dress on 127.0.0.1:" in line:
                break
        assert proc.poll() is None and "serving policy dress" in "".join(lines), "".join(lines)[-3000:]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
