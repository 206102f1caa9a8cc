"""Node labels changed at run time, by emu's CapacityScheduler and by
Hadoop's (`--scheduler-impl hadoop`, whose RMNodeLabelsManager applies the
changes and tells its scheduler): the same jobruntime.csv and
containers.csv byte for byte on cap-node-label-changes, the same
per-partition gauges (a label added without nodes included), and the same
refusal, word for word, where Hadoop refuses a change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fidelity_runs import CASES, sls_argv
from tests.hadoop.conftest import emu, sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]
CASE = "cap-node-label-changes"


def test_emu_and_hadoop_follow_the_label_changes_alike(tmp_path: Path) -> None:
    changes = f"--changes={CASES / CASE / 'changes.toml'}"
    ours = sls_case(CASE, tmp_path / "emu", "--container-log", changes)
    theirs = sls_case(
        CASE, tmp_path / "hadoop", "--container-log", changes, "--scheduler-impl", "hadoop"
    )
    for name in ("jobruntime.csv", "containers.csv"):
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name
    # The changes matter: f_1 (asking for fast) runs on node5, which got fast.
    assert b",node5," in (ours / "containers.csv").read_bytes()
    assert _partition_series(ours) == _partition_series(theirs)
    series = _partition_series(ours)
    # fast has no resource until node5 takes it (50 s); f_1 then fills it.
    used = series["partition.fast.cluster.allocated.memory"]
    assert not any(used[:50]) and max(used) == 8.0


def _partition_series(out: Path) -> dict[str, list[float | None]]:
    """realtimetrack.json's partition gauges, each a series over all the
    records (None where a record lacks the gauge)."""
    records = json.loads((out / "realtimetrack.json").read_text())
    keys = sorted({k for r in records for k in r if k.startswith("partition.")})
    return {k: [r.get(k) for r in records] for k in keys}


def _refusal(tmp_path: Path, entry: str, *extra: str) -> str:
    tmp_path.mkdir(parents=True)
    changes = tmp_path / "changes.toml"
    changes.write_text(f"[[changes]]\nat_ms = 1000\n{entry}\n")
    done = emu(*sls_argv(CASE, tmp_path / "out", f"--changes={changes}", *extra))
    assert done.returncode == 2, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("emu: error:")]
    assert len(errors) == 1, done.stderr[-2000:]
    return errors[0]


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        # Both queues may use spare: Hadoop names the first in its map's order.
        ('kind = "remove_node_labels"\nlabels = "spare"', "Cannot remove label=spare"),
        # Hadoop shows the clashing NodeLabel as its toString.
        ('kind = "add_node_labels"\nlabels = "gpu(exclusive=false)"', "Exclusivity cannot"),
    ],
)
def test_a_change_hadoop_refuses_is_refused_in_its_words(tmp_path: Path, entry, says) -> None:
    ours = _refusal(tmp_path / "emu", entry)
    theirs = _refusal(tmp_path / "hadoop", entry, "--scheduler-impl", "hadoop")
    assert says in theirs
    assert ours == theirs.replace(str(tmp_path / "hadoop"), str(tmp_path / "emu"))
