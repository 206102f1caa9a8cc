"""emu's REST API against a real YARN ResourceManager (Hadoop's
MiniYARNCluster in a JVM of its own), per scheduler: every field YARN gives
must come back from emu with the same name and JSON type.

Needs a JDK and Maven (or an already fetched MiniYARNCluster classpath); the
first run starts one JVM for the three schedulers (about a minute) and caches
its answers, later runs read the cache. Skips without them unless
EMU_REQUIRE_HADOOP is set. An `oracle` test (`make test-oracle`): the rest
of the suite compares emu with the answers recorded in tests/data/rest_schema
(tests/integration/test_rest_fields_as_yarn.py), and this file also holds
that recording to what the real RM answers."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from emu.errors import InputError
from emu.fidelity import rest_schema as rs
from emu.hadoop import classpath as hcp
from tests.integration.test_rest_fields_as_yarn import recorded

SCHEDULERS = ("fifo", "capacity", "fair")
pytestmark = pytest.mark.oracle


def _missing() -> str | None:
    for tool in ("java", "javac"):
        if hcp.java_home_tool(tool) is None:
            return f"no {tool}: the REST probe needs a JDK"
    try:
        rs.minicluster_classpath(fetch=shutil.which("mvn") is not None)
    except InputError as e:
        return str(e)
    return None


@pytest.fixture(scope="module")
def yarn() -> dict[str, dict[str, object]]:
    why = _missing()
    if why is not None:
        if os.environ.get("EMU_REQUIRE_HADOOP"):
            pytest.fail(f"EMU_REQUIRE_HADOOP is set but the REST probe cannot run: {why}")
        pytest.skip(f"the REST probe cannot run here: {why}")
    return rs.yarn_responses(SCHEDULERS)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_emu_gives_every_field_a_real_rm_gives(yarn, scheduler):
    answers = yarn[scheduler]
    assert set(answers) == set(rs.PATHS)
    app = answers["/ws/v1/cluster/apps/{id}"]["app"]
    assert app["state"] == "RUNNING" and app["runningContainers"] >= 2
    result = rs.compare_all(scheduler, answers, rs.emu_responses(scheduler))
    assert result.ok, rs.markdown([result])


def test_a_second_look_reads_the_cache_without_starting_java(yarn, monkeypatch):
    def no_java(*args: object, **kw: object) -> None:
        raise AssertionError("started a process")

    monkeypatch.setattr(subprocess, "run", no_java)
    assert rs.yarn_responses(SCHEDULERS) == yarn


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_the_recorded_answers_have_the_fields_a_real_rm_gives(yarn, scheduler):
    """The recording the rest of the suite compares against is still what the
    pinned Hadoop answers: the same paths, fields and JSON types."""
    result = rs.compare_all(scheduler, yarn[scheduler], recorded(scheduler))
    assert result.ok, rs.markdown([result])
