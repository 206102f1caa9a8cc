"""Which Hadoop jars the real-scheduler backend loads, and the driver class
compiled against them.

In order: `--hadoop-classpath` (the `emu.hadoop.classpath` property), then
`EMU_HADOOP_CLASSPATH`, then `HADOOP_HOME` (an installed Hadoop's
`share/hadoop` jars), then the release pinned in `pom.xml`, whose classpath
Maven resolves once (`make hadoop`, or the first run that needs it) and emu
keeps in its cache. The driver (`java/emu/hadoop/SchedulerDriver.java`, and
the interface it implements, `SchedulerBackend.java`) is compiled with
`javac` against whichever classpath is used, once per classpath, so a
user's patched scheduler build runs unchanged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from emu.errors import InputError

HADOOP_VERSION = "3.4.2"
"""The default release: the newest 3.4.x, whose SLS (hadoop-sls) is
published too, so emu, Hadoop's scheduler and SLS compare on one release
(SLS, MiniYARNCluster and the REST probe always use it)."""

VERSIONS = ("3.4.2", "3.5.0")
"""The releases emu pins. 3.5.0's CapacityScheduler schedules
asynchronously by default (`schedule-asynchronously.enable` true); emu's
port applies each release's defaults, and the backend drives 3.5.0's
scheduling passes on emu's virtual clock (`SchedulerDriver.asyncPass`)."""

VERSION_PROPERTY = "emu.hadoop.version"
CLASSPATH_PROPERTY = "emu.hadoop.classpath"
HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
JAVA = HERE / "java" / "emu" / "hadoop"
CONTRACT_SOURCE = JAVA / "SchedulerBackend.java"
"""The contract's Java side (`emu.hadoop.contract` is its Python side)."""
EPOCH_SOURCE = HERE / "java" / "org" / "apache" / "hadoop" / "yarn" / "server" / "resourcemanager"
DRIVER_SOURCES = (
    CONTRACT_SOURCE,
    JAVA / "SchedulerDriver.java",
    EPOCH_SOURCE / "EmuRMEpoch.java",
)
LOG4J = HERE / "log4j.properties"


@dataclass(frozen=True)
class Classpath:
    entries: tuple[str, ...]
    source: str
    """Where it came from, for `emu --version` and error messages."""

    def text(self) -> str:
        return os.pathsep.join(self.entries)


