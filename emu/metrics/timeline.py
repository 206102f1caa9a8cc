"""Per-queue allocation against its share, and fairness, over simulated time.

`Timeline.tick(rm)` is a read-only observer the simulation calls every
simulated second; every `every_s` seconds it samples, from the scheduler's
own queue reports:

- the cluster's allocated and total memory and vcores;
- per leaf queue: allocated memory and vcores, pending memory, and the
  queue's share of memory — the instantaneous fair share under the
  FairScheduler, the guarantee (absolute capacity x cluster) under the
  CapacityScheduler, the whole cluster for FIFO's one queue;
- Jain's fairness index over the dominant shares of the leaf queues that
  have applications (running or pending): (sum x)^2 / (n * sum x^2), 1 when
  they all hold the same dominant share, 1/n when one holds everything;
  null while no queue has applications.

It reads simulated time only and rounds fractions to 6 digits, so it goes
into `summary.json` (key `timeline`) and stays byte-identical per seed;
`emu report` draws it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emu.rm.actor import ResourceManager

MAX_SAMPLES = 2000
"""Samples over the trace's span: long traces are sampled less often."""


def sample_every_s(span_ms: int) -> int:
    """Whole seconds between samples so a trace's span holds <= MAX_SAMPLES."""
    return max(1, math.ceil(span_ms / 1000 / MAX_SAMPLES))


def jain_index(shares: list[float]) -> float | None:
    """Jain's fairness index of `shares`; None for no shares, 1.0 if all zero."""
    if not shares:
        return None
    total = sum(shares)
    squares = sum(x * x for x in shares)
    if squares == 0:
        return 1.0
    return total * total / (len(shares) * squares)


class Timeline:
    """Samples the cluster every `every_s` simulated seconds; see the module."""

    def __init__(self, every_s: int = 1) -> None:
        self.every_s = every_s
        self.scheduler = ""
        self.t_ms: list[int] = []
        self.memory_used: list[int] = []
        self.vcores_used: list[int] = []
        self.memory_total: list[int] = []
        self.vcores_total: list[int] = []
        self.jain: list[float | None] = []
        self.queues: dict[str, dict[str, list[int]]] = {}

    def tick(self, rm: ResourceManager) -> None:
        now = rm.ctx.now_ms()
        if (now // 1000) % self.every_s:
            return
        sched = rm.ctx.scheduler
        s = rm.ctx.settings
        self.scheduler = "hadoop" if s.impl == "hadoop" else s.scheduler
        cluster = sched.cluster
        n = len(self.t_ms)
        self.t_ms.append(now)
        self.memory_used.append(sched.used.memory)
        self.vcores_used.append(sched.used.vcores)
        self.memory_total.append(cluster.memory)
        self.vcores_total.append(cluster.vcores)
        dominant = []
        for q in sched.queue_info(""):
            if q.get("type", "leaf") != "leaf":  # FIFO's reports carry no type: one leaf
                continue
            name = q["name"]
            # Over every partition: a labelled queue's `used` is its default one's.
            used = q.get("used_total") or q.get("used") or q["allocated"]
            mem, vc = used.get("memory-mb", 0), used.get("vcores", 0)
            series = self.queues.get(name)
            if series is None:  # a queue created mid-run reads 0 before it existed
                series = self.queues[name] = {
                    k: [0] * n for k in ("memory", "vcores", "share_memory", "pending_memory")
                }
            series["memory"].append(mem)
            series["vcores"].append(vc)
            series["share_memory"].append(share_memory(q, cluster.memory, self.scheduler))
            series["pending_memory"].append((q.get("pending") or {}).get("memory-mb", 0))
            if q.get("apps_running", 0) + q.get("apps_pending", 0) > 0:
                dominant.append(
                    max(
                        mem / cluster.memory if cluster.memory else 0.0,
                        vc / cluster.vcores if cluster.vcores else 0.0,
                    )
                )
        for series in self.queues.values():
            for values in series.values():
                if len(values) < n + 1:  # a queue that went away reads 0
                    values.append(0)
        j = jain_index(dominant)
        self.jain.append(None if j is None else round(j, 6))

    def to_json(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "every_s": self.every_s,
            "t_ms": self.t_ms,
            "memory_used": self.memory_used,
            "vcores_used": self.vcores_used,
            "memory_total": self.memory_total,
            "vcores_total": self.vcores_total,
            "jain_dominant_share": self.jain,
            "queues": {name: self.queues[name] for name in sorted(self.queues)},
        }


def share_memory(q: dict[str, Any], cluster_mb: int, scheduler: str) -> int:
    """A leaf queue's share of memory, from its report: the fair share
    (fair), the guarantee (capacity), the whole cluster (FIFO's one queue);
    0 (none known) when Hadoop's scheduler class decides (`hadoop`)."""
    if scheduler == "hadoop":
        return 0
    if scheduler == "fair":
        return (q.get("fair_share") or {}).get("memory-mb", 0)
    if scheduler == "capacity":
        return round(q.get("absolute_capacity", 0.0) / 100 * cluster_mb)
    return cluster_mb
