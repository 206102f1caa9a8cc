"""python -m emu.bench.quiet: idle nodes heartbeat on schedule and the
scheduler skips their passes."""

from __future__ import annotations

import pytest

from emu.bench import quiet


@pytest.mark.parametrize("scheduler", ["fifo", "capacity", "fair"])
def test_idle_nodes_heartbeat_once_a_second_without_passes(scheduler: str) -> None:
    run = quiet.measure(20, 5, scheduler)
    assert run.heartbeats == 100
    if scheduler == "fair":
        # The periodic update (every 500 ms) moves Fair's quiet epoch: the
        # first heartbeat after it runs its pass.
        assert 100 - 10 <= run.passes_skipped < 100
    else:
        assert run.passes_skipped == 100
    # User CPU is read at the OS's tick resolution: 100 quiet heartbeats can
    # cost less than one tick, so only the line's shape is checked.
    assert "20 nodes: 100 heartbeats" in run.line()


def test_the_command_prints_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert quiet.main(["--nodes", "3", "--seconds", "2", "--scheduler", "fifo"]) == 0
    assert capsys.readouterr().out.startswith("3 nodes: 6 heartbeats")
