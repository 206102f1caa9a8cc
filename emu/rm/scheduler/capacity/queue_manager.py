"""Queues coming and going in a running CapacityScheduler: Hadoop's
CapacitySchedulerQueueManager and AutoCreatedQueueDeletionPolicy.

`auto_queues` computes the settings with a queue created or removed; this
applies them to the live tree, whose other queues keep their apps and
usage: a queue created at an app's submission (createQueue), the idle
dynamic queues removed on the monitor's tick (the deletion policy), and an
admin refresh checked before the scheduler applies it (reinitializeQueues:
static queues cannot be removed, a leaf with apps cannot become a parent,
auto-created leaves are created again under the new settings).

The manager keeps the configuration with the properties auto-created queues
got from their templates, as Hadoop writes them into its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.rm.scheduler.capacity import auto_queues
from emu.rm.scheduler.capacity.config import LEGACY, PREFIX, CapacityConf, parse, queue_paths
from emu.rm.scheduler.capacity.placement import may_submit
from emu.rm.scheduler.capacity.queues import LeafQueue, build, leaves_under

if TYPE_CHECKING:
    from emu.rm.app import RMApp
    from emu.rm.scheduler.capacity.scheduler import CapacityScheduler


class QueueManager:
    """CapacitySchedulerQueueManager for one CapacityScheduler, with the
    AutoCreatedQueueDeletionPolicy that removes what it created."""

    def __init__(self, sched: CapacityScheduler, conf: Configuration) -> None:
        self.sched = sched
        self.conf = conf
        """The configuration with the properties auto-created queues got
        from templates."""
        self.marked: set[str] = set()
        """The queues the deletion policy found eligible in its last pass."""

    # --- creation -------------------------------------------------------------------
    def create(self, path: str, app: RMApp, mapped: bool) -> str | None:
        """CapacitySchedulerQueueManager.createQueue for an app's queue; the
        rejection reason if it cannot be created."""
        sched = self.sched
        s = sched.ctx.settings
        try:
            conf, cs, created = auto_queues.create(
                self.conf, sched.cs, path, s.minimum_allocation, s.maximum_allocation
            )
        except (auto_queues.CreationError, InputError) as e:
            if not mapped:
                return (
                    f"Application {app.app_id} submitted by user {app.user} "
                    f"to unknown queue: {path}"
                )
            return (
                f"Application {app.app_id} submission by user : {app.user} to  queue : "
                f"{path} failed : {e}"
            )
        if not may_submit(cs, path, app.user):
            # RMAppManager checks a dynamic queue's permissions (its
            # template's ACLs and its ancestors') before it is created.
            return (
                f"User {app.user} does not have permission to submit {app.app_id} to queue {path}"
            )
        self.resize(conf, cs, created[0].rsplit(".", 1)[0])
        now = sched.ctx.now_ms()
        for p in created[:-1]:
            # ParentQueue.addDynamicChildQueue stamps the parent it grows.
            sched.tree[p].last_submitted_ms = now
        parent = sched.tree[sched.cs.queues[path].parent or ""]
        if parent.conf.dynamic:
            parent.last_submitted_ms = now
        return None

    def submission_refusal(self, leaf: LeafQueue, app: RMApp, mapped: bool) -> str | None:
        """Why `leaf` refuses `app`: an AutoCreatedLeafQueue takes apps only
        through a mapping, and has no maximum-applications limits; any other
        leaf checks its state, ACLs and limits."""
        cs = self.sched.cs
        parent_conf = cs.queues[leaf.conf.parent or ""] if leaf.conf.dynamic else None
        if parent_conf is None or parent_conf.auto_create != LEGACY:
            return leaf.submission_refusal(app.user, app.app_id)
        if mapped:
            return None
        return (
            f"Application {app.app_id} submission by user : {app.user} to specified "
            f"queue : {app.queue}  is prohibited. Verify automatic queue mapping for "
            f"user exists in {PREFIX}queue-mappings"
        )

    def resize(self, conf: Configuration, cs: CapacityConf, *parents: str) -> None:
        """Run with queue settings `cs` that differ from the current ones
        only by queues created or removed under `parents` and the shares
        they change: the live queues keep their apps and usage. `conf` is
        the configuration with the created queues' properties. The leaves
        under those parents may activate apps (each parent's
        updateClusterResource)."""
        sched = self.sched
        self.conf, sched.cs = conf, cs
        sched.alloc.cs = cs
        sched.tree, sched.root = build(cs, sched.leaf_metrics, sched.tree)
        for path in cs.queues:
            sched.demand.setdefault(path, 0)
        for path in [p for p in sched.demand if p not in cs.queues]:
            del sched.demand[path]
        for parent in dict.fromkeys(parents):
            if parent in sched.tree:
                for leaf in leaves_under(sched.tree[parent]):
                    sched.activate(leaf)

    # --- removal (AutoCreatedQueueDeletionPolicy) --------------------------------------
    def delete_idle_queues(self) -> None:
        """AutoCreatedQueueDeletionPolicy.editSchedule: queues eligible in
        two passes in a row are removed if idle longer than the expiry."""
        sched = self.sched
        cs, now = sched.cs, sched.ctx.now_ms()
        eligible = [p for p in cs.queues if self._eligible_for_deletion(p)]
        due = [p for p in eligible if p in self.marked]
        self.marked = {p for p in eligible if p not in due}
        removed: list[str] = []
        for path in due:
            q = sched.tree.get(path)
            if q is None or not self._eligible_for_deletion(path):
                continue
            if (now - q.last_submitted_ms) // 1000 <= cs.auto_expiry_ms // 1000:
                continue
            cs = auto_queues.remove(cs, path)
            sched.cs = cs
            sched.queues.pop(path, None)
            removed.append(path.rsplit(".", 1)[0])
        if removed:
            self.resize(self.conf, cs, *removed)

    def _eligible_for_deletion(self, path: str) -> bool:
        """isEligibleForAutoDeletion: a dynamic leaf without apps or a
        dynamic parent without children, with queue-auto-removal enabled."""
        qc = self.sched.cs.queues.get(path)
        if qc is None or not qc.dynamic or qc.auto_create == LEGACY:
            return False
        q = self.sched.tree[path]
        empty = q.num_apps == 0 if isinstance(q, LeafQueue) else not qc.children
        return empty and auto_queues.removal_enabled(self.conf, path)

    # --- refresh --------------------------------------------------------------------
    def reinitialize(self, conf: Configuration) -> tuple[CapacityConf, Configuration] | str:
        """The queue settings of a refreshed configuration and the
        configuration with the auto-created queues' properties, or why the
        refresh is refused: it is invalid, removes a static queue, or turns
        a leaf with apps into a parent. Auto-created leaves survive a
        refresh, sized afresh."""
        sched = self.sched
        s = sched.ctx.settings
        try:
            paths = queue_paths(conf)
            for path in sched.tree:
                if path not in paths and not sched.cs.queues[path].dynamic:
                    return f"queue {path} cannot be removed by a refresh"
            cs = parse(conf, s.minimum_allocation, s.maximum_allocation)
            auto_conf = conf
            for path, qc in sched.cs.queues.items():
                if qc.dynamic and qc.is_leaf and path not in cs.queues:
                    auto_conf, cs, _ = auto_queues.create(
                        auto_conf, cs, path, s.minimum_allocation, s.maximum_allocation
                    )
        except InputError as e:
            return str(e)
        except auto_queues.CreationError as e:
            return str(e)
        for path, old in sched.tree.items():
            new = cs.queues.get(path)
            if new is None:
                continue
            if isinstance(old, LeafQueue) and not new.is_leaf and old.num_apps:
                return f"leaf queue {path} has applications and cannot become a parent queue"
        return cs, auto_conf
