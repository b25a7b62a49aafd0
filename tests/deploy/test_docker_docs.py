"""The docker commands of README.md, docs/deploy.md and docker/README.md are the ones `make docker-test` runs.

docker/test.sh runs the documented journey on podman: its `docker` shell function hands `docker build`
and `docker compose -f docker/compose.yaml ...` to podman and podman-compose, so the commands stand in
the script exactly as a reader types them. This test takes every command of the guides' ```console
blocks that runs docker (and every other command of a block that starts with one, e.g. the curl
checks) and finds it in the script; and each docker command the script runs is in a guide.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from yarnctl.cluster.classpath import repo_root

ROOT = repo_root()
SCRIPT = ROOT / "docker" / "test.sh"
GUIDES = [ROOT / "README.md", ROOT / "docs" / "deploy.md", ROOT / "docker" / "README.md"]
_CONSOLE = re.compile(r"^```console\n(.*?)^```", re.M | re.S)
_DOCKER = re.compile(r"^(?:\w+=\S+ )*docker (?:build|compose) ")


def _norm(text: str) -> str:
    """Continuation lines joined, runs of blanks as one space."""
    return re.sub(r"[ \t]+", " ", re.sub(r"\\\n\s*", " ", text))


def commands(block: str) -> list[str]:
    """The `$ ` commands of a console block, continuations joined, trailing `# comments` dropped."""
    out = []
    for line in _norm(block).splitlines():
        if line.startswith("$ "):
            out.append(re.sub(r"\s+#\s.*$", "", line[2:]).strip())
    return out


def documented() -> dict[str, list[str]]:
    """guide -> its docker journey commands: docker commands, and all commands of blocks that start with one."""
    found: dict[str, list[str]] = {}
    for guide in GUIDES:
        for block in _CONSOLE.findall(guide.read_text()):
            cmds = commands(block)
            if cmds and _DOCKER.match(cmds[0]):
                found.setdefault(guide.name, []).extend(cmds)
            else:
                found.setdefault(guide.name, []).extend(c for c in cmds if _DOCKER.match(c))
    return found


def script_docker_commands() -> list[str]:
    """The docker commands docker/test.sh runs, without its redirections and `|| ...` handlers."""
    out = []
    for line in _norm(SCRIPT.read_text()).splitlines():
        line = line.strip()
        if _DOCKER.match(line):
            out.append(re.split(r" (?:[0-9]?>|\|)", line)[0].strip())
    return out


def test_every_guide_shows_the_journey() -> None:
    found = documented()
    for guide in GUIDES:
        assert any(_DOCKER.match(c) for c in found.get(guide.name, [])), f"{guide.name} shows no docker command"
    # the journey the script runs: build, up under the shim with a paper policy and under Capacity, a wordcount
    # on HDFS, the checks, down
    everything = [c for cmds in found.values() for c in cmds]
    for needle in ("docker build -f docker/Dockerfile", "YARNCTL_POLICY=dress docker compose",
                   "YARNCTL_SCHEDULER=capacity docker compose", " wordcount /input /output", "YarnctlShim",
                   "/api/v1/targets", "down -v"):
        assert any(needle in c for c in everything), needle


@pytest.mark.parametrize("guide", [g.name for g in GUIDES])
def test_the_guides_commands_are_the_ones_make_docker_test_runs(guide: str) -> None:
    script = _norm(SCRIPT.read_text())
    missing = [c for c in documented().get(guide, []) if c not in script]
    assert not missing, f"{guide}: not run by docker/test.sh (make docker-test): {missing}"


def test_the_script_runs_only_documented_docker_commands() -> None:
    docs = [c for cmds in documented().values() for c in cmds]
    runs = script_docker_commands()
    assert len(runs) >= 8
    undocumented = [c for c in runs if c not in docs]
    assert not undocumented, f"docker/test.sh runs docker commands no guide shows: {undocumented}"


def test_the_makefile_target_runs_the_script() -> None:
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"^docker-test:.*\n\t.*docker/test\.sh", make, re.M)
    # not part of the everyday tiers
    for target in ("check", "test"):
        recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)*)", make, re.M)
        assert recipe and "docker" not in recipe.group(0), target


def test_normalisation(tmp_path: Path) -> None:
    block = "$ A=1 docker compose -f x \\\n      exec  y   # a comment\nout\n$ curl -s z\n"
    assert commands(block) == ["A=1 docker compose -f x exec y", "curl -s z"]
