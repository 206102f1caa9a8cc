"""maxRunningApps for queues and users: Hadoop's MaxRunningAppsEnforcer.

An attempt joins its leaf queue as runnable only if its user and every
queue up to the root are below their limits; otherwise it waits as
non-runnable (its asks are kept but never offered a node). When a runnable
attempt leaves, the waiting attempts that may now fit are considered
oldest first (by start time, ties by the order of the lists they come
from), as many as the number of lists that gained a slot; a reload of the
allocation file reconsiders every waiting attempt.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from emu.rm.scheduler.fair.arith import INT_MAX
from emu.rm.scheduler.fair.fs_leaf_queue import FSLeafQueue
from emu.rm.scheduler.fair.fs_parent_queue import FSParentQueue
from emu.rm.scheduler.fair.fs_queue import FSQueue

if TYPE_CHECKING:
    from emu.rm.scheduler.fair.app import FSApp
    from emu.rm.scheduler.fair.scheduler import FairScheduler


class MaxRunningAppsEnforcer:
    def __init__(self, fs: FairScheduler) -> None:
        self.fs = fs
        self.user_runnable: dict[str, int] = {}
        self.user_non_runnable: dict[str, list[FSApp]] = {}

    def can_be_runnable(self, queue: FSLeafQueue, app: FSApp) -> bool:
        return not self.exceeds_user_max(app.user) and not self.exceeds_queue_max(queue)

    def exceeds_user_max(self, user: str) -> bool:
        return self.user_runnable.get(user, 0) >= self.fs.alloc.user_max(user)

    @staticmethod
    def exceeds_queue_max(queue: FSQueue | None) -> bool:
        while queue is not None:
            if queue.num_runnable() >= queue.max_running_apps:
                return True
            queue = queue.parent
        return False

    def track_runnable(self, app: FSApp) -> None:
        parent = app.queue.parent
        while parent is not None:
            parent.runnable_apps += 1
            parent = parent.parent
        self.user_runnable[app.user] = self.user_runnable.get(app.user, 0) + 1

    def track_non_runnable(self, app: FSApp) -> None:
        self.user_non_runnable.setdefault(app.user, []).append(app)

    def untrack_runnable(self, app: FSApp) -> None:
        n = self.user_runnable[app.user] - 1
        if n == 0:
            del self.user_runnable[app.user]
        else:
            self.user_runnable[app.user] = n
        parent = app.queue.parent
        while parent is not None:
            parent.runnable_apps -= 1
            parent = parent.parent

    def untrack_non_runnable(self, app: FSApp) -> None:
        waiting = self.user_non_runnable.get(app.user)
        if waiting is not None and app in waiting:
            waiting.remove(app)
            if not waiting:
                del self.user_non_runnable[app.user]

    def update_on_removal(self, app: FSApp, queue: FSLeafQueue) -> None:
        """A runnable app left `queue`: start the waiting apps that now fit."""
        highest: FSQueue | None = (
            queue if queue.num_runnable() == queue.max_running_apps - 1 else None
        )
        parent = queue.parent
        while parent is not None:
            if parent.num_runnable() == parent.max_running_apps - 1:
                highest = parent
            parent = parent.parent
        lists: list[list[FSApp]] = []
        if highest is not None:
            self._gather(highest, lists)
        if self.user_runnable.get(app.user, 0) == self.fs.alloc.user_max(app.user) - 1:
            lists.append(list(self.user_non_runnable.get(app.user, ())))
        self._update(lists, len(lists))

    def update_on_reload(self) -> None:
        lists: list[list[FSApp]] = []
        self._gather(self.fs.qm.root, lists)
        self._update(lists, INT_MAX)

    def _gather(self, queue: FSQueue, lists: list[list[FSApp]]) -> None:
        if queue.num_runnable() < queue.max_running_apps:
            if isinstance(queue, FSLeafQueue):
                lists.append(list(queue.non_runnable))
            elif isinstance(queue, FSParentQueue):
                for child in queue.children:
                    self._gather(child, lists)

    def _update(self, lists: list[list[FSApp]], max_runnable: int) -> None:
        """Walk the lists oldest first, making runnable what fits."""
        heap = [(lst[0].start_ms, i, 0) for i, lst in enumerate(lists) if lst]
        heapq.heapify(heap)
        prev: FSApp | None = None
        started: list[FSApp] = []
        while heap:
            _, i, pos = heapq.heappop(heap)
            app = lists[i][pos]
            if pos + 1 < len(lists[i]):
                heapq.heappush(heap, (lists[i][pos + 1].start_ms, i, pos + 1))
            if app is prev:
                continue
            if self.can_be_runnable(app.queue, app):
                self.track_runnable(app)
                app.queue.runnable.append(app)
                app.set_runnable(True)
                started.append(app)
                if len(started) >= max_runnable:
                    break
            prev = app
        for app in started:
            app.queue.non_runnable.remove(app)
            self.untrack_non_runnable(app)
