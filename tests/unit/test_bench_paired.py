"""Paired runs (`python -m emu.bench --vs REV`): the base build, the mirrored
inputs and the comparison; no timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from emu.bench import figures, paired
from emu.bench.paired import Pairing, Replay


def test_less_cpu_is_base_over_this_summed_over_the_pairs() -> None:
    p = Pairing(base=[10.0, 12.0], this=[5.0, 6.0])
    assert p.less_cpu == pytest.approx(2.0)
    line = p.describe("abc123")
    assert "10.00/5.00, 12.00/6.00" in line
    assert "2.00x less CPU" in line


def test_an_unknown_commit_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="no-such-commit"):
        paired.prepare_base("no-such-commit", tmp_path)


def test_the_base_is_the_commit_exported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (paired.REPO / ".git").exists():
        pytest.skip("not a git checkout")
    monkeypatch.setenv("EMU_PURE_PYTHON", "1")  # no compile here: the export is what is checked
    tree = paired.prepare_base("HEAD", tmp_path)
    assert (tree / "emu" / "__init__.py").is_file()
    assert (tree / "Makefile").is_file()
    head = paired._git("rev-parse", "HEAD").strip()
    assert tree.name == f"base-{head[:12]}"
    # Reused, not exported again.
    marker = tree / "marker"
    marker.write_text("kept")
    assert paired.prepare_base("HEAD", tmp_path) == tree
    assert marker.read_text() == "kept"


def test_each_build_reads_the_same_inputs_and_writes_apart(tmp_path: Path) -> None:
    inputs = tmp_path / "p1-600"
    (inputs / "fair").mkdir(parents=True)
    (inputs / "trace.json").write_text("{}")
    (inputs / "out").mkdir()
    (a,) = paired._mirrored([Replay(inputs, "fair")], tmp_path / "this")
    (b,) = paired._mirrored([Replay(inputs, "fair")], tmp_path / "base")
    assert a.inputs != b.inputs
    for m in (a.inputs, b.inputs):
        assert (m / "trace.json").resolve() == (inputs / "trace.json").resolve()
        assert (m / "fair").resolve() == (inputs / "fair").resolve()
        assert not (m / "out").exists()


def test_every_cpu_figure_has_its_replays_and_h1_its_bar_from_p1(tmp_path: Path) -> None:
    # P3 runs processes; F1 federates, which the speed work's start cannot.
    assert set(figures.REPLAYS) == set(figures.FIGURES) - {"p3", "f1"}
    assert set(figures.PAIRED_TARGET) <= set(figures.REPLAYS)
    h1 = figures.Figure("H1 hadoop fair", "50.0x", figures.H1_TARGET, True, "", 50.0)
    figures.within_of_p1(h1, figures.Figure("P1 fair", "120.0x", "", True, "", 120.0))
    assert not h1.met and "2.40x" in h1.detail
    h1 = figures.Figure("H1 hadoop fair", "70.0x", figures.H1_TARGET, True, "", 70.0)
    figures.within_of_p1(h1, figures.Figure("P1 fair", "120.0x", "", True, "", 120.0))
    assert h1.met
    unfinished = figures.Figure("H1 hadoop fair", "70.0x", figures.H1_TARGET, False, "", 70.0)
    figures.within_of_p1(unfinished, figures.Figure("P1 fair", "120.0x", "", True, "", 120.0))
    assert not unfinished.met
