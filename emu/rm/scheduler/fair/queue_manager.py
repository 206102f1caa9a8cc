"""All queues by name, created on demand: Hadoop's QueueManager.

`root.default` always exists; other queues come from the allocation file
or are created on demand by the placement policy (ad hoc queues take their
parent's `maxChildResources` as their max). A reloaded allocation file
sets policies top-down, makes way for configured queues by removing empty
queues in the way, and recomputes the steady fair shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.rm.scheduler.fair.fs_leaf_queue import FSLeafQueue
from emu.rm.scheduler.fair.fs_parent_queue import FSParentQueue
from emu.rm.scheduler.fair.fs_queue import (
    DEFAULT,
    ROOT,
    FSQueue,
    InvalidQueueName,
    ensure_root_prefix,
)

if TYPE_CHECKING:
    from emu.rm.scheduler.fair.scheduler import FairScheduler


class QueueManager:
    """All queues by name; creates them on demand (Hadoop's QueueManager)."""

    def __init__(self, fs: FairScheduler) -> None:
        self.fs = fs
        self.root = FSParentQueue(ROOT, fs, None)
        self.queues: dict[str, FSQueue] = {ROOT: self.root}
        self.leaves: list[FSLeafQueue] = []
        self.get_leaf("default", True)
        self.root.reinit(True)

    def get(self, name: str) -> FSQueue | None:
        return self.queues.get(ensure_root_prefix(name))

    def get_leaf(self, name: str, create: bool, recompute: bool = True) -> FSLeafQueue | None:
        q = self._get(name, create, leaf=True, recompute=recompute)
        return q if isinstance(q, FSLeafQueue) else None

    def get_parent(self, name: str, create: bool, recompute: bool = True) -> FSParentQueue | None:
        q = self._get(name, create, leaf=False, recompute=recompute)
        return q if isinstance(q, FSParentQueue) else None

    def _get(self, name: str, create: bool, leaf: bool, recompute: bool) -> FSQueue | None:
        name = ensure_root_prefix(name)
        q = self.queues.get(name)
        if q is None and create:
            q = self._create(name, leaf)
            if q is not None and recompute:
                self.root.recompute_steady_shares()
        return q

    def _create(self, name: str, leaf: bool) -> FSQueue | None:
        """Create `name` and any missing ancestors; None if an ancestor is a
        leaf or a policy forbids it."""
        new_names = [name]
        parent: FSParentQueue | None = None
        sep = len(name)
        while sep != -1:
            prev = sep
            sep = name.rfind(".", 0, sep)
            node = name[sep + 1 : prev]
            if not node or node != node.strip():
                raise InvalidQueueName(
                    f"Illegal node name at offset {sep + 1} for queue name {name}"
                )
            if sep == -1:
                break
            cur = name[:sep]
            existing = self.queues.get(cur)
            if existing is None:
                new_names.insert(0, cur)
            else:
                if isinstance(existing, FSParentQueue):
                    parent = existing
                break
        if parent is None:
            return None
        alloc = self.fs.alloc
        queue: FSQueue | None = None
        for i, qname in enumerate(new_names):
            child_policy = alloc.policy(qname)
            if not parent.policy.child_allowed(child_policy):
                return None
            last = i == len(new_names) - 1
            if last and leaf:
                queue = FSLeafQueue(qname, self.fs, parent)
                self.leaves.append(queue)
            else:
                if child_policy.leaf_only:
                    return None
                queue = FSParentQueue(qname, self.fs, parent)
            parent.children.append(queue)
            if qname not in alloc.configured and parent.max_child is not None:
                queue.max_conf = parent.max_child
            self.queues[qname] = queue
            if isinstance(queue, FSParentQueue):
                parent = queue
        return queue

    def _remove_if_empty(self, q: FSQueue) -> bool:
        if not q.is_empty():
            return False
        self._remove(q)
        return True

    def _remove(self, q: FSQueue) -> None:
        if isinstance(q, FSLeafQueue):
            self.leaves.remove(q)
        else:
            for child in list(q.children_list()):
                self._remove(child)
        del self.queues[q.name]
        assert q.parent is not None
        q.parent.children.remove(q)

    def _remove_incompatible(self, name: str, leaf: bool) -> bool:
        """Make way for `name` as a leaf/parent by removing empty queues in
        the way; False if something in the way could not be removed."""
        name = ensure_root_prefix(name)
        if name == ROOT or name.startswith(DEFAULT + "."):
            return False
        q = self.queues.get(name)
        if q is not None:
            if q.is_leaf == leaf:
                return True
            return self._remove_if_empty(q)
        sep = name.rfind(".")
        while sep != -1:
            prefix = self.queues.get(name[:sep])
            if prefix is not None and prefix.is_leaf:
                return self._remove_if_empty(prefix)
            sep = name.rfind(".", 0, sep)
        return True

    def update_allocation_configuration(self) -> None:
        """Apply a newly loaded allocation file: policies, configured queues,
        properties, steady shares."""
        alloc = self.fs.alloc
        self._set_policies(self.root)
        # ensureQueueExistsAndIsCompatibleAndIsStatic: in the order of the
        # allocation's HashSets, which is the order getLeafQueues lists the
        # leaves in (FairScheduler.update looks for starved apps in it)
        for name in alloc.configured.leaf_order:
            if self._remove_incompatible(name, True):
                self.get_leaf(name, True, recompute=False)
        for name in alloc.configured.parent_order:
            if self._remove_incompatible(name, False):
                self.get_parent(name, True, recompute=False)
        self.root.reinit(True)
        for q in self.queues.values():
            ad_hoc = q.parent is not None and q.name not in alloc.configured
            if ad_hoc and q.parent is not None and q.parent.max_child is not None:
                q.max_conf = q.parent.max_child
        self.root.recompute_steady_shares()

    def _set_policies(self, q: FSQueue) -> bool:
        """verifyAndSetPolicyFromConf: set policies top-down unless a child's
        policy is not allowed under its parent's."""
        alloc = self.fs.alloc
        policy = alloc.policy(q.name)
        for child in q.children_list():
            if not policy.child_allowed(alloc.policy(child.name)):
                return False
            if not self._set_policies(child):
                return False
        q.policy = policy
        return True
