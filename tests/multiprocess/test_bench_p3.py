"""P3 end to end on a tiny cluster: `emu cluster up --stop-after` on the
bench's Fair/drf inputs writes a summary.json whose window figures agree
with the NM processes' own statistics, and the bench reads its line from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from emu.bench import figures as F

pytestmark = pytest.mark.timeout(120)


def test_cluster_up_summary_gives_the_p3_figure(tmp_path: Path) -> None:
    inputs = F.p3_inputs(tmp_path, 20, 2, 10)
    summary = F.run_cluster(inputs, 20, 2, 3, tmp_path / "run")
    assert summary["nodes"] == 20 and summary["nm_procs"] == 2 and summary["exit_code"] == 0
    assert summary["metrics"]["lost_nodes"] == 0
    assert summary["metrics"]["active_nodes"] == 20
    window = summary["window"]
    # Every heartbeat answered in the window has its round trip in the histogram.
    assert window["heartbeats"] == window["latency"]["count"] > 0
    assert window["heartbeats"] <= sum(n["heartbeats"] for n in summary["nm"])
    assert window["latency"]["count"] <= summary["latency"]["count"]
    assert {"rm", "nm1", "nm2"} <= set(window["cpu_s"])
    assert summary["samples"] and summary["samples"][-1]["active_nodes"] == 20
    assert summary["argv"][:5] == ["emu", "cluster", "up", "--nodes", "20"]
    figure = F.p3_figure(summary, "P3 tiny")
    assert figure.measured.startswith("lost 0, p99 ")
    assert "20 nodes in 2 NM processes" in figure.detail
