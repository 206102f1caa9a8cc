"""Metric invariants: Hadoop's JavaScript-subset expressions, parsed safely."""

from __future__ import annotations

import pytest

from emu.errors import InputError
from emu.metrics import invariants as inv
from tests.reference import REFERENCE_DIR

ZERO = dict.fromkeys(inv.BINDINGS, 0)


@pytest.mark.parametrize(
    ("text", "values", "holds"),
    [
        ("AppsSubmitted >= 0", {}, True),
        ("MemNonHeapMaxM >= 0 || MemNonHeapMaxM == -1", {"MemNonHeapMaxM": -1}, True),
        ("AllocatedMB + AvailableMB === 4096", {"AllocatedMB": 1024, "AvailableMB": 3072}, True),
        ("AllocatedMB + AvailableMB !== 4096", {"AllocatedMB": 1024, "AvailableMB": 3072}, False),
        ("!(AppsFailed > 0) && AppsKilled == 0", {"AppsFailed": 1}, False),
        ("(AppsRunning + AppsPending) * 2 <= 10 % 7", {"AppsRunning": 1}, True),
        ("AllocatedMB / AllocatedVCores > 1", {}, False),  # 0/0 is NaN in JavaScript
        ("true && !(false)", {}, True),
        ("AppsSubmitted >= 0;", {}, True),
    ],
)
def test_expressions_evaluate_as_javascript_would(text, values, holds):
    assert inv.compile_invariant(text).holds({**ZERO, **values}) is holds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Foo > 1", "unknown metric 'Foo'"),
        ("!AppsFailed", "!(...)"),
        ("0 <= AppsFailed <= 1", "chained comparison"),
        ("__import__('os')", "unexpected"),
        ("AppsFailed.value > 1", "unexpected '.'"),
        ("AppsFailed >", "cannot parse"),
        ("(AppsFailed)(1)", "unsupported syntax"),
    ],
)
def test_bad_expressions_are_input_errors_naming_the_line(text, message):
    with pytest.raises(InputError) as e:
        inv.compile_invariant(text, "inv.txt", 7)
    assert str(e.value).startswith("inv.txt:7: ") and message in str(e.value)


def test_hadoop_invariant_files_load_and_hold_on_an_idle_cluster(tmp_path):
    res = REFERENCE_DIR / "test-resources"
    loaded = inv.load(res / "ongoing-invariants.txt") + inv.load(res / "exit-invariants.txt")
    assert len(loaded) == 54 + 8
    inv.check(loaded, {**ZERO, "MemNonHeapMaxM": -1}, 0, "now")

    f = tmp_path / "i.txt"
    f.write_text("# comment\n\nAppsFailed == 0\n")
    [only] = inv.load(f)
    assert only.source == f"{f}:3"
    with pytest.raises(inv.InvariantBroken) as e:
        inv.check([only], {**ZERO, "AppsFailed": 2}, 12_000, "during the run")
    assert 'invariant "AppsFailed == 0"' in str(e.value)
    assert "at simulated time 12.000 s, with AppsFailed=2" in str(e.value)
