"""The SLS recorder's file handling, without a cluster."""

from __future__ import annotations

import json

from emu.metrics.sls import SlsRecorder, full_queue_name


def test_records_gain_keys_of_queues_created_later(tmp_path):
    rec = SlsRecorder(tmp_path)
    rec._write_record({"time": 0, "queue.root.a.allocated.memory": 1.0})
    rec._write_record(
        {"time": 1000, "queue.root.a.allocated.memory": 2.0, "queue.root.b.allocated.memory": 3.0}
    )
    rec._write_record(
        {"time": 2000, "queue.root.a.allocated.memory": 0.0, "queue.root.b.allocated.memory": 1.0}
    )
    rec.close()
    records = json.loads((tmp_path / "realtimetrack.json").read_text())
    assert [list(r) for r in records] == [list(records[-1])] * 3
    assert records[0] == {
        "time": 0,
        "queue.root.a.allocated.memory": 1.0,
        "queue.root.b.allocated.memory": 0,
    }
    assert not list(tmp_path.glob("*.tmp"))


def test_an_empty_run_still_writes_a_json_array(tmp_path):
    rec = SlsRecorder(tmp_path)
    rec.close()
    assert json.loads((tmp_path / "realtimetrack.json").read_text()) == []
    assert (tmp_path / "metrics").is_dir()


def test_full_queue_names():
    assert full_queue_name("default") == "root.default"
    assert full_queue_name("root.a.b") == "root.a.b"
    assert full_queue_name("root") == "root"
