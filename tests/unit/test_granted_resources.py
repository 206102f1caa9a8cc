"""What each scheduler grants for an ask of <1 GB, 4 vcores, 1 gpu>, through
the RM's services: Hadoop normalizes asks with the scheduler's calculator.
The DefaultResourceCalculator (FifoScheduler, and the CapacityScheduler's
default) grants memory and one vcore, nothing of the other types; the
DominantResourceCalculator (Capacity with DRF, and always the
FairScheduler's normalization) grants every type asked for."""

from __future__ import annotations

import pytest

from emu.msg import catalogue as C
from emu.resources import Resource
from emu.rm.scheduler.locality import ANY
from emu.testing.cluster import ask, fifo_conf
from emu.testing.rm import RMHarness

DRF = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
GPU_ASK = {"memory-mb": 1024, "vcores": 4, "gpu": 1}


def beat(rm: RMHarness) -> None:
    """A node heartbeat, after the periodic update the FairScheduler needs
    before it places anything (demand and fair shares)."""
    if rm.ctx.scheduler.update_interval_ms is not None:
        rm.ctx.scheduler.update()
    rm.heartbeat("h1")


def granted(props: dict[str, object]) -> list[Resource]:
    rm = RMHarness(fifo_conf({"yarn.resource-types": "gpu", **props}))
    rm.call(
        C.RESOURCE_TRACKER, "register_node", node_id="h1", host="h1", rack="/r1",
        resource={"memory-mb": 8192, "vcores": 8, "gpu": 2}, nm_address="mem://nm",
        containers=[],
    )  # fmt: skip
    app = rm.submit("a", queue="root.default")
    beat(rm)
    rm.register_am(app)
    rm.allocate(app, [ask(20, ANY, 1, capability=GPU_ASK)])
    beat(rm)
    reply = rm.allocate(app)
    assert "allocated" in reply, reply
    return [Resource.from_wire(c["resource"]) for c in reply["allocated"]]


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({}, Resource(1024, 1)),
        ({"yarn.resourcemanager.scheduler.class": "capacity"}, Resource(1024, 1)),
        (
            {
                "yarn.resourcemanager.scheduler.class": "capacity",
                "yarn.scheduler.capacity.resource-calculator": DRF,
            },
            Resource(1024, 4, {"gpu": 1}),
        ),
        ({"yarn.resourcemanager.scheduler.class": "fair"}, Resource(1024, 4, {"gpu": 1})),
    ],
    ids=["fifo", "capacity-default", "capacity-drf", "fair"],
)
async def test_granted_container_follows_the_calculator(props, expected, autojump_clock):
    assert granted(props) == [expected]
