"""P3's figure (`emu cluster up` at 10,000 NMs): its inputs name the nodes
`up` starts, the window's latency is the NM histograms' difference, and the
line is met only with no node lost and p99 under 250 ms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from emu.bench import figures as F
from emu.nm import LatencyHistogram
from emu.processes.cluster import latency_between


def test_cluster_up_hosts_follow_up_s_layout() -> None:
    """Ten nodes over three NM processes: 4, 3, 3, racks /rack1../rack3."""
    hosts = F.cluster_up_hosts(10, 3)
    assert hosts[0] == ("rack1", "node1")
    assert hosts[3] == ("rack1", "node4")
    assert hosts[4] == ("rack2", "node5")
    assert hosts[-1] == ("rack3", "node10")
    assert len(hosts) == 10


def test_p3_inputs_are_the_1000_node_workload_renamed(tmp_path: Path) -> None:
    out = F.p3_inputs(tmp_path, 2000, 4, 120)
    jobs = [json.loads(line) for line in (out / "trace.json").read_text().splitlines()]
    from emu.bench import workload as W

    reference = W.jobs(1000, 120, 0.8, seed=1)
    assert len(jobs) == len(reference) > 0
    renamed = 0
    for job, ref in zip(jobs, reference, strict=True):
        assert job["job.start.ms"] == ref["job.start.ms"]
        for task, rtask in zip(job["job.tasks"], ref["job.tasks"], strict=True):
            if "container.host" not in rtask:
                assert "container.host" not in task
                continue
            i = int(rtask["container.host"].rsplit("/host", 1)[1])
            # 2,000 nodes over 4 processes: 500 a rack.
            assert task["container.host"] == f"/rack{i // 500 + 1}/node{i + 1}"
            renamed += 1
    assert renamed > 0
    assert (out / "fair" / "fair-scheduler.xml").is_file()


def test_latency_between_keeps_only_the_window() -> None:
    before = LatencyHistogram()
    for _ in range(100):
        before.add(0.5)  # registration: slow
    after = LatencyHistogram()
    after.merge(before.to_dict())
    for i in range(1, 101):
        after.add(i / 1000)  # then 1..100 ms
    window = latency_between(before.to_dict(), after.to_dict())
    assert window.count == 100
    assert window.quantile(0.99) == pytest.approx(0.099, rel=0.03)
    assert window.max_s == pytest.approx(0.1, rel=0.03)
    assert latency_between(None, after.to_dict()).count == 200


def _summary(lost: int, p99_ms: float, resyncs: int = 0) -> dict[str, Any]:
    return {
        "nodes": 10_000,
        "nm_procs": 8,
        "rate": 1.0,
        "registered_s": 3.8,
        "window_s": 600.0,
        "latency": {"count": 6_000_000, "p50_ms": 10.0, "p99_ms": p99_ms + 20, "max_ms": 900.0},
        "window": {
            "heartbeats": 5_800_000,
            "heartbeats_per_s": 9_666.7,
            "latency": {"count": 5_800_000, "p50_ms": 10.0, "p99_ms": p99_ms, "max_ms": 800.0},
            "cpu_s": {"rm": 420.0, "nm1": 30.0, "nm2": 31.0},
            "cpu_pct": {"rm": 70.0, "nm1": 5.0, "nm2": 5.2, "replay": 1.0},
        },
        "nm": [{"resyncs": resyncs, "errors": 0}, {"resyncs": 0, "errors": 0}],
        "metrics": {"lost_nodes": lost, "apps_completed": 300},
        "samples": [{"apps_running": 250, "memory_used": 0.08}],
        "load_avg": [2.5, 2.0, 1.5],
    }


def test_p3_figure_is_met_only_without_lost_nodes_and_under_250_ms() -> None:
    ok = F.p3_figure(_summary(0, 120.0), "P3")
    assert ok.met and ok.measured == "lost 0, p99 120 ms"
    assert "9,667/s of 10,000/s expected" in ok.detail
    assert "RM 70, NM processes 10" in ok.detail
    assert "load average at the end 2.5/2.0/1.5" in ok.detail
    assert not F.p3_figure(_summary(0, 250.0), "P3").met
    assert not F.p3_figure(_summary(3, 100.0), "P3").met
    assert not F.p3_figure(_summary(0, 100.0, resyncs=2), "P3").met