def cache_dir() -> Path:
    base = os.environ.get("EMU_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return (root if os.environ.get("EMU_CACHE_DIR") else root / "emu") / "hadoop"


PINNED_STEM = "classpath"
"""The pinned release's listing in the cache: classpath-VERSION-KEY.txt."""


def check_version(version: str, where: str = "--hadoop-version") -> str:
    """`version` if emu pins it; else one InputError naming those it pins
    and the way to any other build."""
    v = version.strip()
    if v not in VERSIONS:
        raise InputError(
            where,
            VERSION_PROPERTY,
            f"Hadoop {version!r} is not pinned: emu knows Apache Hadoop {' and '.join(VERSIONS)}; "
            "for another release point --hadoop-classpath (or HADOOP_HOME) at an installed "
            "Hadoop's jars",
        )
    return v


def listing_file(pom: Path, stem: str, version: str = HADOOP_VERSION) -> Path:
    """Where `pom`'s classpath is listed in emu's cache: named by `stem`, the
    release and the pom's content, so that editing the pom resolves
    again."""
    key = hashlib.sha256(pom.read_bytes()).hexdigest()[:12]
    return cache_dir() / f"{stem}-{version}-{key}.txt"


def cached_classpath(
    pom: Path, stem: str, fetch: bool = True, quiet: bool = True, version: str = HADOOP_VERSION
) -> list[str] | None:
    """`pom`'s dependency classpath (its jars, in order), resolved by Maven
    once and listed in emu's cache (`listing_file`). The one cache of every
    Maven classpath emu uses: the schedulers' (pom.xml here), SLS's and
    MiniYARNCluster's (emu/fidelity). Resolved again when the listing is
    missing or names a jar that is gone; then None when not `fetch`.
    Maven's failures raise JavaBuildError; each caller says them in its
    own terms. `version` is the pom's `hadoop.version` (Maven is told it)."""
    listing = listing_file(pom, stem, version)
    entries = _listed(listing)
    if entries is not None:
        return entries
    if not fetch:
        return None
    entries = maven_classpath(pom, listing, quiet, version)
    for old in listing.parent.glob(f"{stem}-{version}-*.txt"):
        if old != listing:
            old.unlink(missing_ok=True)
    return entries


def _listed(listing: Path) -> list[str] | None:
    """The jars `listing` names, or None when it is missing or one is gone."""
    if not listing.is_file():
        return None
    entries = [p for p in listing.read_text().strip().split(os.pathsep) if p]
    if not entries or not all(Path(p).exists() for p in entries):
        return None
    return entries


def describe(explicit: str | None = None, version: str = HADOOP_VERSION) -> str:
    """One line for `emu --version`: the Hadoop the backend would use."""
    try:
        cp = resolve(explicit, fetch=False, version=version)
    except InputError as e:
        return f"Hadoop schedulers: {e.message}"
    pinned = listing_file(POM, PINNED_STEM, version)
    where = f"classpath listed in {pinned}" if cp.source.startswith("Apache") else ""
    first = next((e for e in cp.entries if "resourcemanager" in e), cp.entries[0])
    return (
        f"Hadoop schedulers (--scheduler-impl hadoop): {cp.source}, {len(cp.entries)} "
        f"classpath entries ({first}{', ...' if len(cp.entries) > 1 else ''})"
        + (f"; {where}" if where else "")
    )


def resolve(
    explicit: str | None = None, fetch: bool = True, version: str = HADOOP_VERSION
) -> Classpath:
    """The classpath to load Hadoop's scheduler from (see the module docstring);
    `version` picks the pinned release when no installed one is given."""
    given = explicit or os.environ.get("EMU_HADOOP_CLASSPATH")
    if given:
        where = "--hadoop-classpath" if explicit else "EMU_HADOOP_CLASSPATH"
        entries = _expand(given)
        if not entries:
            raise InputError(where, None, f"no jars or directories found in {given!r}")
        return Classpath(tuple(entries), f"{where} {given}")
    home = os.environ.get("HADOOP_HOME")
    if home:
        share = Path(home) / "share" / "hadoop"
        jars = sorted(str(p) for p in share.glob("*/*.jar")) + sorted(
            str(p) for p in share.glob("*/lib/*.jar")
        )
        if not jars:
            raise InputError(
                "HADOOP_HOME", home, "has no share/hadoop/*/*.jar: not a Hadoop install"
            )
        return Classpath(tuple(jars), f"HADOOP_HOME {home}")
    version = check_version(version)
    pinned = (
        fetch_pinned(version=version)
        if fetch
        else cached_classpath(POM, PINNED_STEM, fetch=False, version=version)
    )
    if pinned is None:
        raise InputError("Hadoop " + version, None, "not fetched yet (make hadoop fetches it)")
    return Classpath(tuple(pinned), f"Apache Hadoop {version} from Maven Central")


def _expand(text: str) -> list[str]:
    out: list[str] = []
    for part in text.split(os.pathsep):
        if not part:
            continue
        if part.endswith("*"):
            out.extend(sorted(str(p) for p in Path(part[:-1] or ".").glob("*.jar")))
        elif Path(part).exists():
            out.append(str(Path(part).resolve()))
    return out


class JavaBuildError(Exception):
    """Maven or javac could not do its part; the message is one line saying
    why. `no_tool`: the tool itself (mvn, javac) is not installed."""

    def __init__(self, message: str, no_tool: bool = False) -> None:
        super().__init__(message)
        self.no_tool = no_tool


def maven_classpath(
    pom: Path, listing: Path, quiet: bool = True, version: str = HADOOP_VERSION
) -> list[str]:
    """Ask Maven for `pom`'s dependency classpath at Hadoop `version`
    (downloading what is missing) and write it to `listing`; the jars, in
    order."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JavaBuildError("Maven is not installed", no_tool=True)
    listing.parent.mkdir(parents=True, exist_ok=True)
    cmd = [mvn, "-B", "-f", str(pom), "dependency:build-classpath",
           f"-Dmdep.outputFile={listing}", f"-Dhadoop.version={version}"]  # fmt: skip
    if quiet:
        cmd.insert(1, "-q")
    done = subprocess.run(cmd, capture_output=quiet, text=True, check=False)
    if done.returncode != 0 or not listing.is_file():
        tail = (done.stdout or done.stderr or "").strip().splitlines()[-3:] if quiet else []
        raise JavaBuildError(" ".join(tail)[:300] or f"exit {done.returncode}")
    return [p for p in listing.read_text().strip().split(os.pathsep) if p]


def javac(sources: Sequence[Path], classpath: str, out: Path) -> Path:
    """`sources` compiled against `classpath` into `out`, unless `out` is
    there already (it appears whole or not at all). Several processes (a
    fidelity run, parallel tests) may compile the same classes at once:
    each works in a directory of its own and the first to finish wins."""
    if out.is_dir():
        return out
    tool = java_home_tool("javac")
    if tool is None:
        raise JavaBuildError(
            "needs a Java development kit (javac on PATH or in JAVA_HOME): install OpenJDK 17",
            no_tool=True,
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    try:
        (tmp / "classes").mkdir()
        done = subprocess.run(
            [tool, "-nowarn", "-encoding", "UTF-8", "-cp", classpath,
             "-d", str(tmp / "classes"), *map(str, sources)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            lines = done.stderr.splitlines()
            raise JavaBuildError(
                next((ln for ln in lines if "error" in ln), done.stderr[:300]).strip()
            )
        try:
            (tmp / "classes").rename(out)
        except OSError:
            if not out.is_dir():  # not another process's copy: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def fetch_pinned(quiet: bool = True, version: str = HADOOP_VERSION) -> list[str]:
    """A pinned release's classpath, resolved with Maven (downloading on
    first use) unless the cache lists it already."""
    try:
        entries = cached_classpath(POM, PINNED_STEM, fetch=True, quiet=quiet, version=version)
    except JavaBuildError as e:
        if e.no_tool:
            raise InputError(
                "--scheduler-impl hadoop",
                None,
                f"needs Apache Hadoop {version}'s jars and Maven is not installed to "
                "fetch them: install Maven (and OpenJDK 17) and run `make hadoop`, or point "
                "--hadoop-classpath or HADOOP_HOME at an installed Hadoop",
            ) from None
        raise InputError(
            "--scheduler-impl hadoop",
            None,
            f"Maven could not fetch Apache Hadoop {version} from Maven Central ({e}); "
            "with network access run `make hadoop`, or point --hadoop-classpath or "
            "HADOOP_HOME at an installed Hadoop",
        ) from None
    assert entries is not None  # with fetch, resolved or raised
    return entries


def java_home_tool(name: str) -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        tool = Path(home) / "bin" / name
        if tool.exists():
            return str(tool)
    return shutil.which(name)


def driver_classes(cp: Classpath) -> Path:
    """The driver compiled against `cp` (once per classpath and driver source)."""
    sources = b"".join(p.read_bytes() for p in DRIVER_SOURCES)
    key = hashlib.sha256(sources + cp.text().encode()).hexdigest()[:16]
    try:
        return javac(DRIVER_SOURCES, cp.text(), cache_dir() / "driver" / key)
    except JavaBuildError as e:
        if e.no_tool:
            raise InputError("--scheduler-impl hadoop", None, str(e)) from None
        raise InputError(
            cp.source,
            None,
            f"emu's scheduler driver does not compile against these jars ({e}); "
            "is this a Hadoop 3.x classpath with hadoop-yarn-server-resourcemanager?",
        ) from None
