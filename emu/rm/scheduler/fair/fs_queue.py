"""What parent and leaf queues share: Hadoop's FSQueue.

Queues are named by their full path (`root.a.b`). A queue's properties
(weight, min and max share, maxRunningApps, maxAMShare, preemption
timeouts and threshold) come from the allocation configuration; ACLs are
inherited from the ancestors. Usage is tracked per queue as containers come
and go; demand (usage plus outstanding asks, capped at the max share) and
fair shares are recomputed on the scheduler's periodic update, as in
Hadoop, so between updates they are as stale as Hadoop's are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource
from emu.rm.scheduler.fair.allocation_file import (
    ADMINISTER,
    EVERYBODY,
    SUBMIT,
    ConfigurableResource,
)
from emu.rm.scheduler.fair.arith import fits_in
from emu.rm.scheduler.fair.orderings import KeptMaxShare
from emu.rm.scheduler.fair.policies import Policy

if TYPE_CHECKING:
    from emu.rm.scheduler.fair.fs_parent_queue import FSParentQueue
    from emu.rm.scheduler.fair.scheduler import FairScheduler
    from emu.rm.scheduler.scheduler_node import SchedulerNode

ROOT = "root"
DEFAULT = "root.default"
NONE = ZERO
"""What an assignment returns when it placed nothing."""
CONTAINER_RESERVED = Resource(-1, 0)
"""What an assignment returns when it reserved the node instead."""


class InvalidQueueName(Exception):
    """A queue name with an empty or untrimmed component."""


def ensure_root_prefix(name: str) -> str:
    if name != ROOT and not name.startswith(ROOT + "."):
        return ROOT + "." + name
    return name


class FSQueue:
    """What parent and leaf queues share (Hadoop's FSQueue)."""

    is_leaf = False

    def __init__(self, name: str, fs: FairScheduler, parent: FSParentQueue | None) -> None:
        self.shortcuts = fs.shortcuts
        self._max_share = KeptMaxShare(fs.shortcuts)
        self.name = name
        self.fs = fs
        self.parent = parent
        self.start_ms = 0
        self.fair_share = ZERO
        self.steady_fair_share = ZERO
        self.usage = ZERO
        self.demand = ZERO
        self.policy: Policy = fs.alloc.policy(name)
        self.weight = 1.0
        self.min_share = ZERO
        self.max_conf: ConfigurableResource = fs.alloc.max_share(name)
        self.max_child: ConfigurableResource | None = None
        self.max_running_apps = 0
        self.max_am_share = 0.5
        self.min_share_timeout = 0
        self.fair_share_timeout = 0
        self.fair_share_threshold = 0.5
        self.preemptable = True
        self.reinit(False)

    # --- configuration --------------------------------------------------------------------------
    def reinit(self, recursive: bool) -> None:
        """Take this queue's properties from the allocation configuration."""
        alloc = self.fs.alloc
        name = self.name
        self.weight = alloc.weight(name)
        self.min_share = alloc.min_share(name)
        self.max_conf = alloc.max_share(name)
        self.max_running_apps = alloc.max_apps(name)
        self.max_am_share = alloc.max_am_share(name)
        self.max_child = alloc.max_child_resources.get(name)
        parent = self.parent
        self.min_share_timeout = alloc.min_share_timeout(name)
        if self.min_share_timeout == -1 and parent is not None:
            self.min_share_timeout = parent.min_share_timeout
        self.fair_share_timeout = alloc.fair_share_timeout(name)
        if self.fair_share_timeout == -1 and parent is not None:
            self.fair_share_timeout = parent.fair_share_timeout
        self.fair_share_threshold = alloc.fair_share_threshold(name)
        if self.fair_share_threshold < 0 and parent is not None:
            self.fair_share_threshold = parent.fair_share_threshold
        if parent is not None and not parent.preemptable:
            self.preemptable = False
        else:
            self.preemptable = name not in alloc.non_preemptable
        if recursive:
            for child in self.children_list():
                child.reinit(True)

    def children_list(self) -> list[FSQueue]:
        return []

    @property
    def max_share(self) -> Resource:
        """The configured max (percentages of the current cluster), at least
        the min share (kept: see orderings.KeptMaxShare)."""
        return self._max_share.get(self.fs.cluster, self.max_conf, self.min_share)

    def has_access(self, kind: str, user: str, groups: tuple[str, ...]) -> bool:
        """ACLs are inherited: access to a queue or any of its ancestors grants it."""
        name: str | None = self.name
        alloc = self.fs.alloc
        while name is not None:
            acl = alloc.acl(name, kind)
            if acl is None and name == ROOT:
                acl = EVERYBODY
            if acl is not None and acl.allows(user, groups):
                return True
            name = name.rsplit(".", 1)[0] if "." in name else None
        return False

    def can_submit(self, user: str, groups: tuple[str, ...]) -> bool:
        return self.has_access(SUBMIT, user, groups) or self.has_access(ADMINISTER, user, groups)

    # --- usage and limits -----------------------------------------------------------------------
    def inc_usage(self, r: Resource) -> None:
        q: FSQueue | None = self
        while q is not None:
            q.usage = q.usage + r
            q = q.parent

    def dec_usage(self, r: Resource) -> None:
        q: FSQueue | None = self
        while q is not None:
            q.usage = q.usage - r
            q = q.parent

    def fits_in_max_share(self, additional: Resource) -> bool:
        """Whether `additional` fits under this queue's and every ancestor's
        max share; asked on every offer, so memory-and-vcores resources are
        compared without building the sum."""
        q: FSQueue | None = self
        while q is not None:
            usage, limit = q.usage, q.max_share
            if usage.extra or additional.extra or limit.extra:
                if not fits_in(usage + additional, limit):
                    return False
            elif (
                usage.memory + additional.memory > limit.memory
                or usage.vcores + additional.vcores > limit.vcores
            ):
                return False
            q = q.parent
        return True

    def precheck(self, node: SchedulerNode) -> bool:
        """assignContainerPreCheck: the node is not reserved, the queue is within its max."""
        return node.reserved is None and fits_in(self.usage, self.max_share)

    def num_runnable(self) -> int:
        raise NotImplementedError

    def is_active(self) -> bool:
        return self.num_runnable() > 0

    def is_empty(self) -> bool:
        raise NotImplementedError

    # --- periodic update ------------------------------------------------------------------------
    def update(self, fair_share: Resource) -> None:
        self.fair_share = fair_share
        self.update_internal()

    def update_internal(self) -> None:
        raise NotImplementedError

    def update_demand(self) -> None:
        raise NotImplementedError

    def assign_container(self, node: SchedulerNode) -> Resource:
        raise NotImplementedError
