"""The Hadoop 2.7.7 runtime classpath, resolved by Maven from java-bridge/cluster/pom.xml and cached.

The cache key is a hash of the pom, so editing the pom re-resolves; a cached classpath whose jars
have disappeared from ~/.m2 is resolved again too. Also builds the shim jar when it is missing or
older than its sources.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from yarnctl.errors import ClusterError

log = logging.getLogger(__name__)

Progress = Callable[[str], None]

SHIM_JAR_NAME = "yarnctl-shim-0.1.0.jar"


def repo_root() -> Path:
    """The yarnctl source tree holding hadoop-conf/, java-bridge/ and docker/ ($YARNCTL_HOME overrides)."""
    env = os.environ.get("YARNCTL_HOME")
    return Path(env) if env else Path(__file__).resolve().parents[2]


def default_cache_dir() -> Path:
    """Where resolved classpaths are cached (~/.yarnctl/cache)."""
    return Path.home() / ".yarnctl" / "cache"


def pom_digest(pom: Path) -> str:
    """Short content hash of a pom: the classpath cache key."""
    return hashlib.sha256(pom.read_bytes()).hexdigest()[:16]


def cached_classpath(pom: Path, cache_dir: Path) -> list[str] | None:
    """The cached classpath for this exact pom, or None when absent or any jar is gone."""
    f = cache_dir / f"classpath-{pom_digest(pom)}.txt"
    try:
        entries = [e for e in f.read_text().strip().split(os.pathsep) if e]
    except OSError:
        return None
    if not entries or not all(Path(e).is_file() for e in entries):
        return None
    return entries


def resolve_classpath(pom: Path | None = None, cache_dir: Path | None = None, *,
                      mvn: str = "mvn", progress: Progress | None = None,
                      timeout_s: float = 1800.0) -> tuple[list[str], Path]:
    """Return (jars, file holding them ':'-joined) for `pom`, running Maven only when the cache misses.

    A first resolution on an empty ~/.m2 downloads ~90 jars (about 60 MB) and can take minutes;
    `progress` gets a line every 15 s meanwhile.
    """
    pom = pom or repo_root() / "java-bridge" / "cluster" / "pom.xml"
    cache_dir = cache_dir or default_cache_dir()
    if not pom.is_file():
        raise ClusterError(f"{pom}: runtime pom not found (set YARNCTL_HOME to the yarnctl source tree)")
    out = cache_dir / f"classpath-{pom_digest(pom)}.txt"
    hit = cached_classpath(pom, cache_dir)
    if hit is not None:
        return hit, out
    if shutil.which(mvn) is None:
        raise ClusterError(f"{mvn!r} not found on PATH: install Maven 3 (apt-get install maven) to resolve the Hadoop jars")
    cache_dir.mkdir(parents=True, exist_ok=True)
    mvn_log = cache_dir / f"mvn-{pom_digest(pom)}.log"
    tmp = out.with_suffix(".tmp")
    say = progress or log.info
    say(f"resolving the Hadoop 2.7.7 classpath with Maven (first time on an empty ~/.m2: minutes; log {mvn_log})")
    cmd = [mvn, "-B", "-f", str(pom), "dependency:build-classpath", f"-Dmdep.outputFile={tmp}"]
    _run_logged(cmd, mvn_log, timeout_s, say, what="classpath resolution")
    try:
        text = tmp.read_text().strip()
    except OSError:
        raise ClusterError(f"Maven wrote no classpath; read {mvn_log}") from None
    entries = [e for e in text.split(os.pathsep) if e]
    tmp.replace(out)
    say(f"resolved {len(entries)} jars")
    return entries, out


def shim_jar_path(root: Path | None = None) -> Path:
    """Where `mvn -f java-bridge package` puts the shim jar."""
    return (root or repo_root()) / "java-bridge" / "target" / SHIM_JAR_NAME


def shim_jar_stale(root: Path | None = None) -> bool:
    """True when the shim jar is missing or older than java-bridge/pom.xml or any file in java-bridge/src."""
    root = root or repo_root()
    jar = shim_jar_path(root)
    if not jar.is_file():
        return True
    built = jar.stat().st_mtime
    bridge = root / "java-bridge"
    sources = [bridge / "pom.xml", *(p for p in (bridge / "src").rglob("*") if p.is_file())]
    return any(p.exists() and p.stat().st_mtime > built for p in sources)


def ensure_shim_jar(root: Path | None = None, *, mvn: str = "mvn", progress: Progress | None = None,
                    timeout_s: float = 1800.0) -> Path:
    """Build the shim jar with `mvn -q -f java-bridge package -DskipTests` if it is missing or stale."""
    root = root or repo_root()
    jar = shim_jar_path(root)
    if not shim_jar_stale(root):
        return jar
    pom = root / "java-bridge" / "pom.xml"
    if not pom.is_file():
        raise ClusterError(f"{pom} not found: the shim is not there to build; "
                           "start the stock scheduler with --native fifo")
    if shutil.which(mvn) is None:
        raise ClusterError(f"{mvn!r} not found on PATH: install Maven 3 to build the shim jar")
    say = progress or log.info
    mvn_log = default_cache_dir() / "mvn-shim.log"
    mvn_log.parent.mkdir(parents=True, exist_ok=True)
    say(f"building the shim jar ({'stale' if jar.exists() else 'missing'}; log {mvn_log})")
    _run_logged([mvn, "-B", "-q", "-f", str(root / "java-bridge"), "package", "-DskipTests"],
                mvn_log, timeout_s, say, what="shim build")
    if not jar.is_file():
        raise ClusterError(f"the shim build produced no {jar}; read {mvn_log}")
    return jar


def _run_logged(cmd: list[str], log_file: Path, timeout_s: float, say: Progress, what: str) -> None:
    started = time.monotonic()
    with open(log_file, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        next_note = started + 15
        while proc.poll() is None:
            now = time.monotonic()
            if now - started > timeout_s:
                proc.kill()
                proc.wait()
                raise ClusterError(f"{what} took over {timeout_s:.0f} s and was stopped; read {log_file}")
            if now >= next_note:
                downloads = _count_downloads(log_file)
                say(f"  still running after {now - started:.0f} s ({downloads} artifacts downloaded so far)")
                next_note = now + 15
            time.sleep(0.5)
    if proc.returncode != 0:
        raise ClusterError(f"{what} failed (mvn exit {proc.returncode}): {_first_error(log_file)}; read {log_file}")


def _count_downloads(log_file: Path) -> int:
    try:
        return log_file.read_text(errors="replace").count("Downloaded from")
    except OSError:
        return 0


def _first_error(log_file: Path) -> str:
    try:
        for line in log_file.read_text(errors="replace").splitlines():
            if line.startswith("[ERROR]") and len(line) > 8:
                return line[8:].strip()[:200]
    except OSError:
        pass
    return "see the log"
