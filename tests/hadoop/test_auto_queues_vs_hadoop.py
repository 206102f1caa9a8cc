"""The auto-created queue cases (scenarios/fidelity/cases/cap-auto-queues-*)
with Hadoop's own CapacityScheduler deciding (`--scheduler-impl hadoop`):
emu's port and Hadoop's give the same jobruntime.csv, byte for byte, and
Hadoop places the apps in the same created queues.

- cap-auto-queues-legacy: a managed parent, leaf-queue-template, a fourth
  leaf at zero guarantee (GuaranteedOrZeroCapacityOverTimePolicy).
- cap-auto-queues-v2: two levels of flexible queues from
  u:%user:users.%primary_group.%user, with AutoCreatedQueueDeletionPolicy
  removing idle ones (the driver runs it on the virtual clock).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]


def _sls(case: str, out: Path, *extra: str) -> tuple[bytes, dict[str, str]]:
    sls_case(case, out, *extra)
    jobs = json.loads((out / "summary.json").read_text())["jobs"]
    return (out / "jobruntime.csv").read_bytes(), {j["job_id"]: j["queue"] for j in jobs}


CAPPED_PARENT = (
    "-D",
    "yarn.scheduler.capacity.root.users.leaf-queue-template.user-limit-factor=3",
    "-D",
    "yarn.scheduler.capacity.root.users.maximum-capacity=90",
)


@pytest.mark.parametrize("extra", [(), CAPPED_PARENT], ids=["as-is", "capped-parent"])
def test_legacy_queues_agree(tmp_path, extra):
    """As configured, and with users capped at 90 % and leaves that reach
    their maximum before their user limit (the parent's limit, capped by its
    maximum, loses the blocked headroom)."""
    ours, our_queues = _sls("cap-auto-queues-legacy", tmp_path / "emu", *extra)
    hadoops, hadoop_queues = _sls(
        "cap-auto-queues-legacy", tmp_path / "hadoop", "--scheduler-impl", "hadoop", *extra
    )
    assert our_queues == hadoop_queues
    assert hadoop_queues["dave_1"] == "root.users.dave"
    assert ours == hadoops


def test_v2_queues_and_their_removal_agree(tmp_path):
    """With and without the deletion policy (the monitor off): bob's job ends
    at another time, so the agreement depends on both removing the same
    queues at the same moments."""
    ours, our_queues = _sls("cap-auto-queues-v2", tmp_path / "emu")
    hadoops, hadoop_queues = _sls(
        "cap-auto-queues-v2", tmp_path / "hadoop", "--scheduler-impl", "hadoop"
    )
    assert our_queues == hadoop_queues
    assert hadoop_queues["alice_1"] == "root.users.eng.alice"
    assert ours == hadoops
    off = ("-D", "yarn.resourcemanager.scheduler.monitor.enable=false")
    ours_off, _ = _sls("cap-auto-queues-v2", tmp_path / "emu-off", *off)
    hadoops_off, _ = _sls(
        "cap-auto-queues-v2", tmp_path / "hadoop-off", "--scheduler-impl", "hadoop", *off
    )
    assert ours_off == hadoops_off
    assert hadoops_off != hadoops
