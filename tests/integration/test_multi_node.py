"""Multi-node (global) placement in emu's CapacityScheduler, in whole
replays on the virtual clock: the sorter's order on its interval (nothing
to walk before its first run), sorting on every use with interval 0, the
first-candidate fallback without a policy, the same outputs run after run,
and a policy without its class refused by name."""

from __future__ import annotations

from pathlib import Path

from tests.cli_runs import run_here
from tests.reference import REFERENCE_DIR

SAMPLE = REFERENCE_DIR / "test-resources"
CS = "yarn.scheduler.capacity."
POLICY = CS + "multi-node-sorting.policy"
MULTI_NODE = (
    f"{CS}multi-node-placement-enabled=true",
    f"{POLICY}.names=default",
    f"{POLICY}=default",
    f"{POLICY}.default.class=org.apache.hadoop.yarn.server.resourcemanager.scheduler."
    "placement.ResourceUsageMultiNodeLookupPolicy",
)


def _replay(out: Path, *props: str, version: str = "3.5.0") -> tuple[list[tuple[int, str]], bytes]:
    """Hadoop's SLS sample under the CapacityScheduler with `props`: each
    allocation's (time, node) and containers.csv."""
    args = [
        "sls",
        "--tracetype=SLS",
        f"--tracelocation={SAMPLE / 'inputsls.json'}",
        f"--nodes={SAMPLE / 'nodes.json'}",
        f"--conf-dir={SAMPLE}",
        f"--output-dir={out}",
        "--container-log",
        "--progress=never",
        f"--hadoop-version={version}",
        "-D",
        "yarn.resourcemanager.scheduler.class=capacity",
    ]
    for p in props:
        args += ["-D", p]
    done = run_here(args)
    assert done.returncode == 0, done.stderr[-2000:]
    log = (out / "containers.csv").read_bytes()
    rows = [line.split(b",") for line in log.splitlines()[1:]]
    return [(int(r[0]), r[4].decode()) for r in rows if r[1] == b"allocated"], log


def test_nothing_is_walked_before_the_sorters_first_run(tmp_path):
    single, _ = _replay(tmp_path / "single")
    sorted_each_second, _ = _replay(tmp_path / "multi", *MULTI_NODE)
    sorted_each_use, _ = _replay(
        tmp_path / "zero", *MULTI_NODE, f"{POLICY}.default.sorting-interval.ms=0"
    )
    # A pass at 0 places the first AM; with multi-node placement the apps
    # walk the sorter's last order, empty until its first run at 1 s.
    assert single[0][0] == 0
    assert sorted_each_second[0][0] == 1000
    assert sorted_each_use[0][0] == 0
    assert len(single) == len(sorted_each_second) == len(sorted_each_use)


def test_resource_usage_spreads_what_the_first_candidate_packs(tmp_path):
    spread, _ = _replay(tmp_path / "usage", *MULTI_NODE, f"{POLICY}.default.sorting-interval.ms=0")
    first, _ = _replay(tmp_path / "first", f"{CS}multi-node-placement-enabled=true")
    # Without a policy every app gets the first candidate only (Hadoop's
    # fallback): all containers that fit go to one node; least-allocated
    # first puts them on every node.
    assert len({node for _, node in first}) < len({node for _, node in spread})
    assert len({node for _, node in spread}) == 4


def test_the_same_outputs_run_after_run(tmp_path):
    _, a = _replay(tmp_path / "a", *MULTI_NODE, f"{POLICY}.default.sorting-interval.ms=300")
    _, b = _replay(tmp_path / "b", *MULTI_NODE, f"{POLICY}.default.sorting-interval.ms=300")
    assert a == b
    _, heartbeats = _replay(tmp_path / "hb", *MULTI_NODE, version="3.4.2")
    _, again = _replay(tmp_path / "hb2", *MULTI_NODE, version="3.4.2")
    assert heartbeats == again


def test_a_queue_policy_without_its_class_is_refused_by_name(tmp_path):
    done = run_here(
        [
            "sls",
            "--tracetype=SLS",
            f"--tracelocation={SAMPLE / 'inputsls.json'}",
            f"--nodes={SAMPLE / 'nodes.json'}",
            f"--conf-dir={SAMPLE}",
            f"--output-dir={tmp_path / 'out'}",
            "--progress=never",
            "-D",
            "yarn.resourcemanager.scheduler.class=capacity",
            "-D",
            f"{CS}multi-node-placement-enabled=true",
            "-D",
            f"{POLICY}=packed",
        ]
    )
    assert done.returncode == 2
    assert f"{POLICY}: sorting policy 'packed' has no class" in done.stderr
    assert done.stderr.count("\n") <= 2
