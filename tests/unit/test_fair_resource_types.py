"""The FairScheduler with a third resource type (`yarn.resource-types=gpu`):
unbounded queues and apps in every declared type, weighted fair shares and
DRF ordering over every type, and starvation preemption of gpus."""

from __future__ import annotations

from pathlib import Path

import trio

from emu.resources import Resource
from emu.rm.node import RMNode
from emu.rm.scheduler.fair.arith import LONG_MAX
from emu.testing.cluster import ask
from emu.testing.fair import GB, FSHarness, write_alloc

GPU = {"yarn.resource-types": "gpu"}


def add_gpu_node(h: FSHarness, host: str, memory: int, vcores: int, gpu: int) -> None:
    rmnode = RMNode(host, host, "/rack1", Resource(memory, vcores, {"gpu": gpu}), "mem://nm", (), 0)
    h.ctx.nodes[host] = rmnode
    h.sched.on_NODE_ADDED(host, rmnode)
    h.drain()


def gpu_request(h: FSHarness, queue: str, num: int, memory: int = GB, gpu: int = 1) -> str:
    """A new app in `queue` asking for `num` containers of <memory, 1 vcore, gpu>."""
    attempt = h.submit(queue)
    assert attempt is not None
    capability = {"memory-mb": memory, "vcores": 1, "gpu": gpu}
    h.sched.allocate(attempt, [ask(1, "*", num, capability=capability)], [], [], [])
    h.drain()
    h.update()
    return attempt


def gpu_of(r: Resource) -> int:
    return dict(r.extra).get("gpu", 0)


def gpus(h: FSHarness, attempt: str) -> int:
    return gpu_of(h.fsapp(attempt).used)


async def test_queues_and_apps_without_max_resources_are_unbounded_in_gpu(
    tmp_path: Path, autojump_clock
):
    """Resources.unbounded(): Long.MAX_VALUE in every declared type, so a gpu
    ask fits the queue's (and its parents') max share."""
    h = FSHarness(GPU, alloc=write_alloc(tmp_path, '<queue name="a"/>'))
    add_gpu_node(h, "n1", 8 * GB, 8, 2)
    app = gpu_request(h, "root.a", 3)
    for name in ("root", "root.a"):
        assert dict(h.queue(name).max_share.extra) == {"gpu": LONG_MAX}
    assert dict(h.fsapp(app).max_share.extra) == {"gpu": LONG_MAX}
    h.heartbeat("n1", 3)
    assert h.live(app) == 2
    assert gpus(h, app) == 2


async def test_weighted_drf_fair_shares_split_gpus(tmp_path: Path, autojump_clock):
    """ComputeFairShares runs once per resource type under drf: weights 1 and
    3 split 8 gpus 2 / 6, as they split memory and vcores; each queue's one
    app gets its queue's share of every type."""
    alloc = write_alloc(
        tmp_path,
        "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>"
        '<queue name="a"><weight>1</weight></queue>'
        '<queue name="b"><weight>3</weight></queue>',
    )
    h = FSHarness(GPU, alloc=alloc)
    add_gpu_node(h, "n1", 16 * GB, 16, 8)
    a = gpu_request(h, "root.a", 8)
    b = gpu_request(h, "root.b", 8)
    h.update()
    assert h.queue("root.a").fair_share == Resource(4 * GB, 4, {"gpu": 2})
    assert h.queue("root.b").fair_share == Resource(12 * GB, 12, {"gpu": 6})
    assert h.fsapp(a).fair_share == Resource(4 * GB, 4, {"gpu": 2})
    assert h.fsapp(b).fair_share == Resource(12 * GB, 12, {"gpu": 6})


async def test_drf_orders_queues_by_gpu_dominant_share(tmp_path: Path, autojump_clock):
    """Queue a's tasks are gpu-heavy (1 of 4 gpus, 1 of 32 GB), queue b's
    memory-heavy (8 of 32 GB, no gpu): DRF goes by dominant share over all
    three types, so after four assignments each queue holds two tasks
    (dominant share 1/2), where memory alone would have favoured a's small
    tasks. At equal dominant shares (1/4 each) the next-largest shares
    decide: b's third share (0 gpu) is below a's (1/32 vcores), so b goes
    first."""
    alloc = write_alloc(
        tmp_path,
        "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>"
        '<queue name="a"/><queue name="b"/>',
    )
    h = FSHarness(GPU, alloc=alloc)
    add_gpu_node(h, "n1", 32 * GB, 32, 4)
    a = gpu_request(h, "root.a", 4)
    b = gpu_request(h, "root.b", 4, memory=8 * GB, gpu=0)
    seen = []
    for _ in range(4):
        h.heartbeat("n1")
        seen.append((h.live(a), h.live(b)))
    assert seen == [(1, 0), (1, 1), (1, 2), (2, 2)]


async def test_fair_share_preemption_takes_back_gpus(tmp_path: Path, autojump_clock):
    """A greedy app holds all four gpus; a second queue's app asks for gpus
    and is starved of its fair share (2 gpus under drf): two of the greedy
    app's containers are preempted and the starved app gets them."""
    alloc = write_alloc(
        tmp_path,
        "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>"
        "<defaultFairSharePreemptionThreshold>1</defaultFairSharePreemptionThreshold>"
        "<defaultFairSharePreemptionTimeout>0</defaultFairSharePreemptionTimeout>"
        '<queue name="a"/><queue name="b"/>',
    )
    props = {
        **GPU,
        "yarn.scheduler.fair.preemption": "true",
        "yarn.scheduler.fair.waitTimeBeforeKill": 0,
    }
    h = FSHarness(props, alloc=alloc)
    add_gpu_node(h, "n1", 32 * GB, 32, 4)
    greedy = gpu_request(h, "root.a", 4)
    h.heartbeat("n1", 4)
    assert gpus(h, greedy) == 4
    starving = gpu_request(h, "root.b", 4)
    assert h.queue("root.b").fair_share.extra == (("gpu", 2),)
    await trio.sleep(1)
    h.update()
    assert gpus(h, greedy) == 2
    h.heartbeat("n1", 4)
    assert gpus(h, starving) == 2


async def test_max_am_share_fills_a_zero_gpu_fair_share_from_what_is_free(
    tmp_path: Path, autojump_clock
):
    """Under the memory-only fair policy a queue's fair share has no gpus;
    computeMaxAMResource fills a zero type with min(free, max share), so an
    AM asking for a gpu still fits maxAMShare (0.5 of 2 gpus = 1)."""
    h = FSHarness(GPU, alloc=write_alloc(tmp_path, '<queue name="a"/>'))
    add_gpu_node(h, "n1", 8 * GB, 8, 2)
    attempt = h.submit("root.a", am=Resource(GB, 1, {"gpu": 1}))
    assert attempt is not None
    h.update()
    h.heartbeat("n1")
    queue = h.queue("root.a")
    assert gpu_of(queue.fair_share) == 0
    assert gpu_of(queue.max_am_metric) == 1
    assert gpus(h, attempt) == 1
