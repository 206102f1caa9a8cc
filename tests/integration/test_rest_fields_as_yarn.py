"""emu's REST API against what Hadoop's own ResourceManager answered, per
scheduler: every field YARN gives must come back from emu with the same name
and JSON type.

YARN's side is its answers recorded from a real ResourceManager of the
pinned Hadoop release (tests/data/rest_schema/, SOURCES.md says how), so this
runs without Java. tests/hadoop/test_rest_schema.py (`make test-oracle`)
asks a real RM again and holds the recording to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.fidelity import rest_schema as rs
from emu.hadoop import classpath as hcp

RECORDED = Path(__file__).resolve().parents[1] / "data" / "rest_schema"
SCHEDULERS = ("fifo", "capacity", "fair")


def recorded(scheduler: str) -> dict[str, object]:
    """Hadoop's recorded answers for `scheduler`, one entry per probed path."""
    answers: dict[str, object] = json.loads(
        (RECORDED / f"yarn-{hcp.HADOOP_VERSION}-{scheduler}.json").read_text()
    )
    return answers


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_emu_gives_every_field_the_recorded_rm_gave(scheduler: str) -> None:
    answers = recorded(scheduler)
    assert set(answers) == set(rs.PATHS)
    result = rs.compare_all(scheduler, answers, rs.emu_responses(scheduler))
    assert result.ok, rs.markdown([result])


def test_a_field_emu_lacks_is_reported_by_name() -> None:
    """The comparison can fail: drop one field from emu's answer and it is named."""
    answers = recorded("fifo")
    emu = rs.emu_responses("fifo")
    del emu["/ws/v1/cluster/info"]["clusterInfo"]["haState"]
    result = rs.compare_all("fifo", answers, emu)
    assert not result.ok
    assert "haState" in rs.markdown([result])
