"""`python -m emu.bench.memory`: RSS along a small bench run, and where
tracemalloc sees the memory at the stop."""

from __future__ import annotations

import re
from pathlib import Path

from emu.bench import workload as W
from emu.bench.memory import run


def test_probe_stops_at_the_time_and_names_allocation_sites(tmp_path: Path) -> None:
    W.write_conf_dirs(tmp_path)
    W.write_nodes(tmp_path / "nodes.json", 20)
    W.write_trace(tmp_path / "trace.json", W.jobs(20, 30, 0.8, seed=1, arrival_rate=1.0)[:3])
    lines = run(tmp_path, stop_s=4, every_s=2, trace=True, top=5)
    assert lines[0].startswith("inputs: 20 nodes, 3 jobs, ")
    ticks = [line for line in lines if line.startswith("sim ")]
    assert [t.split(",")[0] for t in ticks] == ["sim 2 s", "sim 4 s"]
    after = lines[lines.index(ticks[-1]) + 1 :]
    assert after[0].startswith("traced ") and len(after) == 6
    assert all(re.match(r"\s+\d+\.\d\d MB\s+\d+  .+:\d+", line) for line in after[1:])
    # Sites in compiled modules (emu/native.py) show as their nearest Python
    # caller; emu's own files are among the largest either way.
    assert any(re.search(r"emu/\S+\.py:\d+", line) for line in after[1:])
