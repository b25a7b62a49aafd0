"""Classpath resolution is cached per pom content; Maven runs only on a miss."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from yarnctl.cluster import classpath as cp
from yarnctl.errors import ClusterError


@pytest.fixture
def fake_mvn(tmp_path: Path) -> tuple[str, Path, list[Path]]:
    """A `mvn` stand-in that writes a classpath of two real files and counts its runs."""
    jars = [tmp_path / "m2" / "a.jar", tmp_path / "m2" / "b.jar"]
    for j in jars:
        j.parent.mkdir(parents=True, exist_ok=True)
        j.write_bytes(b"PK")
    calls = tmp_path / "calls"
    script = tmp_path / "mvn"
    script.write_text(f"""#!/bin/sh
echo run >> {calls}
for a in "$@"; do
  case $a in -Dmdep.outputFile=*) printf '%s' "{jars[0]}:{jars[1]}" > "${{a#-Dmdep.outputFile=}}" ;; esac
done
echo "Downloaded from central: x"
""")
    script.chmod(0o755)
    return str(script), calls, jars


def _pom(tmp_path: Path, body: str = "<project/>") -> Path:
    pom = tmp_path / "pom.xml"
    pom.write_text(body)
    return pom


def _runs(calls: Path) -> int:
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def test_resolves_once_then_uses_cache(tmp_path: Path, fake_mvn: tuple[str, Path, list[Path]]) -> None:
    mvn, calls, jars = fake_mvn
    pom, cache = _pom(tmp_path), tmp_path / "cache"
    lines: list[str] = []
    got, f = cp.resolve_classpath(pom, cache, mvn=mvn, progress=lines.append)
    assert got == [str(j) for j in jars]
    assert f.read_text() == os.pathsep.join(got)
    assert _runs(calls) == 1
    assert any("resolving" in s for s in lines)
    again, f2 = cp.resolve_classpath(pom, cache, mvn=mvn)
    assert again == got and f2 == f and _runs(calls) == 1  # cache hit: no Maven


def test_pom_change_resolves_again(tmp_path: Path, fake_mvn: tuple[str, Path, list[Path]]) -> None:
    mvn, calls, _ = fake_mvn
    pom, cache = _pom(tmp_path), tmp_path / "cache"
    cp.resolve_classpath(pom, cache, mvn=mvn)
    pom.write_text("<project><!-- changed --></project>")
    cp.resolve_classpath(pom, cache, mvn=mvn)
    assert _runs(calls) == 2
    assert len(list(cache.glob("classpath-*.txt"))) == 2


def test_missing_jar_invalidates_cache(tmp_path: Path, fake_mvn: tuple[str, Path, list[Path]]) -> None:
    mvn, calls, jars = fake_mvn
    pom, cache = _pom(tmp_path), tmp_path / "cache"
    cp.resolve_classpath(pom, cache, mvn=mvn)
    jars[1].unlink()  # e.g. ~/.m2 cleaned
    assert cp.cached_classpath(pom, cache) is None
    cp.resolve_classpath(pom, cache, mvn=mvn)
    assert _runs(calls) == 2


def test_no_maven_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="'no-such-mvn' not found on PATH: install Maven"):
        cp.resolve_classpath(_pom(tmp_path), tmp_path / "cache", mvn="no-such-mvn")


def test_maven_failure_names_the_log(tmp_path: Path) -> None:
    script = tmp_path / "mvn"
    script.write_text("#!/bin/sh\necho '[ERROR] Failed to collect dependencies for x'\nexit 1\n")
    script.chmod(0o755)
    with pytest.raises(ClusterError, match=r"failed \(mvn exit 1\): Failed to collect dependencies for x; read .*mvn-"):
        cp.resolve_classpath(_pom(tmp_path), tmp_path / "cache", mvn=str(script))


def test_missing_pom(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="runtime pom not found"):
        cp.resolve_classpath(tmp_path / "nope.xml", tmp_path)


def test_shim_jar_staleness(tmp_path: Path) -> None:
    src = tmp_path / "java-bridge" / "src" / "main" / "X.java"
    src.parent.mkdir(parents=True)
    src.write_text("class X {}")
    (tmp_path / "java-bridge" / "pom.xml").write_text("<project/>")
    assert cp.shim_jar_stale(tmp_path)  # no jar
    jar = cp.shim_jar_path(tmp_path)
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"PK")
    assert not cp.shim_jar_stale(tmp_path)
    later = time.time() + 10
    os.utime(src, (later, later))
    assert cp.shim_jar_stale(tmp_path)


def test_real_runtime_pom_excludes_minikdc() -> None:
    # hadoop-minikdc drags in apacheds-jdbm1 (packaging "bundle"), which does not resolve
    text = (cp.repo_root() / "java-bridge" / "cluster" / "pom.xml").read_text()
    assert text.count("<artifactId>hadoop-minikdc</artifactId>") >= text.count("<artifactId>hadoop-") // 2 - 2
    assert "<artifactId>yarnctl-cluster-runtime</artifactId>" in text and "<packaging>pom</packaging>" in text
