"""The per-partition gauges filled by emu's CapacityScheduler port and by
Hadoop's (`--scheduler-impl hadoop`: the label manager's partition
resources and the queues' ResourceUsage per partition) on the
cap-node-labels fidelity case: the same series in realtimetrack.json and
in metrics/, second by second (a queue's CSV from the first second the
backend knows the queue)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

CASE = "cap-node-labels"


def _partition_series(out: Path) -> tuple[dict[str, list[float]], dict[str, str]]:
    """realtimetrack.json's partition gauges as series, and metrics/'s
    partition CSVs (times included, so the rows must agree too)."""
    records = json.loads((out / "realtimetrack.json").read_text())
    keys = [k for k in records[0] if k.startswith("partition.")]
    series = {k: [r[k] for r in records] for k in keys}
    csvs = {p.name: p.read_text() for p in (out / "metrics").iterdir() if ".partition." in p.name}
    return series, csvs


def test_both_backends_record_the_same_per_partition_series(tmp_path):
    ours, our_csvs = _partition_series(sls_case(CASE, tmp_path / "emu"))
    hadoops, hadoop_csvs = _partition_series(
        sls_case(CASE, tmp_path / "hadoop", "--scheduler-impl", "hadoop")
    )
    # default partition, gpu and spare; each with the cluster's 4 gauges and
    # 4 per leaf queue (a, b): allocated and pending memory and vcores
    assert len(ours) == 3 * (4 + 2 * 4)
    assert ours == hadoops
    assert sorted(our_csvs) == sorted(hadoop_csvs) and len(our_csvs) == len(ours)
    for name, text in our_csvs.items():
        # A queue's CSVs start once the backend knows the queue: with Hadoop
        # deciding, at its first app (as the `counter.queue.<q>.` ones do);
        # the rows before that read 0 in emu's.
        theirs = hadoop_csvs[name].splitlines()
        rows = text.splitlines()
        assert rows[0] == theirs[0] == "time,value"
        assert rows[len(rows) - len(theirs) + 1 :] == theirs[1:], name
        assert all(r.endswith(",0") for r in rows[1 : len(rows) - len(theirs) + 1]), name
        assert len(theirs) > 100
    # the series are not trivially equal: each labelled partition is used
    for p in ("gpu", "spare"):
        assert max(ours[f"partition.{p}.cluster.allocated.memory"]) > 0
    assert max(ours["partition.gpu.queue.root.a.allocated.memory"]) == 15.0
    assert max(ours["partition.spare.queue.root.b.pending.memory"]) > 0
