"""Citations and links: papers cited by their docs/papers.md key, never by a private file name or path; links that resolve."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from yarnctl.policies import REGISTRY
from yarnctl.sim.workload import builtin_names, load_workload

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("[DRESS]", "[HaSTE]", "[OPERA]", "[FEEDBACK]", "[H-MRF]")
# built from pieces so that this file does not match its own rule
PRIVATE = re.compile("_[0-9a-f]{16}" + r"\.txt" + "|" + r"\.\." + "/shared")
# the Hadoop baselines imitate Hadoop classes, not a paper
BASELINES = {"fifo", "fair", "drf", "capacity"}


def _tracked_files() -> list[Path]:
    """Every file git tracks, or every file under the tree when this is not a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def _offences(text: str) -> list[str]:
    """The lines of `text` that name a private paper file or the team's shared folder."""
    return [line.strip() for line in text.splitlines() if PRIVATE.search(line)]


def test_the_rule_catches_what_it_should() -> None:
    assert _offences("see " + "000_96feb1ab88a31da0" + ".txt Sec. 3")
    assert _offences("read .." + "/shared/design/ARCHITECTURE.md")
    assert not _offences("see [DRESS] Sec. IV-C, Alg. 3; application_1700000000000_0001")


def test_no_file_names_a_private_paper_file_or_the_shared_folder() -> None:
    bad = []
    for path in _tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files (images) cite nothing
        bad += [f"{path.relative_to(ROOT)}: {line}" for line in _offences(text)]
    assert bad == []


def test_papers_md_defines_every_key() -> None:
    text = (ROOT / "docs" / "papers.md").read_text(encoding="utf-8")
    table_keys = re.findall(r"^\| (\[[A-Za-z-]+\]) \|", text, flags=re.M)
    assert tuple(table_keys) == KEYS


@pytest.mark.parametrize("name", sorted(set(REGISTRY) - BASELINES))
def test_each_paper_policy_cites_its_paper_by_key(name: str) -> None:
    doc = sys.modules[REGISTRY[name].__module__].__doc__ or ""
    first = doc.strip().splitlines()[0]
    assert any(key in first for key in KEYS), first


@pytest.mark.parametrize("name", builtin_names())
def test_each_builtin_workload_cites_its_paper_by_key(name: str) -> None:
    source = load_workload(name).source
    assert any(source.startswith(key) for key in KEYS), source


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_relative_link_in_the_markdown_resolves() -> None:
    broken = []
    for path in _tracked_files():
        if path.suffix != ".md":
            continue
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            if not (path.parent / target.split("#", 1)[0]).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert broken == []
