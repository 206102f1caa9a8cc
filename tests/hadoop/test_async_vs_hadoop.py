"""Hadoop 3.5's asynchronous scheduling, decided by emu's CapacityScheduler
and by Hadoop 3.5.0's own (`--scheduler-impl hadoop`, its scheduling passes
driven at emu's ticks from the start nodes emu draws): the same
jobruntime.csv and containers.csv, byte for byte, under 3.5.0's defaults
and with other intervals and thread counts; and Hadoop's own run is the
same run after run. The fidelity suite holds more asynchronous cases
(locality delay, reservations, preemption: `make fidelity`)."""

from __future__ import annotations

import pytest

from tests.hadoop.conftest import runtime_and_containers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

ASYNC = "yarn.scheduler.capacity.schedule-asynchronously"


@pytest.mark.parametrize(
    ("case", "extra"),
    [
        ("cap-node-labels", ()),
        (
            "cap-user-limit-factor",
            ("-D", f"{ASYNC}.scheduling-interval-ms=100", "-D", f"{ASYNC}.maximum-threads=2"),
        ),
    ],
)
def test_emu_and_hadoop_35_schedule_asynchronously_alike(case, extra, tmp_path):
    args = ("--hadoop-version=3.5.0", *extra)
    ours = runtime_and_containers(case, tmp_path / "emu", *args)
    hadoops = runtime_and_containers(case, tmp_path / "hadoop", *args, "--scheduler-impl", "hadoop")
    assert ours[0] == hadoops[0]
    assert ours[1] == hadoops[1]
    interval = 100 if extra else 5
    times = [
        int(line.split(b",")[0]) for line in ours[1].splitlines()[1:] if b",allocated," in line
    ]
    assert times and all(t % interval == 0 for t in times)


def test_hadoops_asynchronous_replay_is_the_same_run_after_run(tmp_path):
    args = ("--hadoop-version=3.5.0", "--scheduler-impl", "hadoop")
    first = runtime_and_containers("cap-locality-delay", tmp_path / "a", *args)
    again = runtime_and_containers("cap-locality-delay", tmp_path / "b", *args)
    assert first == again
