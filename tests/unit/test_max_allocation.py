"""The largest container an app may get: the configured maximum capped by
the largest registered node, resource by resource, as
ClusterNodeTracker.getMaxAllowedAllocation (updateMaxResources on node
arrival, departure and resize)."""

from __future__ import annotations

import pytest

from emu.resources import Resource
from emu.rm.scheduler.abstract_scheduler import SchedulerError
from emu.testing.fair import FSHarness


async def test_the_largest_node_caps_the_configured_maximum(autojump_clock):
    h = FSHarness(
        {
            "yarn.scheduler.maximum-allocation-mb": 131072,
            "yarn.scheduler.maximum-allocation-vcores": 4,
        }
    )
    assert h.sched.maximum == Resource(131072, 4)  # no node yet: as configured
    h.add_node("n1", 16384, 8)
    assert h.sched.maximum == Resource(16384, 4)
    h.add_node("n2", 32768, 2)
    assert h.sched.maximum == Resource(32768, 4)
    h.remove_node("n2")
    assert h.sched.maximum == Resource(16384, 4)
    h.remove_node("n1")
    assert h.sched.maximum == Resource(131072, 4)


async def test_an_ask_beyond_every_node_is_refused_by_name(autojump_clock):
    h = FSHarness({"yarn.scheduler.maximum-allocation-mb": 131072})
    h.add_node("n1", 16384, 8)
    with pytest.raises(SchedulerError) as e:
        h.request(65536, "queue1")
    assert "maximum allowed allocation=<memory:16384" in str(e.value)
    assert "configured maximum allocation=<memory:131072" in str(e.value)


async def test_forcing_the_configured_maximum(autojump_clock):
    h = FSHarness({"yarn.scheduler.maximum-allocation-mb": 131072})
    h.add_node("n1", 16384, 8)
    h.sched.set_force_configured_maximum(True)
    assert h.sched.maximum.memory == 131072
    h.sched.set_force_configured_maximum(False)
    assert h.sched.maximum.memory == 16384
