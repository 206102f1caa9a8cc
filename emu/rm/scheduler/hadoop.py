"""Hadoop's own scheduler class deciding inside emu's RM
(`emu.scheduler.impl=hadoop`, `--scheduler-impl hadoop`).

emu's RM keeps its entities, state machines, liveness monitors, metrics and
outputs exactly as with its own schedulers; this class charges containers
through the same hooks (`container_allocated`, `complete_container`). What
differs is who decides: every scheduler event and allocate call goes to the
Java driver (`emu/hadoop/java/emu/hadoop/SchedulerDriver.java`) around the
real FifoScheduler, CapacityScheduler, FairScheduler or the user's class,
and the driver answers with what that scheduler did: containers placed,
containers it ended (with YARN's exit status and diagnostics), stop orders
for NMs, apps accepted (in which queue) or rejected (with YARN's message),
the headroom and the preemption requests for an AM. The calls and the
answers are the contract in `emu.hadoop.contract` (mypy checks every call
here against it).

The scheduler's threads never run: `update()` calls, on emu's clock, what
Fair's update thread does every `yarn.scheduler.fair.update-interval-ms`
and what the Capacity preemption monitor does every
`...monitor.capacity.preemption.monitoring_interval`; `async_pass` what
the CapacityScheduler's asynchronous scheduling threads do every
`schedule-asynchronously.scheduling-interval-ms` (Hadoop 3.5's default),
from the start nodes emu draws (emu.rm.scheduler.async_scheduling).

A container Hadoop places is handed to emu at once (Hadoop's RM pulls an AM
container the same way); a task container then waits in emu for its AM's
next allocate, as in YARN. Hadoop's copy of it is ACQUIRED at placement
rather than at that allocate: nothing the schedulers decide reads the
difference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec

from emu.hadoop import bridge
from emu.hadoop.contract import (
    Accepted,
    CleanUp,
    Finished,
    Headroom,
    Placed,
    Preempt,
    Record,
    Refused,
    Rejected,
    Reply,
    decode,
    decode_capability,
    decode_partitions,
)
from emu.msg.types import EXIT_PREEMPTED
from emu.resources import ZERO, Resource, ResourceCalculator
from emu.rm.container import RMContainer
from emu.rm.enums import AppEvent, ContainerEvent, NodeEvent
from emu.rm.node_labels import split_node
from emu.rm.scheduler.abstract_scheduler import (
    Allocation,
    PartitionUsage,
    Scheduler,
    container_epoch,
)
from emu.rm.scheduler.app_scheduling_info import Ask
from emu.rm.scheduler.async_scheduling import AsyncScheduling

if TYPE_CHECKING:
    from emu.hadoop.contract import SchedulerBackend
    from emu.rm.app import RMApp
    from emu.rm.attempt import RMAppAttempt
    from emu.rm.context import RMContext
    from emu.rm.node import RMNode
    from emu.rm.scheduler.scheduler_node import SchedulerNode

CAPACITY_DEFAULTS = {
    # Hadoop's shipped capacity-scheduler.xml: one queue holding everything.
    "yarn.scheduler.capacity.root.queues": "default",
    "yarn.scheduler.capacity.root.default.capacity": "100",
}
PREEMPTION_INTERVAL = "yarn.resourcemanager.monitor.capacity.preemption.monitoring_interval"

P = ParamSpec("P")


class HadoopScheduler(Scheduler):
    """emu's scheduler seam around a Hadoop scheduler; see the module docstring."""

    name = "hadoop"

    def __init__(self, ctx: RMContext) -> None:
        super().__init__(ctx, ResourceCalculator())
        from emu.rm.scheduler.fair.settings import ALLOCATION_FILE, allocation_file_path

        conf = ctx.conf
        props = {name: conf.get(name) or "" for name in conf}
        props["emu.rm.epoch"] = str(container_epoch(conf))
        if (
            ctx.settings.scheduler == "capacity"
            and "yarn.scheduler.capacity.root.queues" not in props
        ):
            props.update(CAPACITY_DEFAULTS)
        if ctx.settings.scheduler == "fair":
            path, _ = allocation_file_path(conf)
            if path is not None:
                props[ALLOCATION_FILE] = str(path.resolve())
        self._explicit_classpath = conf.get("emu.hadoop.classpath") or None
        self.java_class = ctx.settings.java_class
        self.driver: SchedulerBackend = bridge.new_driver(
            self.java_class,
            props,
            ctx.cluster_timestamp,
            self._explicit_classpath,
            conf.sources.get("yarn.resourcemanager.scheduler.class", "configuration"),
            ctx.settings.hadoop_version,
        )
        interval = int(self.driver.asyncIntervalMs())
        if interval > 0:
            self.async_scheduling = AsyncScheduling.from_conf(
                conf, interval, int(self.driver.asyncThreads()), ctx.cluster_timestamp
            )
        self.node_sort_interval_ms = int(self.driver.nodeSortIntervalMs())
        self._update_ms = int(self.driver.updateIntervalMs())
        self._preempt_ms = int(self.driver.preemptionIntervalMs())
        self._delete_ms = int(self.driver.queueDeletionIntervalMs())
        steps = [ms for ms in (self._update_ms, self._preempt_ms, self._delete_ms) if ms > 0]
        self.update_interval_ms = min(steps) if steps else None
        self._next_update = self._update_ms
        self._next_preempt = self._preempt_ms
        self._next_delete = 0
        self._types = ctx.settings.resource_types
        self._ending: dict[str, str] = {}
        """Containers emu asked Hadoop to end, and the container event that ends emu's copy."""
        self._headroom = ZERO
        self._preempt: list[str] = []
        self._max: dict[str, Resource] = {}
        self._labelled = False
        """Whether a node with a label has registered (`partition_usage` asks Hadoop then)."""

    # --- calls into Hadoop --------------------------------------------------------------
    def _call(
        self,
        method: Callable[Concatenate[int, P], Reply | None],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> None:
        """`method` (one of `self.driver`'s) at emu's time, and what Hadoop did
        applied. A bound method rather than a name, so that mypy checks the
        call against the contract."""
        if self.ctx.failure is not None:
            return  # the RM is stopping: Hadoop's scheduler is not asked again
        try:
            reply = method(self.ctx.now_ms(), *args, **kwargs)
        except _java_exception() as e:
            self.ctx.fail(bridge.HadoopSchedulerFailed(bridge.java_message(e), self.ctx.now_ms()))
            return
        if reply is not None:
            self._apply(decode(reply))

    def _extras(self, r: Resource) -> tuple[list[str] | None, list[int] | None]:
        if not self._types:
            return None, None
        extra = dict(r.extra)
        return list(self._types), [extra.get(t, 0) for t in self._types]

    def _apply(self, records: list[Record]) -> None:
        """What Hadoop did, applied to emu's entities in the order Hadoop did it."""
        ctx = self.ctx
        for r in records:
            if isinstance(r, Placed):
                self._placed(r)
            elif isinstance(r, Finished):
                c = ctx.containers.get(r.container_id)
                if c is None:
                    continue
                event = self._ending.pop(c.container_id, ContainerEvent.KILL)
                if r.exit_status == EXIT_PREEMPTED:
                    queue = self._queue_of(c)
                    if queue is not None:
                        self.queue_metrics(queue).preempted_containers += 1
                self.complete_container(c, r.exit_status, r.diagnostics, event, cleanup=False)
            elif isinstance(r, CleanUp):
                if r.node_id in ctx.nodes:
                    ctx.dispatch("node", NodeEvent.CLEANUP_CONTAINER, r.node_id, r.container_id)
            elif isinstance(r, Accepted):
                self._accepted(r.app_id, r.queue)
            elif isinstance(r, Rejected):
                ctx.dispatch("app", AppEvent.APP_REJECTED, r.app_id, r.message)
            elif isinstance(r, Headroom):
                self._headroom = Resource(r.memory, r.vcores)
            elif isinstance(r, Preempt):
                self._preempt.append(r.container_id)

    def _placed(self, p: Placed) -> None:
        attempt_id, node_id = p.attempt_id, p.node_id
        sapp = self.apps.get(attempt_id)
        node = self.nodes.get(node_id)
        if sapp is None or node is None:
            return
        extra = {k: v for k, v in p.extras.items() if v}
        resource = Resource(p.memory, p.vcores, extra)
        priority, locality, is_am = p.priority, p.locality, p.is_am
        self._account_usage()
        c = RMContainer(
            p.container_id,
            attempt_id,
            sapp.app_id,
            node_id,
            resource,
            priority,
            locality,
            is_am,
            self.ctx.now_ms(),
        )
        before = sapp.info.pending
        if priority in sapp.info.requests:
            sapp.info.allocated(locality, node, priority)
        q = self.queue_metrics(sapp.queue)
        q.pending = q.pending - before + sapp.info.pending
        self.container_allocated(c, sapp, node)
        if not is_am:
            sapp.newly_allocated.append(c)
        if not sapp.info.has_pending():
            self.demanding.discard(attempt_id)
        self.ctx.fire("container", c, ContainerEvent.START)
        if self.watcher is not None:
            self.watcher.placed(c)

    def _accepted(self, app_id: str, queue: str) -> None:
        app = self.ctx.apps.get(app_id)
        if app is None:
            return
        if queue:
            app.queue = queue
        self.app_queue[app_id] = app.queue
        q = self.queue_metrics(app.queue)
        q.apps_submitted += 1
        q.apps_pending += 1
        self.ctx.dispatch("app", AppEvent.APP_ACCEPTED, app_id)

    # --- scheduler events ---------------------------------------------------------------
    def on_NODE_ADDED(self, node_id: str, rmnode: RMNode) -> None:
        super().on_NODE_ADDED(node_id, rmnode)
        self._labelled = self._labelled or bool(rmnode.labels)
        names, values = self._extras(rmnode.resource)
        self._call(
            self.driver.addNode,
            node_id,
            rmnode.host,
            0,
            rmnode.rack,
            rmnode.resource.memory,
            rmnode.resource.vcores,
            names,
            values,
            list(rmnode.labels) or None,
        )

    def on_NODE_REMOVED(self, node_id: str, rmnode: RMNode) -> None:
        self._call(self.driver.removeNode, node_id)
        super().on_NODE_REMOVED(node_id, rmnode)

    def on_NODE_RESOURCE_UPDATE(self, node_id: str, rmnode: RMNode) -> None:
        super().on_NODE_RESOURCE_UPDATE(node_id, rmnode)
        names, values = self._extras(rmnode.resource)
        self._call(
            self.driver.updateNodeResource,
            node_id,
            rmnode.resource.memory,
            rmnode.resource.vcores,
            names,
            values,
        )

    def on_NODE_UPDATE(self, node_id: str, data: tuple[list[str], list[dict[str, Any]]]) -> None:
        launched, completed = data
        containers = self.ctx.containers
        known_launched: list[str] | None = None
        done_ids: list[str] | None = None
        exits: list[int] = []
        diags: list[str] = []
        for cid in launched:
            c = containers.get(cid)
            if c is not None:
                self.ctx.fire("container", c, ContainerEvent.LAUNCHED)
                if known_launched is None:
                    known_launched = []
                known_launched.append(cid)
            else:
                self.unknown_reports["running"] += 1
                self.ctx.dispatch("node", NodeEvent.CLEANUP_CONTAINER, node_id, cid)
        for st in completed:
            cid = st["container_id"]
            c = containers.get(cid)
            if c is not None and c.node_id == node_id:
                self._ending[cid] = ContainerEvent.FINISHED
            else:
                self.unknown_reports["completed"] += 1
            # Every completion goes to Hadoop, as YARN's RMNode passes them: a
            # container its scheduler already ended (killed, released,
            # preempted) keeps its node's capacity there until its NM says so.
            if done_ids is None:
                done_ids = []
            done_ids.append(cid)
            exits.append(int(st["exit_status"]))
            diags.append(st.get("diagnostics") or "")
        if node_id in self.nodes and self.watcher is not None:
            self.watcher.scheduling_pass(node_id)
        if done_ids is None:
            self._call(self.driver.nodeUpdate, node_id, known_launched, None, None, None)
        else:
            self._call(self.driver.nodeUpdate, node_id, known_launched, done_ids, exits, diags)

    def on_APP_ADDED(self, app_id: str, app: RMApp) -> None:
        names, values = self._extras(app.am_resource)
        self._call(
            self.driver.addApp,
            app_id,
            app.queue,
            app.user,
            app.priority,
            app.am_resource.memory,
            app.am_resource.vcores,
            names,
            values,
            _label_expression(app),
            app.unmanaged,
        )

    def on_APP_ATTEMPT_ADDED(self, attempt_id: str, attempt: RMAppAttempt) -> None:
        self._call(self.driver.addAttempt, attempt_id)
        super().on_APP_ATTEMPT_ADDED(attempt_id, attempt)
        sapp = self.apps[attempt_id]
        try:
            largest = decode_capability(self.driver.maximumAllocation(sapp.queue))
        except _java_exception():
            return
        self._max[attempt_id] = Resource(largest.memory, largest.vcores, dict(largest.extras))

    def on_APP_ATTEMPT_REMOVED(self, attempt_id: str, attempt: RMAppAttempt) -> None:
        state = attempt.state if attempt.state in ("FINISHED", "FAILED", "KILLED") else "FAILED"
        if attempt_id in self.apps:
            self._call(self.driver.removeAttempt, attempt_id, state)
        self._max.pop(attempt_id, None)
        self.demanding.discard(attempt_id)
        super().on_APP_ATTEMPT_REMOVED(attempt_id, attempt)

    def on_APP_REMOVED(self, app_id: str, final: str) -> None:
        state = final if final in ("FINISHED", "FAILED", "KILLED") else "FAILED"
        self._call(self.driver.removeApp, app_id, state)
        super().on_APP_REMOVED(app_id, final)

    def on_CONTAINER_EXPIRED(self, container_id: str, data: Any) -> None:
        if container_id in self.ctx.containers:
            self._ending[container_id] = ContainerEvent.EXPIRE
            self._call(self.driver.expireContainer, container_id)

    def schedule(self, node: SchedulerNode) -> None:
        """Never called: node updates go to Hadoop's scheduler whole."""

    def async_pass(self, tick_ms: int) -> None:
        """One tick of Hadoop's asynchronous scheduling, driven from here
        (its threads never run), from the start nodes emu draws."""
        passes = self.async_scheduling
        if passes is None or not self.nodes:
            return
        bound = int(self.driver.asyncBound())  # nodes, or partitions with multi-node placement
        if bound:
            self._call(self.driver.asyncPass, passes.starts(tick_ms, bound))
        # Hadoop's reservations are not mirrored: ask how many nodes hold one
        # after each pass, the only place one is made (`async_wanted`).
        self.reserved_nodes = int(self.driver.reservedNodes())

    def sort_nodes(self) -> None:
        """The multi-node sorters due now re-sort Hadoop's nodes (their
        threads never run)."""
        self._call(self.driver.sortNodes)

    def demand_changed(self, sapp: Any) -> None:
        if sapp.info.has_pending():
            self.demanding.add(sapp.attempt_id)
        else:
            self.demanding.discard(sapp.attempt_id)

    def update(self) -> None:
        now = self.ctx.now_ms()
        if self._update_ms and now >= self._next_update:
            self._next_update = now + self._update_ms
            self._call(self.driver.update)
        if self._preempt_ms and now >= self._next_preempt:
            self._next_preempt = now + self._preempt_ms
            self._call(self.driver.editSchedule)
        # AutoCreatedQueueDeletionPolicy on the tick nearest its interval,
        # as emu's CapacityScheduler runs it.
        if self._delete_ms and now + (self.update_interval_ms or 0) // 2 >= self._next_delete:
            self._next_delete = now + self._delete_ms
            self._call(self.driver.deleteExpiredQueues)

    # --- the AM's side ------------------------------------------------------------------
    def refresh(self, properties: Mapping[str, object]) -> str | None:
        """An admin's queue refresh, applied by Hadoop's scheduler itself: the
        CapacityScheduler's reinitialize over the running configuration, the
        FairScheduler's reload of its allocation file."""
        return self._refresh(properties, "")

    def refresh_from(self, path: Path) -> str | None:
        """The FairScheduler's queues from the allocation file at `path`."""
        return self._refresh({}, str(path.resolve()))

    def _refresh(self, properties: Mapping[str, object], allocation_file: str) -> str | None:
        keys = sorted(properties)
        values = [
            str(v).lower() if isinstance(v, bool) else str(v) for v in (properties[k] for k in keys)
        ]
        try:
            records = decode(
                self.driver.refreshQueues(self.ctx.now_ms(), keys, values, allocation_file)
            )
        except _java_exception() as e:
            return bridge.java_message(e)
        if records and isinstance(records[0], Refused):
            return records[0].message
        self._apply(records)
        return None

    def node_labels_admin(self, op: str, args: dict[str, Any]) -> str | None:
        """The label change applied by Hadoop's own RMNodeLabelsManager,
        whose NodeLabelsUpdateSchedulerEvent reaches Hadoop's scheduler;
        Hadoop's refusal text if it refuses. Hadoop's nodes are emu's hosts
        with port 0, so an NM named with its port is its host there."""
        names: list[str] = []
        exclusive: list[bool] = []
        ports: list[int] = []
        values: list[str] = []
        if op == "add":
            for name, excl in args["labels"]:
                names.append(str(name))
                exclusive.append(bool(excl))
        elif op == "remove":
            names = [str(n) for n in args["names"]]
        else:
            for node, label in args["mapping"]:
                rmnode = self.ctx.nodes.get(node) or self.ctx.inactive_nodes.get(node)
                host, port = (rmnode.host, 0) if rmnode is not None else split_node(node)
                names.append(host)
                ports.append(port)
                values.append(str(label))
        try:
            records = decode(
                self.driver.nodeLabels(self.ctx.now_ms(), op, names, exclusive, ports, values)
            )
        except _java_exception() as e:
            return bridge.java_message(e)
        if records and isinstance(records[0], Refused):
            return records[0].message
        self._labelled = self._labelled or op != "remove"
        self._apply(records)
        return None

    def request_am_container(self, attempt_id: str, am_resource: Resource) -> None:
        super().request_am_container(attempt_id, am_resource)
        self._call(self.driver.requestAm, attempt_id)

    def max_allocation(self, sapp: Any) -> tuple[Resource, str]:
        found = self._max.get(sapp.attempt_id)
        if found is not None:
            return found, f" of queue {sapp.queue}"
        return self.maximum, ""

    def allocate_nothing(self, attempt_id: str) -> bool:
        """Never: every allocate crosses into Hadoop's scheduler, which
        decides what it changes."""
        return False

    def _allocate(
        self,
        attempt_id: str,
        asks: list[dict[str, Any]],
        releases: list[str],
        blacklist_add: list[str],
        blacklist_remove: list[str],
    ) -> Allocation:
        sapp = self.apps.get(attempt_id)
        if sapp is None:
            return Allocation([], ZERO)
        priorities: list[int] | None = None
        names: list[str] = []
        memory: list[int] = []
        vcores: list[int] = []
        extras: list[list[int]] | None = [] if self._types else None
        counts: list[int] = []
        relax: list[bool] = []
        labels: list[str | None] = []
        any_label = False
        if asks:
            priorities = []
            maximum = self.max_allocation(sapp)[0]
            parsed = []
            for a in asks:
                cap = Resource.from_wire(a["capability"])
                parsed.append(
                    Ask(
                        a["priority"],
                        a["resource_name"],
                        self._checked(cap, maximum),
                        a["num_containers"],
                        a["relax_locality"],
                    )
                )
                priorities.append(int(a["priority"]))
                names.append(a["resource_name"])
                memory.append(cap.memory)
                vcores.append(cap.vcores)
                if extras is not None:
                    extras.append(self._extras(cap)[1] or [])
                counts.append(int(a["num_containers"]))
                relax.append(bool(a["relax_locality"]))
                label = a.get("label_expression") or None
                any_label = any_label or label is not None
                labels.append(label)
            self._update_asks(sapp, parsed)
        for cid in releases:
            if cid in sapp.live:
                self._ending[cid] = ContainerEvent.RELEASED
        self._preempt = []
        self._call(
            self.driver.allocate,
            attempt_id,
            priorities,
            names if priorities else None,
            memory if priorities else None,
            vcores if priorities else None,
            list(self._types) if extras else None,
            extras or None,
            counts if priorities else None,
            relax if priorities else None,
            labels if any_label else None,
            list(releases) or None,
            list(blacklist_add) or None,
            list(blacklist_remove) or None,
        )
        if blacklist_add:
            sapp.blacklist.update(blacklist_add)
        if blacklist_remove:
            sapp.blacklist.difference_update(blacklist_remove)
        containers = self.acquire(attempt_id)
        preempt = sorted(cid for cid in self._preempt if cid in sapp.live)
        self._preempt = []
        return Allocation(containers, self._headroom, preempt)

    def partition_usage(self) -> list[PartitionUsage]:
        """The CapacityScheduler's own figures: the label manager's resource
        of each partition and its queues' ResourceUsage there (the root's
        used is the partition's allocated; the leaves' used and pending)."""
        if not self._labelled or self.ctx.failure is not None:
            return []
        out: list[PartitionUsage] = []
        for p in decode_partitions(self.driver.partitionUsage()):
            usage = PartitionUsage(p.name, Resource(p.memory, p.vcores), ZERO, {})
            for q in p.queues:
                used = Resource(q.used_memory, q.used_vcores)
                if q.queue == "root":
                    usage.used = used
                else:
                    usage.queues[q.queue] = used
                    usage.pending[q.queue] = Resource(q.pending_memory, q.pending_vcores)
            out.append(usage)
        return out

    def close(self) -> None:
        """Stop Hadoop's scheduler and its timers (the RM's end)."""
        try:
            self.driver.close()
        except _java_exception():
            pass


def _java_exception() -> type[BaseException]:
    """JPype's base of Java exceptions (JPype is imported only once the backend runs)."""
    import jpype

    exc: type[BaseException] = jpype.JException
    return exc


def _label_expression(app: RMApp) -> str | None:
    """The app's node label expression (an SLS job's `job.label.expression`,
    carried in its submission context), as ApplicationSubmissionContext's."""
    job = app.context.get("job") if isinstance(app.context, dict) else None
    params = job.get("params") if isinstance(job, dict) else None
    label = params.get("label_expression") if isinstance(params, dict) else None
    return str(label) if label else None
