"""max-parallel-apps for queues and users: Hadoop's CSMaxRunningAppsEnforcer.

An attempt joins its leaf as runnable only if its user and the leaf and
every ancestor are below their `max-parallel-apps`; otherwise it waits as
non-runnable (AbstractLeafQueue's nonRunnableApps), neither pending
activation nor active. When a runnable attempt leaves, only the highest
queue that was at its limit and the user, if at theirs, can have attempts
that may now run: their waiting attempts are considered oldest first, as
many as the number of lists gathered (updateRunnabilityOnAppRemoval). A
refresh reconsiders every waiting attempt (updateRunnabilityOnReload).

The scheduler holds one enforcer; its bookkeeping is the runnable attempts,
each user's count of them and each user's waiting attempts, oldest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.rm.scheduler.capacity.queues import LeafQueue, ParentQueue, Queue

if TYPE_CHECKING:
    from emu.rm.scheduler.capacity.scheduler import CapacityScheduler
    from emu.rm.scheduler.scheduler_app import SchedulerApp

INT_MAX = 2147483647


class MaxRunningAppsEnforcer:
    """CSMaxRunningAppsEnforcer for one CapacityScheduler."""

    def __init__(self, sched: CapacityScheduler) -> None:
        self.sched = sched
        self.runnable: set[str] = set()
        self.user_runnable: dict[str, int] = {}
        self.user_waiting: dict[str, list[SchedulerApp]] = {}

    def track(self, sapp: SchedulerApp, leaf: LeafQueue) -> None:
        """checkRunnabilityWithUpdate, then trackApp: the attempt runs, or
        waits in its leaf and with its user."""
        if self.can_run(sapp, leaf):
            self.make_runnable(sapp, leaf)
        else:
            leaf.non_runnable.append(sapp)
            self.user_waiting.setdefault(sapp.user, []).append(sapp)

    def untrack(self, sapp: SchedulerApp, leaf: LeafQueue) -> None:
        """untrackApp for an attempt that left `leaf`; if it was runnable,
        waiting attempts may run (updateRunnabilityOnAppRemoval)."""
        if sapp.attempt_id in self.runnable:
            self.runnable.discard(sapp.attempt_id)
            n = self.user_runnable[sapp.user] - 1
            if n:
                self.user_runnable[sapp.user] = n
            else:
                del self.user_runnable[sapp.user]
            q = leaf.parent
            while q is not None:
                q.runnable_apps -= 1
                q = q.parent
            self._after_removal(sapp, leaf)
        else:
            waiting = self.user_waiting.get(sapp.user)
            if waiting is not None and sapp in waiting:
                waiting.remove(sapp)

    def update_on_reload(self) -> None:
        """updateRunnabilityOnReload: every waiting attempt that now fits runs."""
        lists: list[list[SchedulerApp]] = []
        self._gather(self.sched.root, lists)
        self._update(lists, INT_MAX)

    def can_run(self, sapp: SchedulerApp, leaf: LeafQueue) -> bool:
        """checkRunnabilityWithUpdate: the user and the leaf and every
        ancestor are below their max-parallel-apps."""
        user_max = self.sched.cs.max_parallel_apps_for_user(sapp.user)
        if self.user_runnable.get(sapp.user, 0) >= user_max:
            return False
        q: Queue | None = leaf
        while q is not None:
            if q.num_runnable() >= q.conf.max_parallel_apps:
                return False
            q = q.parent
        return True

    def make_runnable(self, sapp: SchedulerApp, leaf: LeafQueue) -> None:
        """trackRunnableApp, then LeafQueue.submitApplicationAttempt."""
        self.runnable.add(sapp.attempt_id)
        self.user_runnable[sapp.user] = self.user_runnable.get(sapp.user, 0) + 1
        q = leaf.parent
        while q is not None:
            q.runnable_apps += 1
            q = q.parent
        leaf.add_attempt(sapp)
        self.sched.activate(leaf)

    def _after_removal(self, sapp: SchedulerApp, leaf: LeafQueue) -> None:
        """updateRunnabilityOnAppRemoval: only a queue that was at its limit
        before the removal (the highest such ancestor) and the user, if at
        theirs, can have attempts that may now run."""
        highest: Queue | None = (
            leaf if leaf.num_runnable() == leaf.conf.max_parallel_apps - 1 else None
        )
        q = leaf.parent
        while q is not None:
            if q.num_runnable() == q.conf.max_parallel_apps - 1:
                highest = q
            q = q.parent
        lists: list[list[SchedulerApp]] = []
        if highest is not None:
            self._gather(highest, lists)
        user = sapp.user
        if self.user_runnable.get(user, 0) == self.sched.cs.max_parallel_apps_for_user(user) - 1:
            lists.append(list(self.user_waiting.get(user, ())))
        self._update(lists, len(lists))

    def _gather(self, q: Queue, lists: list[list[SchedulerApp]]) -> None:
        """gatherPossiblyRunnableAppLists: non-runnable lists of the leaves
        under `q`, skipping subtrees at their limit."""
        if q.num_runnable() >= q.conf.max_parallel_apps:
            return
        if isinstance(q, LeafQueue):
            lists.append(list(q.non_runnable))
        else:
            assert isinstance(q, ParentQueue)
            for c in q.children:
                self._gather(c, lists)

    def _update(self, lists: list[list[SchedulerApp]], most: int) -> None:
        """updateAppsRunnability: visit the waiting attempts oldest first
        (MultiListStartTimeIterator), make runnable each that now fits, and
        stop after `most` of them; Hadoop passes the number of lists
        gathered, not of attempts, when an app is removed."""
        leaf_of = self.sched.leaf_of
        heads = [0] * len(lists)
        prev: SchedulerApp | None = None
        done: list[SchedulerApp] = []
        while True:
            best = -1
            for i, lst in enumerate(lists):
                if heads[i] < len(lst) and (
                    best < 0 or lst[heads[i]].order < lists[best][heads[best]].order
                ):
                    best = i
            if best < 0:
                break
            nxt = lists[best][heads[best]]
            heads[best] += 1
            if nxt is prev:
                continue
            leaf = leaf_of(nxt)
            if self.can_run(nxt, leaf):
                self.make_runnable(nxt, leaf)
                done.append(nxt)
                if len(done) >= most:
                    break
            prev = nxt
        for sapp in done:
            leaf_of(sapp).non_runnable.remove(sapp)
            self.user_waiting[sapp.user].remove(sapp)
