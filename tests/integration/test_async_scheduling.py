"""CapacityScheduler's asynchronous scheduling (Hadoop 3.5's default) in
whole replays on the virtual clock: allocation in passes every interval
rather than on node heartbeats, the release's default and an explicit
setting, skipped quiet nodes, the same outputs run after run, and bad
settings refused by name."""

from __future__ import annotations

from pathlib import Path

from tests.cli_runs import run_here
from tests.reference import REFERENCE_DIR

SAMPLE = REFERENCE_DIR / "test-resources"
CAPACITY = "yarn.resourcemanager.scheduler.class=capacity"
ASYNC = "yarn.scheduler.capacity.schedule-asynchronously"


def _replay(out: Path, *extra: str) -> tuple[list[int], bytes]:
    """Hadoop's SLS sample under the CapacityScheduler: the allocation times
    and containers.csv."""
    done = run_here(
        [
            "sls",
            "--tracetype=SLS",
            f"--tracelocation={SAMPLE / 'inputsls.json'}",
            f"--nodes={SAMPLE / 'nodes.json'}",
            f"--conf-dir={SAMPLE}",
            f"--output-dir={out}",
            "--container-log",
            "--progress=never",
            "-D",
            CAPACITY,
            *extra,
        ]
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log = (out / "containers.csv").read_bytes()
    times = [
        int(line.split(b",")[0])
        for line in log.splitlines()[1:]
        if line.split(b",")[1] == b"allocated"
    ]
    return times, log


def test_hadoop_35_allocates_in_passes_every_interval_not_on_heartbeats(tmp_path):
    heartbeat, _ = _replay(tmp_path / "342")
    passes, _ = _replay(tmp_path / "350", "--hadoop-version", "3.5.0")
    assert len(passes) == len(heartbeat) > 0
    # Heartbeat-driven, the first AM container waits for a node's heartbeat
    # (the sample's nodes beat at 50 ms and later past each second); the
    # pass at 0, which runs after the submission at that instant, places it.
    assert heartbeat[0] == 1050 and passes[0] == 0
    assert all(t % 5 == 0 for t in passes)
    assert all(p <= h for p, h in zip(passes, heartbeat, strict=True))
    explicit, _ = _replay(tmp_path / "explicit", "-D", f"{ASYNC}.enable=true")
    assert explicit == passes


def test_asynchronous_off_under_35_is_34s_heartbeat_scheduling(tmp_path):
    _, ours = _replay(tmp_path / "342")
    _, off = _replay(tmp_path / "off", "--hadoop-version", "3.5.0", "-D", f"{ASYNC}.enable=false")
    assert off == ours


def test_the_interval_and_threads_shape_the_passes(tmp_path):
    times, _ = _replay(
        tmp_path / "slow",
        "--hadoop-version=3.5.0",
        "-D",
        f"{ASYNC}.scheduling-interval-ms=300",
        "-D",
        f"{ASYNC}.maximum-threads=2",
    )
    assert times[0] == 0 and times[1] == 1200 and all(t % 300 == 0 for t in times)


def test_a_node_that_missed_its_heartbeats_is_not_offered(tmp_path):
    # With a skip interval of 0 only a node heartbeating (or registering) at
    # the pass's very instant is offered: after the first AM, placed as the
    # nodes register at 0, allocations happen only at the instants nodes
    # beat at (the phases past each second heartbeat-driven allocation
    # shows), not at the first pass after an ask as by default.
    heartbeat, _ = _replay(tmp_path / "342")
    beats = {t % 1000 for t in heartbeat}
    default, _ = _replay(tmp_path / "default", "--hadoop-version=3.5.0")
    fresh_only, _ = _replay(
        tmp_path / "stale", "--hadoop-version=3.5.0", "-D", "yarn.scheduler.skip.node.multiplier=0"
    )
    assert fresh_only[0] == 0 and {t % 1000 for t in fresh_only[1:]} <= beats
    assert not {t % 1000 for t in default[1:]} <= beats


def test_asynchronous_replays_are_byte_identical_and_follow_the_seed(tmp_path):
    _, first = _replay(tmp_path / "a", "--hadoop-version=3.5.0")
    _, again = _replay(tmp_path / "b", "--hadoop-version=3.5.0")
    assert first == again
    seeds = {
        _replay(
            tmp_path / f"s{seed}",
            "--hadoop-version=3.5.0",
            "-D",
            f"emu.scheduler.async-seed={seed}",
        )[1]
        for seed in range(4)
    }
    assert len(seeds) > 1  # the start node decides which idle node an AM lands on


def test_bad_versions_and_intervals_are_refused_by_name(tmp_path):
    base = [
        "sls",
        "--tracetype=SLS",
        f"--tracelocation={SAMPLE / 'inputsls.json'}",
        f"--nodes={SAMPLE / 'nodes.json'}",
        f"--conf-dir={SAMPLE}",
        f"--output-dir={tmp_path / 'out'}",
        "-D",
        CAPACITY,
    ]
    done = run_here([*base, "--hadoop-version", "3.3.6"])
    assert done.returncode == 2
    assert "emu.hadoop.version: Hadoop '3.3.6' is not pinned" in done.stderr
    assert "3.4.2 and 3.5.0" in done.stderr and "--hadoop-classpath" in done.stderr
    done = run_here(
        [*base, "-D", f"{ASYNC}.enable=true", "-D", f"{ASYNC}.scheduling-interval-ms=0"]
    )
    assert done.returncode == 2
    assert f"{ASYNC}.scheduling-interval-ms" in done.stderr and "at least 1 ms" in done.stderr


def test_passes_that_place_nothing_still_count_with_node_labels(tmp_path):
    """With node labels a leaf publishes its AM limit for the partition of
    each node it is offered, so a pass that places nothing still leaves the
    limit of the last node it offered: such passes are never skipped, and
    the replay is the same with the shortcuts on and off (on the case where
    skipping them had admitted an AM one pass late)."""
    from tests.fidelity_runs import sls_argv

    runs = []
    for on in ("true", "false"):
        out = tmp_path / on
        done = run_here(
            [
                *sls_argv("cap35-async-label-limit-order", out),
                "--container-log",
                "--progress=never",
                "-D",
                f"emu.scheduler.shortcuts={on}",
            ]
        )
        assert done.returncode in (0, 1), done.stderr[-2000:]
        runs.append((out / "containers.csv").read_bytes())
    assert runs[0] == runs[1]
    assert b"113970,allocated,container_0_0006_01_000001" in runs[0]
