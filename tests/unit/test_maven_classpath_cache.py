"""The one cache of Maven classpaths (emu.hadoop.classpath.cached_classpath),
which the scheduler backend, SLS and MiniYARNCluster all read: resolved
once, named by the pom's content, resolved again when a jar is gone, and
never resolved when the caller says not to fetch. Maven itself is replaced:
these tests need no JVM, Maven or network."""

from __future__ import annotations

from pathlib import Path

import pytest

from emu.fidelity import rest_schema, sls_oracle
from emu.hadoop import classpath as hcp


@pytest.fixture
def maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """A fake Maven that lists one jar per call; returns the poms it resolved."""
    monkeypatch.setenv("EMU_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[Path] = []

    def resolve(pom: Path, listing: Path, quiet: bool = True, version: str = "") -> list[str]:
        calls.append(pom)
        jar = tmp_path / f"dep-{len(calls)}.jar"
        jar.write_text("")
        listing.parent.mkdir(parents=True, exist_ok=True)
        listing.write_text(str(jar))
        return [str(jar)]

    monkeypatch.setattr(hcp, "maven_classpath", resolve)
    return calls


def test_resolved_once_then_read_from_the_cache(tmp_path: Path, maven: list[Path]) -> None:
    pom = tmp_path / "pom.xml"
    pom.write_text("<project/>")
    assert hcp.cached_classpath(pom, "x-classpath", fetch=False) is None
    first = hcp.cached_classpath(pom, "x-classpath")
    assert hcp.cached_classpath(pom, "x-classpath") == first
    assert hcp.cached_classpath(pom, "x-classpath", fetch=False) == first
    assert maven == [pom]


def test_a_changed_pom_or_a_missing_jar_resolves_again(tmp_path: Path, maven: list[Path]) -> None:
    pom = tmp_path / "pom.xml"
    pom.write_text("<project/>")
    first = hcp.cached_classpath(pom, "x-classpath")
    assert first is not None
    Path(first[0]).unlink()
    assert hcp.cached_classpath(pom, "x-classpath", fetch=False) is None
    second = hcp.cached_classpath(pom, "x-classpath")
    pom.write_text("<project><!-- another dependency --></project>")
    third = hcp.cached_classpath(pom, "x-classpath")
    assert len(maven) == 3 and first != second != third
    listings = sorted(p.name for p in hcp.cache_dir().glob("x-classpath-*.txt"))
    assert listings == [hcp.listing_file(pom, "x-classpath").name], "older listings are removed"


def test_every_witness_reads_the_one_cache(maven: list[Path]) -> None:
    """The schedulers' classpath, SLS's and MiniYARNCluster's: each pom
    resolved once, each listing in the same directory."""
    with pytest.raises(sls_oracle.SlsUnavailable, match="not fetched yet"):
        sls_oracle.classpath(fetch=False)
    pinned = hcp.resolve(fetch=True)
    mini = rest_schema.minicluster_classpath()
    with pytest.raises(sls_oracle.SlsUnavailable, match="sources jar"):
        sls_oracle.classpath()  # the fake Maven lists no sources jar
    hcp.resolve(fetch=False)
    rest_schema.minicluster_classpath(fetch=False)
    assert maven == [hcp.POM, rest_schema.MINICLUSTER_POM, sls_oracle.POM]
    assert pinned.entries and mini.entries
    names = sorted(p.name.split("-3")[0] for p in hcp.cache_dir().glob("*.txt"))
    assert names == ["classpath", "minicluster-classpath", "sls-classpath"]


def test_the_witnesses_java_is_packaged_beside_them() -> None:
    """pyproject's package data carries the Java and poms each module runs."""
    text = (Path(hcp.__file__).parents[2] / "pyproject.toml").read_text()
    for path in (*sls_oracle.JAVA_SOURCES, sls_oracle.POM, rest_schema.PROBE_SOURCE,
                 rest_schema.MINICLUSTER_POM, *hcp.DRIVER_SOURCES, hcp.POM):  # fmt: skip
        assert path.is_file(), path
        package = path.parent
        while not (package / "__init__.py").is_file():
            package = package.parent
        rel = path.relative_to(package).as_posix()
        line = next(ln for ln in text.splitlines() if ln.startswith(f'"emu.{package.name}" = ['))
        patterns = [p.strip().strip('"') for p in line.split("[", 1)[1].rstrip("]").split(",")]
        assert any(Path(rel).match(p) or rel == p for p in patterns), (rel, line)
