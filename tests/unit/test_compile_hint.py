"""A replay in pure Python for want of a build says once how to compile
(emu.native.CompileHint)."""

from __future__ import annotations

import io

import pytest

from emu import native


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "_hinted", False)


def test_the_hint_waits_for_a_long_replay_then_says_it_once(fresh: None) -> None:
    out = io.StringIO()
    hint = native.CompileHint(after_s=3600, stream=out)
    hint.tick(None)
    assert out.getvalue() == ""  # a short replay says nothing
    hint.due = 0.0
    hint.tick(None)
    hint.tick(None)
    assert out.getvalue() == native.COMPILE_HINT + "\n"
    assert "make compile" in out.getvalue()
    again = io.StringIO()
    native.CompileHint(after_s=0, stream=again).tick(None)
    assert again.getvalue() == ""  # once per process, however many replays


def test_no_hint_when_pure_python_was_asked_for(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMU_PURE_PYTHON", "1")
    monkeypatch.setattr(native, "_active", "pure")
    assert native.CompileHint.wanted() is None


def test_a_hint_when_there_is_no_build(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.delenv("EMU_PURE_PYTHON", raising=False)
    monkeypatch.setattr(native, "_active", "pure")
    monkeypatch.setattr(native, "MANIFEST", tmp_path / "none.json")
    monkeypatch.setattr(native, "status", lambda: native.build_state(tmp_path / "none.json"))
    assert isinstance(native.CompileHint.wanted(), native.CompileHint)


def test_a_watched_replay_carries_the_hint_when_there_is_no_build(
    fresh: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`emu run` and `emu sls` wrap their replay in a Watch: with no build,
    its observer says the hint once the replay has run long enough."""
    from emu.watch import Watch
    from emu.workload import Workload

    monkeypatch.setattr(native.CompileHint, "wanted", classmethod(lambda cls: cls(after_s=0)))
    observer = Watch("never").start(Workload(jobs=[]))
    assert observer is not None
    observer(None)
    assert capsys.readouterr().err == native.COMPILE_HINT + "\n"
