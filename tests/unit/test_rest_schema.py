"""The REST schema comparison itself, and emu's answers against YARN answers
recorded from a real Hadoop 3.4.2 ResourceManager (no Java needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from emu.fidelity import rest_schema as rs

RECORDED = Path(__file__).resolve().parents[1] / "data" / "rest_schema"


def test_json_types_count_int_and_float_alike_and_bool_apart():
    assert rs.json_type(1) == rs.json_type(1.5) == "number"
    assert rs.json_type(True) == "bool"
    assert rs.json_type("1") == "string"
    assert rs.json_type(None) == "null"
    assert rs.json_type({}) == "object" and rs.json_type([]) == "array"


def test_schema_walks_objects_and_the_first_element_of_arrays():
    doc = {"a": {"b": 1, "c": [{"d": "x"}, {"e": True}]}, "f": []}
    assert rs.schema(doc) == {
        "a": "object",
        "a.b": "number",
        "a.c": "array",
        "a.c[].d": "string",
        "f": "array",
    }


def test_compare_reports_missing_mismatched_and_extra_fields():
    yarn = {"app": {"id": "a", "memorySeconds": 5, "progress": 50.0, "tags": {"t": 1}}}
    emu = {"app": {"id": "a", "memorySeconds": "5", "progress": 0, "mine": 1}}
    r = rs.compare("/apps/{id}", yarn, emu)
    assert r.missing == ["app.tags"]  # once, not again for app.tags.t
    assert r.mismatched == [rs.Mismatch("app.memorySeconds", "number", "string")]
    assert r.extra == ["app.mine"]
    assert not r.ok
    assert r.yarn_fields == 6


def test_values_may_differ_and_a_yarn_null_matches_any_type():
    yarn = {"x": {"n": 1, "s": "a", "z": None, "l": [{"k": 1}]}}
    emu = {"x": {"n": 2.5, "s": "b", "z": 3, "l": [{"k": 9}, {"k": 8}]}}
    assert rs.compare("/p", yarn, emu).ok


def test_an_empty_array_in_emu_misses_the_fields_of_yarns_elements():
    r = rs.compare("/p", {"l": [{"k": 1}]}, {"l": []})
    assert r.missing == ["l[].k"]


def test_a_mismatched_object_is_reported_once():
    r = rs.compare("/p", {"o": {"a": 1, "b": 2}}, {"o": "text"})
    assert r.mismatched == [rs.Mismatch("o", "object", "string")] and r.missing == []


def test_markdown_lists_each_difference():
    bad = rs.SchedulerResult("fifo", [rs.compare("/p", {"a": 1, "b": "x"}, {"b": 2})])
    text = rs.markdown([bad])
    assert "| fifo | `/p` | 2 | 1 | 1 | 0 |" in text
    assert "- fifo `/p`: missing `a`" in text
    assert "- fifo `/p`: `b` is number in emu, string in YARN" in text
    good = rs.markdown(
        [rs.SchedulerResult("fifo", [rs.compare("/p", {"a": 1}, {"a": 2, "mine": 3})])]
    )
    assert "Nothing YARN returns is missing" in good
    assert "- `/p`: `mine` (fifo)" in good


@pytest.mark.parametrize("scheduler", ["fifo", "capacity", "fair"])
def test_emu_gives_every_field_recorded_from_a_real_rm(scheduler):
    yarn = json.loads((RECORDED / f"yarn-3.4.2-{scheduler}.json").read_text())
    assert set(yarn) == set(rs.PATHS)
    result = rs.compare_all(scheduler, yarn, rs.emu_responses(scheduler))
    assert result.ok, rs.markdown([result])


def test_the_probe_fetches_the_paths_the_comparison_expects() -> None:
    """RestProbe.java and rest_schema list the same paths (one is Java, run
    in a JVM of its own, so the list is written in both)."""
    java = rs.PROBE_SOURCE.read_text()
    block = java[java.index("PATHS = {") : java.index("};", java.index("PATHS = {"))]
    assert tuple(re.findall(r'"([^"]+)"', block)) == rs.PATHS
