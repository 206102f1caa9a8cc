"""The read-only cluster view: the RM's state in the YARN REST API's shapes.

`snapshot(rm)` is the only place the web layer looks inside the RM. It reads
the RM context and the scheduler's own reports (`metrics`, `list_nodes`,
`queue_info`); beyond those, only each scheduler app's outstanding asks
(YARN's pending containers and resources, read as emu's SLS metrics read
them) and the CapacityScheduler's parsed configuration (queue ACLs, limits,
ordering policy), never its decisions in progress. It returns plain JSON-ready data
named as Hadoop's web service DAOs name it (`ClusterInfo`,
`ClusterMetricsInfo`, `{Fifo,Capacity,Fair}SchedulerInfo`, `NodeInfo`,
`AppInfo`, `AppAttemptInfo`, `ContainerInfo`). Building it changes nothing,
so a snapshot taken every wall second during a replay on the virtual clock
leaves the run's outputs byte-identical.

Times are YARN's epoch milliseconds: the run's epoch plus simulated time,
which is plain simulated milliseconds on the virtual clock (as in
`jobruntime.csv`). Every field a Hadoop 3.4.2 RM returns is present with
its JSON type (`emu.fidelity.rest_schema` checks this against a real RM),
so clients that read fields by name work. Where emu does not model what a
value measures (opportunistic containers, node attributes, NM-reported
physical utilization, log aggregation, build dates), the field carries what
YARN itself reports in that situation: its DAO default, 0, "" or "Unknown".
Resource-seconds (memorySeconds, vcoreSeconds) are YARN's: those of the
app's ended containers (kept on the RMApp as RMAppMetrics keeps them) plus
its running containers' so far; the preempted ones count what preemption
ended.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from emu import __version__
from emu.rm import app as app_sm
from emu.rm.scheduler import activities as act

if TYPE_CHECKING:
    from emu.rm.actor import ResourceManager

SCHEDULER_TYPES = {
    "fifo": "fifoScheduler",
    "capacity": "capacityScheduler",
    "fair": "fairScheduler",
    "hadoop": "schedulerInfo",
}


def scheduler_kind(rm: ResourceManager) -> str:
    """fifo, capacity or fair for emu's own schedulers; hadoop when Hadoop's
    scheduler class decides (its queue tree is Hadoop's, not mirrored here)."""
    s = rm.ctx.settings
    return "hadoop" if s.impl == "hadoop" else s.scheduler


@dataclass
class Snapshot:
    """Everything the REST API serves, as of one moment of the run."""

    sim_ms: int
    scheduler_kind: str
    """fifo, capacity or fair."""
    cluster_info: dict[str, Any]
    metrics: dict[str, Any]
    scheduler: dict[str, Any]
    nodes: list[dict[str, Any]]
    apps: list[dict[str, Any]]
    attempts: dict[str, list[dict[str, Any]]]
    containers: dict[str, list[dict[str, Any]]]
    queues: list[dict[str, Any]] = field(default_factory=list)
    """The scheduler's flat queue reports (for the live pages)."""
    activities: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per app, YARN's AppActivitiesInfo (`/scheduler/app-activities/{id}`)."""

    def app(self, app_id: str) -> dict[str, Any] | None:
        for a in self.apps:
            if a["id"] == app_id:
                return a
        return None

    def node(self, node_id: str) -> dict[str, Any] | None:
        for n in self.nodes:
            if n["id"] == node_id:
                return n
        return None


LONG_MAX = 9223372036854775807
UNKNOWN = "Unknown"
"""What Hadoop's VersionInfo reports for a build fact it was not given."""
NO_HA = "Could not find leader elector. Verify both HA and automatic failover are enabled."
"""YARN's haZooKeeperConnectionState without ZooKeeper-based failover, as in emu."""


def _resource_information(name: str, value: int) -> dict[str, Any]:
    """One ResourceInformation as YARN serializes it: the resource type's
    definition (units, range) and the amount."""
    return {
        "attributes": {},
        "maximumAllocation": LONG_MAX,
        "minimumAllocation": 0,
        "name": name,
        "resourceType": "COUNTABLE",
        "units": "Mi" if name == "memory-mb" else "",
        "value": value,
    }


def resource_info(wire: dict[str, int]) -> dict[str, Any]:
    """YARN's ResourceInfo JSON: memory (MB), vCores, and every resource type
    in resourceInformations (memory-mb and vcores first, as YARN lists them)."""
    names = ["memory-mb", "vcores", *sorted(k for k in wire if k not in ("memory-mb", "vcores"))]
    return {
        "memory": wire.get("memory-mb", 0),
        "vCores": wire.get("vcores", 0),
        "resourceInformations": {
            "resourceInformation": [_resource_information(n, wire.get(n, 0)) for n in names]
        },
    }


ZERO_RESOURCE: dict[str, int] = {"memory-mb": 0, "vcores": 0}


def snapshot(rm: ResourceManager, epoch_ms: int = 0) -> Snapshot:
    """The whole cluster view, now. Reads only; see the module docstring."""
    ctx = rm.ctx
    now = ctx.now_ms()
    metrics = rm.services.client.metrics()
    node_reports = rm.services.client.list_nodes({"type": "list_nodes", "id": 0})["nodes"]
    queues = ctx.scheduler.queue_info("")
    app_usage = _app_usage(rm)
    asks = _pending_asks(rm)
    queue_by_name = {q["name"]: q for q in queues}
    apps = [
        _app_info(
            rm,
            app,
            app_usage.get(app.app_id),
            asks.get(app.app_id, []),
            queue_by_name,
            now,
            epoch_ms,
        )
        for _, app in sorted(ctx.apps.items())
    ]
    attempts = {
        app_id: [_attempt_info(rm, aid, epoch_ms) for aid in app.attempts]
        for app_id, app in sorted(ctx.apps.items())
    }
    containers: dict[str, list[dict[str, Any]]] = {}
    for cid, c in sorted(ctx.containers.items()):
        containers.setdefault(c.attempt_id, []).append(_container_info(rm, cid, now, epoch_ms))
    return Snapshot(
        sim_ms=now,
        scheduler_kind=scheduler_kind(rm),
        cluster_info=_cluster_info(rm, epoch_ms),
        metrics=_metrics_info(rm, metrics, node_reports, asks),
        scheduler=_scheduler_info(rm, queues, metrics, asks, app_usage),
        nodes=[_node_info(n, epoch_ms) for n in node_reports],
        apps=apps,
        attempts=attempts,
        containers=containers,
        queues=queues,
        activities={a["id"]: _app_activities(rm, a, epoch_ms) for a in apps},
    )


def _cluster_info(rm: ResourceManager, epoch_ms: int) -> dict[str, Any]:
    version = f"emu {__version__}"
    return {
        "id": rm.ctx.cluster_timestamp,
        "startedOn": epoch_ms,
        "state": "STARTED",
        "haState": "ACTIVE",
        "rmStateStoreName": (
            "emu.rm.recovery" if rm.ctx.recovery is not None else "NullRMStateStore"
        ),
        "resourceManagerVersion": version,
        "resourceManagerBuildVersion": version,
        "resourceManagerVersionBuiltOn": UNKNOWN,
        "hadoopVersion": version,
        "hadoopBuildVersion": version,
        "hadoopVersionBuiltOn": UNKNOWN,
        "haZooKeeperConnectionState": NO_HA,
        "schedulerType": SCHEDULER_TYPES[scheduler_kind(rm)],
    }


def _pending_asks(rm: ResourceManager) -> dict[str, list[Any]]:
    """Per app, its outstanding off-switch (ANY) asks with containers still
    wanted: what YARN counts as pending containers and resources."""
    out: dict[str, list[Any]] = {}
    for sapp in getattr(rm.ctx.scheduler, "apps", {}).values():
        info = getattr(sapp, "info", None)
        if info is None or not info.has_pending():
            continue
        for by_name in info.requests.values():
            ask = by_name.get("*")
            if ask is not None and ask.num > 0:
                out.setdefault(sapp.app_id, []).append(ask)
    return out


def _pending_totals(asks: list[Any]) -> tuple[int, int, int]:
    """(containers, MB, vcores) wanted by `asks`."""
    n = mb = vc = 0
    for a in asks:
        n += a.num
        mb += a.capability.memory * a.num
        vc += a.capability.vcores * a.num
    return n, mb, vc


def _metrics_info(
    rm: ResourceManager,
    m: dict[str, Any],
    nodes: list[dict[str, Any]],
    asks: dict[str, list[Any]],
) -> dict[str, Any]:
    containers = rm.ctx.containers
    now = rm.ctx.now_ms()
    total, used, avail = m["total"], m["allocated"], m["available"]
    states: dict[str, int] = {}
    for n in nodes:
        states[n["state"]] = states.get(n["state"], 0) + 1
    reserved_mb = reserved_vc = 0
    for c in containers.values():
        if c.state == "RESERVED":
            reserved_mb += c.resource.memory
            reserved_vc += c.resource.vcores
    pending_n, pending_mb, pending_vc = _pending_totals([a for v in asks.values() for a in v])
    total_mb, total_vc = total.get("memory-mb", 0), total.get("vcores", 0)
    capacity = scheduler_kind(rm) == "capacity"
    out: dict[str, Any] = {
        "appsSubmitted": m["apps_submitted"],
        "appsCompleted": m["apps_completed"],
        "appsPending": m["apps_pending"],
        "appsRunning": m["apps_running"],
        "appsFailed": m["apps_failed"],
        "appsKilled": m["apps_killed"],
        "reservedMB": reserved_mb,
        "availableMB": avail.get("memory-mb", 0),
        "allocatedMB": used.get("memory-mb", 0),
        "pendingMB": pending_mb,
        "reservedVirtualCores": reserved_vc,
        "availableVirtualCores": avail.get("vcores", 0),
        "allocatedVirtualCores": used.get("vcores", 0),
        "pendingVirtualCores": pending_vc,
        "containersAllocated": m["containers_allocated"],
        "containersReserved": sum(1 for c in containers.values() if c.state == "RESERVED"),
        "containersPending": pending_n,
        "totalMB": total_mb,
        # Physical use as NMs report it: emu's NMs report none, as a real
        # NM with resource monitoring off does, so YARN's 0.
        "utilizedMB": 0,
        "totalVirtualCores": total_vc,
        "utilizedVirtualCores": 0,
        # YARN's percentages of the physical use above, not of allocation.
        "utilizedMBPercent": 0,
        "utilizedVirtualCoresPercent": 0,
        # The busy share of YARN's event-processing thread: -1, YARN's value
        # with that monitor off, since emu has no such thread to measure.
        "rmSchedulerBusyPercent": -1,
        "totalNodes": len(nodes),
        "activeNodes": m["active_nodes"],
        "lostNodes": states.get("LOST", 0),
        "unhealthyNodes": states.get("UNHEALTHY", 0),
        "decommissioningNodes": states.get("DECOMMISSIONING", 0),
        "decommissionedNodes": states.get("DECOMMISSIONED", 0),
        "rebootedNodes": states.get("REBOOTED", 0),
        "shutdownNodes": states.get("SHUTDOWN", 0),
        # Containers handed out in the last (simulated) second and still held.
        "containerAssignedPerSecond": sum(
            1 for c in containers.values() if c.allocated_ms > now - 1000 and c.state != "RESERVED"
        ),
        # Only the CapacityScheduler reports cross-partition totals in YARN.
        "totalAllocatedContainersAcrossPartition": m["containers_allocated"] if capacity else 0,
        "crossPartitionMetricsAvailable": capacity,
        # emu's RM has one event queue, scheduler events included; YARN's
        # scheduler has a second one, which emu does not have.
        "rmEventQueueSize": rm.ctx.dispatcher.depth,
        "schedulerEventQueueSize": 0,
    }
    if capacity:
        out["totalUsedResourcesAcrossPartition"] = resource_info(used)
        out["totalClusterResourcesAcrossPartition"] = resource_info(total)
        out["totalReservedResourcesAcrossPartition"] = resource_info(
            {"memory-mb": reserved_mb, "vcores": reserved_vc}
        )
    return out


def _node_info(n: dict[str, Any], epoch_ms: int) -> dict[str, Any]:
    total, used = n["total"], n["used"]
    avail = {k: total.get(k, 0) - used.get(k, 0) for k in total}
    return {
        "rack": n["rack"],
        "state": n["state"],
        "id": n["node_id"],
        "nodeHostName": n["host"],
        "nodeHTTPAddress": "",
        "lastHealthUpdate": epoch_ms + n["last_heartbeat_ms"],
        "version": f"emu {__version__}",
        "healthReport": n["health_report"],
        # Hadoop 2's field, still read by older clients.
        "healthStatus": "Unhealthy" if n["state"] == "UNHEALTHY" else "Healthy",
        "numContainers": n["num_containers"],
        "usedMemoryMB": used.get("memory-mb", 0),
        "availMemoryMB": avail.get("memory-mb", 0),
        "usedVirtualCores": used.get("vcores", 0),
        "availableVirtualCores": avail.get("vcores", 0),
        # emu's NMs report no physical utilization and run no opportunistic
        # or queued containers: YARN's values for such a node.
        "memUtilization": 0.0,
        "cpuUtilization": 0.0,
        "numRunningOpportContainers": 0,
        "usedMemoryOpportGB": 0,
        "usedVirtualCoresOpport": 0,
        "numQueuedContainers": 0,
        "nodeLabels": [label.split("(", 1)[0] for label in n["labels"]],
        "allocationTags": {},
        "resourceUtilization": {
            "nodePhysicalMemoryMB": 0,
            "nodeVirtualMemoryMB": 0,
            "nodeCPUUsage": 0.0,
            "aggregatedContainersPhysicalMemoryMB": 0,
            "aggregatedContainersVirtualMemoryMB": 0,
            "containersCPUUsage": 0.0,
        },
        "used": resource_info(used),
        "avail": resource_info(avail),
        "usedResource": resource_info(used),
        "availableResource": resource_info(avail),
        "totalResource": resource_info(total),
        "nodeAttributesInfo": {},
    }


def _app_usage(rm: ResourceManager) -> dict[str, tuple[int, int, int, int, int]]:
    """(allocated MB, allocated vcores, running containers, reserved MB,
    reserved vcores) per app."""
    usage: dict[str, list[int]] = {}
    for c in rm.ctx.containers.values():
        u = usage.setdefault(c.app_id, [0, 0, 0, 0, 0])
        if c.state in ("ALLOCATED", "ACQUIRED", "RUNNING"):
            u[0] += c.resource.memory
            u[1] += c.resource.vcores
            u[2] += 1
        elif c.state == "RESERVED":
            u[3] += c.resource.memory
            u[4] += c.resource.vcores
    return {k: (v[0], v[1], v[2], v[3], v[4]) for k, v in usage.items()}


def _logs_link(node_http: str, container_id: str, user: str) -> str:
    """YARN's link to a running container's logs on its NM (WebAppUtils.getRunningLogURL)."""
    return f"http://{node_http}/node/containerlogs/{container_id}/{user}"


def _resource_seconds_map(vcore_seconds: int) -> dict[str, Any]:
    """A Map<String, Long> of resource-seconds as YARN's JSON writes it: one
    "entry" key per resource, memory-mb then vcores, of which a JSON reader
    keeps the last; so the vcores entry, as clients of YARN see it."""
    return {"entry": {"key": "vcores", "value": str(vcore_seconds)}}


def _queue_share(queue: dict[str, Any] | None, cluster_mb: int, mb: int) -> float:
    """The app's allocated memory as a percentage of its queue's guaranteed
    share (YARN's queueUsagePercentage): the Capacity queue's absolute
    capacity, the Fair queue's fair share, the whole cluster for FIFO."""
    guaranteed: float = cluster_mb
    if queue is not None and "absolute_capacity" in queue:
        guaranteed = cluster_mb * queue["absolute_capacity"] / 100
    elif queue is not None and "fair_share" in queue:
        guaranteed = queue["fair_share"].get("memory-mb", 0)
    return 100.0 * mb / guaranteed if guaranteed else 0.0


def _request_info(ask: Any) -> dict[str, Any]:
    """One pending ANY ask as YARN's ResourceRequestInfo."""
    return {
        "priority": ask.priority,
        "allocationRequestId": -1,
        "resourceName": ask.name,
        "capability": resource_info(ask.capability.to_wire()),
        "numContainers": ask.num,
        "relaxLocality": ask.relax,
        "nodeLabelExpression": "",
        "executionTypeRequest": {"executionType": "GUARANTEED", "enforceExecutionType": False},
        "enforceExecutionType": False,
    }


def _app_info(
    rm: ResourceManager,
    app: Any,
    usage: tuple[int, int, int, int, int] | None,
    asks: list[Any],
    queues: dict[str, dict[str, Any]],
    now: int,
    epoch_ms: int,
) -> dict[str, Any]:
    mb, vc, running, reserved_mb, reserved_vc = usage or (0, 0, 0, 0, 0)
    cluster = rm.ctx.scheduler.cluster
    started = app.submit_ms
    finished = app.finished_ms if app.state in app_sm.FINAL else -1
    am = _am_container(rm, app)
    attempt = rm.ctx.attempts.get(app.current_attempt) if app.current_attempt else None
    mem_s, vc_s = app.memory_seconds, app.vcore_seconds
    sapp = rm.ctx.scheduler.apps.get(app.current_attempt) if app.current_attempt else None
    if sapp is not None:  # running containers count so far, as YARN adds them
        for c in sapp.live.values():
            mem_s += c.resource.memory * (now - c.allocated_ms) // 1000
            vc_s += c.resource.vcores * (now - c.allocated_ms) // 1000
    info: dict[str, Any] = {
        "id": app.app_id,
        "user": app.user,
        "name": app.name,
        "queue": app.queue,
        "state": app.state,
        "finalStatus": app.final_status,
        "progress": 100.0 if app.state in app_sm.FINAL else 0.0,
        "trackingUI": "History" if app.state in app_sm.FINAL else "UNASSIGNED",
        "diagnostics": app.diagnostics,
        "clusterId": rm.ctx.cluster_timestamp,
        "applicationType": app.am_type.upper(),
        "applicationTags": "",
        "priority": app.priority,
        # Hadoop 2.8-3.0's name for the same value, still read by older clients.
        "applicationPriority": app.priority,
        "startedTime": epoch_ms + started,
        "launchTime": epoch_ms + app.started_ms if app.started_ms >= 0 else 0,
        "finishedTime": epoch_ms + finished if finished >= 0 else 0,
        "elapsedTime": (finished if finished >= 0 else now) - started,
        "amHostHttpAddress": am[1] if am else "",
        "masterNodeId": am[1] if am else "",
        "allocatedMB": mb,
        "allocatedVCores": vc,
        "reservedMB": reserved_mb,
        "reservedVCores": reserved_vc,
        "runningContainers": running,
        "memorySeconds": mem_s,
        "vcoreSeconds": vc_s,
        "queueUsagePercentage": _queue_share(queues.get(app.queue), cluster.memory, mb),
        "clusterUsagePercentage": 100.0 * mb / cluster.memory if cluster.memory else 0.0,
        "resourceSecondsMap": _resource_seconds_map(vc_s),
        "preemptedResourceMB": app.preempted_mb,
        "preemptedResourceVCores": app.preempted_vcores,
        "numNonAMContainerPreempted": app.preempted_non_am,
        "numAMContainerPreempted": app.preempted_am,
        "preemptedMemorySeconds": app.preempted_memory_seconds,
        "preemptedVcoreSeconds": app.preempted_vcore_seconds,
        "preemptedResourceSecondsMap": {},
        "resourceRequests": [_request_info(a) for a in asks],
        # emu aggregates no logs: what YARN reports with log aggregation off.
        "logAggregationStatus": "DISABLED",
        "unmanagedApplication": False,
        # The partition the app's asks name (its label expression, else its
        # queue's default; "" the default partition), for its AM as well.
        "appNodeLabelExpression": _app_label(rm, app.app_id),
        "amNodeLabelExpression": _app_label(rm, app.app_id),
        "timeouts": {
            "timeout": [
                {"type": "LIFETIME", "expiryTime": "UNLIMITED", "remainingTimeInSeconds": -1}
            ]
        },
    }
    if am:
        info["amContainerLogs"] = _logs_link(am[1], am[0], app.user)
    if attempt is not None and attempt.registered_ms >= 0:
        # A registered AM's host (its AM container's node unless it named
        # one); emu's AMs serve no RPC, as an AM registering port 0.
        host = attempt.am_host or _node_host(rm, am[1] if am else "")
        info["amRPCAddress"] = f"{host}:0"
    if app.state == app_sm.RUNNING:
        info["trackingUI"] = "ApplicationMaster"
    if info["trackingUI"] != "UNASSIGNED":
        # YARN's URL for an AM that registered no tracking URL, with no web
        # proxy in front (emu runs none).
        info["trackingUrl"] = "http://N/A"
    if scheduler_kind(rm) == "capacity":
        am_used = rm.ctx.containers.get(am[0]) if am else None
        info["resourceInfo"] = {
            "resourceUsagesByPartition": [
                _partition_usage(
                    used={"memory-mb": mb, "vcores": vc},
                    reserved={"memory-mb": reserved_mb, "vcores": reserved_vc},
                    pending=_pending_wire(asks),
                    am_used=am_used.resource.to_wire() if am_used is not None else ZERO_RESOURCE,
                    am_limit=ZERO_RESOURCE,
                    user_am_limit=ZERO_RESOURCE,
                )
            ]
        }
    return info


def _app_label(rm: ResourceManager, app_id: str) -> str:
    labels = getattr(rm.ctx.scheduler, "app_label", None)
    return str(labels.get(app_id, "")) if isinstance(labels, dict) else ""


def _node_host(rm: ResourceManager, node_id: str) -> str:
    node = rm.ctx.nodes.get(node_id) or rm.ctx.inactive_nodes.get(node_id)
    return node.host if node is not None else node_id.split(":", 1)[0]


def _pending_wire(asks: list[Any]) -> dict[str, int]:
    _, mb, vc = _pending_totals(asks)
    return {"memory-mb": mb, "vcores": vc}


def _partition_usage(
    used: dict[str, int],
    reserved: dict[str, int],
    pending: dict[str, int],
    am_used: dict[str, int],
    am_limit: dict[str, int],
    user_am_limit: dict[str, int],
    partition: str = "",
) -> dict[str, Any]:
    """One PartitionResourcesInfo ("": the default partition)."""
    return {
        "partitionName": partition,
        "used": resource_info(used),
        "reserved": resource_info(reserved),
        "pending": resource_info(pending),
        "amUsed": resource_info(am_used),
        "amLimit": resource_info(am_limit),
        "userAmLimit": resource_info(user_am_limit),
    }


def _am_container(rm: ResourceManager, app: Any) -> tuple[str, str] | None:
    aid = app.current_attempt
    if aid is None:
        return None
    attempt = rm.ctx.attempts.get(aid)
    if attempt is None or not attempt.am_container_id:
        return None
    c = rm.ctx.containers.get(attempt.am_container_id)
    return (attempt.am_container_id, c.node_id if c is not None else attempt.am_host)


def _attempt_info(rm: ResourceManager, attempt_id: str, epoch_ms: int) -> dict[str, Any]:
    a = rm.ctx.attempts[attempt_id]
    c = rm.ctx.containers.get(a.am_container_id) if a.am_container_id else None
    node = c.node_id if c is not None else a.am_host
    app = rm.ctx.apps.get(a.app_id)
    user = app.user if app is not None else ""
    return {
        "id": a.number,
        "appAttemptId": a.attempt_id,
        "appAttemptState": a.state,
        "startTime": epoch_ms + a.started_ms,
        "finishedTime": epoch_ms + a.finished_ms if a.finished_ms >= 0 else 0,
        "containerId": a.am_container_id,
        "nodeId": node,
        "nodeHttpAddress": node,
        "logsLink": _logs_link(node, a.am_container_id, user) if a.am_container_id else "",
        "diagnosticsInfo": a.diagnostics,
        "blacklistedNodes": "",
        "nodesBlacklistedBySystem": "",
        "exportPorts": "",
    }


def _container_info(rm: ResourceManager, cid: str, now: int, epoch_ms: int) -> dict[str, Any]:
    c = rm.ctx.containers[cid]
    finished = c.finished_ms
    return {
        "containerId": cid,
        "allocatedMB": c.resource.memory,
        "allocatedVCores": c.resource.vcores,
        "assignedNodeId": c.node_id,
        "priority": c.priority,
        "startedTime": epoch_ms + c.allocated_ms,
        "finishedTime": epoch_ms + finished if finished >= 0 else 0,
        "elapsedTime": (finished if finished >= 0 else now) - c.allocated_ms,
        "containerExitStatus": c.exit_status,
        "containerState": c.state,
        "diagnosticsInfo": c.diagnostics,
        "nodeId": c.node_id,
        "nodeHttpAddress": c.node_id,
        "executionType": "GUARANTEED",
    }


def _app_activities(rm: ResourceManager, app: dict[str, Any], epoch_ms: int) -> dict[str, Any]:
    """AppActivitiesInfo: the app's recent scheduling decisions, newest first,
    as YARN lists them (allocationState ALLOCATED, RESERVED or SKIPPED, and the
    reason as the diagnostic)."""
    decisions = rm.ctx.scheduler.activities.of(app["id"])
    if not decisions and app["state"] in ("SUBMITTED", "ACCEPTED"):
        waited = rm.ctx.now_ms() - (app["startedTime"] - epoch_ms)
        if waited > act.INFER_AFTER_MS:
            decisions = [(app["startedTime"] - epoch_ms, act.ORDER, "")]
    return {
        "applicationId": app["id"],
        "allocations": [
            {
                "nodeId": node,
                "timestamp": epoch_ms + t,
                "queueName": app["queue"],
                "appPriority": app["priority"],
                "allocationState": act.STATES.get(reason, "SKIPPED"),
                "diagnostic": reason,
            }
            for t, reason, node in reversed(decisions)
        ],
    }


# --- /scheduler ----------------------------------------------------------------------------------
def _scheduler_info(
    rm: ResourceManager,
    queues: list[dict[str, Any]],
    m: dict[str, Any],
    asks: dict[str, list[Any]],
    usage: dict[str, tuple[int, int, int, int, int]],
) -> dict[str, Any]:
    kind = scheduler_kind(rm)
    if kind == "capacity":
        return _capacity_info(rm, queues, m, asks, usage)
    if kind == "fair":
        return _fair_info(rm, queues, m, asks)
    if kind == "hadoop":
        return _hadoop_info(rm, queues, m)
    return _fifo_info(rm, queues, m)


def _hadoop_info(
    rm: ResourceManager, queues: list[dict[str, Any]], m: dict[str, Any]
) -> dict[str, Any]:
    """Hadoop's scheduler class decides: YARN's generic SchedulerInfo (what
    its RMWebServices gives for a scheduler it has no view of), the class,
    and the leaf queues apps ran in with what emu charged to them."""
    info = _fifo_info(rm, queues, m)
    info["type"] = "schedulerInfo"
    info["schedulerClass"] = rm.ctx.settings.java_class
    info["queues"] = {
        "queue": [
            {
                "queueName": q["name"],
                "resourcesUsed": resource_info(q.get("allocated") or {}),
                "numContainers": q.get("allocated_containers", 0),
                "numApplications": q.get("apps_running", 0) + q.get("apps_pending", 0),
            }
            for q in queues
        ]
    }
    return info


def _fifo_info(
    rm: ResourceManager, queues: list[dict[str, Any]], m: dict[str, Any]
) -> dict[str, Any]:
    sched = rm.ctx.scheduler
    total, used = m["total"].get("memory-mb", 0), m["allocated"].get("memory-mb", 0)
    return {
        "type": "fifoScheduler",
        "capacity": 1.0,
        "usedCapacity": used / total if total else 0.0,
        "qstate": "RUNNING",
        "minQueueMemoryCapacity": sched.minimum.memory,
        "maxQueueMemoryCapacity": sched.maximum.memory,
        "numNodes": m["active_nodes"],
        "usedNodeCapacity": used,
        "availNodeCapacity": total - used,
        "totalNodeCapacity": total,
        "numContainers": m["containers_allocated"],
    }


def _scaled(wire: dict[str, int], fraction: float) -> dict[str, int]:
    return {k: int(v * fraction) for k, v in wire.items()}


def _am_limit(effective: dict[str, int], percent: float, step: dict[str, int]) -> dict[str, int]:
    """A queue's AM limit as YARN's LeafQueue computes it: its effective
    capacity times maximum-am-resource-percent, rounded up to a multiple of
    the minimum allocation (Resources.roundUp)."""
    out = {}
    for k, v in effective.items():
        amount, s = v * percent, step.get(k, 0)
        out[k] = math.ceil(amount / s) * s if s > 0 else math.ceil(amount)
    return out


def _user_limit(cluster: dict[str, int], q: dict[str, Any]) -> dict[str, int]:
    """A leaf's per-user limit as YARN's UsersManager computes it for the
    default partition: the queue's current capacity (its guarantee, or what
    it uses if more) shared among active users but never below
    user-limit-percent of it, and at most user-limit-factor times the
    guarantee, within the queue's maximum."""
    users = max(1, q["active_users"])
    out = {}
    for k, total in cluster.items():
        guaranteed = total * q["absolute_capacity"] / 100
        current = max(guaranteed, q["used"].get(k, 0))
        limit = max(current / users, current * q["user_limit_percent"] / 100)
        cap = min(guaranteed * q["user_limit_factor"], total * q["absolute_maximum_capacity"] / 100)
        out[k] = int(min(limit, cap))
    return out


def _label_capacities(p: dict[str, Any], qc: Any, leaf: bool) -> dict[str, Any]:
    """PartitionQueueCapacitiesInfo of a labelled partition, from the
    scheduler's per-label queue report (`partitions`)."""
    return {
        "partitionName": p["partition"],
        "queueCapacityVectorInfo": _capacity_vector(p["capacity"]),
        "capacity": p["capacity"],
        "usedCapacity": p["used_capacity"],
        "maxCapacity": p["maximum_capacity"],
        "absoluteCapacity": p["absolute_capacity"],
        "absoluteUsedCapacity": p["absolute_used_capacity"],
        "absoluteMaxCapacity": p["absolute_maximum_capacity"],
        "maxAMLimitPercentage": qc.maximum_am_percent * 100 if leaf else 0.0,
        "weight": -1.0,
        "normalizedWeight": 0.0,
        "configuredMinResource": resource_info(ZERO_RESOURCE),
        "configuredMaxResource": resource_info(ZERO_RESOURCE),
    }


def _capacity_vector(capacity: float) -> dict[str, Any]:
    """QueueCapacityVectorInfo of a percentage-configured queue."""
    pct = f"{float(capacity)}%"
    return {
        "configuredCapacityVector": f"[memory-mb={pct},vcores={pct}]",
        "capacityVectorEntries": [
            {"resourceName": "memory-mb", "resourceValue": pct},
            {"resourceName": "vcores", "resourceValue": pct},
        ],
    }


def _acls(qc: Any) -> dict[str, Any]:
    """QueueAclsInfo: administer, max-priority and submit ACLs as configured."""
    return {
        "queueAcl": [
            {"accessType": "ADMINISTER_QUEUE", "accessControlList": qc.admin_acl.text},
            {"accessType": "APPLICATION_MAX_PRIORITY", "accessControlList": "*"},
            {"accessType": "SUBMIT_APP", "accessControlList": qc.submit_acl.text},
        ]
    }


def _capacity_info(
    rm: ResourceManager,
    queues: list[dict[str, Any]],
    m: dict[str, Any],
    asks: dict[str, list[Any]],
    usage: dict[str, tuple[int, int, int, int, int]],
) -> dict[str, Any]:
    """CapacitySchedulerInfo: the queue tree, each queue's reports plus its
    configuration as the CapacityScheduler reads it (capacity-scheduler.xml
    keys, YARN's defaults), in YARN's field names."""
    from emu.rm.scheduler.capacity.config import parse

    ctx = rm.ctx
    settings = ctx.settings
    # The configuration the scheduler runs with (refreshed with its queues).
    cs = getattr(ctx.scheduler, "cs", None) or parse(
        ctx.conf, settings.minimum_allocation, settings.maximum_allocation
    )
    by_name = {q["name"]: q for q in queues}
    cluster = m["total"]
    minimum = settings.minimum_allocation.to_wire()
    # Per queue and user: apps, usage and AM usage, from the RM's own records.
    users: dict[str, dict[str, dict[str, Any]]] = {}
    for app in ctx.apps.values():
        if app.state in app_sm.FINAL:
            continue
        u = users.setdefault(app.queue, {}).setdefault(
            app.user,
            {"used": dict(ZERO_RESOURCE), "am": dict(ZERO_RESOURCE), "active": 0, "pending": 0,
             "pending_res": dict(ZERO_RESOURCE), "reserved": dict(ZERO_RESOURCE)},
        )  # fmt: skip
        mb, vc, _, rmb, rvc = usage.get(app.app_id, (0, 0, 0, 0, 0))
        u["used"]["memory-mb"] += mb
        u["used"]["vcores"] += vc
        u["reserved"]["memory-mb"] += rmb
        u["reserved"]["vcores"] += rvc
        _, pmb, pvc = _pending_totals(asks.get(app.app_id, []))
        u["pending_res"]["memory-mb"] += pmb
        u["pending_res"]["vcores"] += pvc
        am = _am_container(rm, app)
        c = ctx.containers.get(am[0]) if am else None
        if c is not None:
            u["am"]["memory-mb"] += c.resource.memory
            u["am"]["vcores"] += c.resource.vcores
            u["active"] += 1
        else:
            u["pending"] += 1
    pending_by_queue, reserved_by_queue = _queue_container_counts(rm, asks)

    def common(q: dict[str, Any], qc: Any, leaf: bool) -> dict[str, Any]:
        effective_min = _scaled(cluster, q["absolute_capacity"] / 100)
        effective_max = _scaled(cluster, q["absolute_maximum_capacity"] / 100)
        am_limit = _am_limit(effective_min, qc.maximum_am_percent, minimum)
        pending = _under(pending_by_queue, q["name"])
        return {
            "queuePath": q["name"],
            "queueName": q["name"].rsplit(".", 1)[-1],
            "state": q["state"],
            "capacity": q["capacity"],
            "maxCapacity": q["maximum_capacity"],
            "usedCapacity": q["used_capacity"],
            "absoluteCapacity": q["absolute_capacity"],
            "absoluteMaxCapacity": q["absolute_maximum_capacity"],
            "absoluteUsedCapacity": q["absolute_used_capacity"],
            # Weights are not configured (percentage mode): YARN's -1 and 0.
            "weight": -1.0,
            "normalizedWeight": 0.0,
            "numApplications": q["num_applications"],
            "maxParallelApps": ctx.conf.get_int(
                f"yarn.scheduler.capacity.{q['name']}.max-parallel-apps", 2147483647
            ),
            "isAbsoluteResource": False,
            "resourcesUsed": resource_info(q["used"]),
            "hideReservationQueues": False,
            "nodeLabels": q.get("accessible_labels", ["*"]),
            "allocatedContainers": q["allocated_containers"],
            "reservedContainers": _under(reserved_by_queue, q["name"]),
            "pendingContainers": pending,
            "numContainers": q["allocated_containers"],
            "queueCapacityVectorInfo": _capacity_vector(q["capacity"]),
            "capacities": {
                "queueCapacitiesByPartition": [
                    {
                        "partitionName": "",
                        "queueCapacityVectorInfo": _capacity_vector(q["capacity"]),
                        "capacity": q["capacity"],
                        "usedCapacity": q["used_capacity"],
                        "maxCapacity": q["maximum_capacity"],
                        "absoluteCapacity": q["absolute_capacity"],
                        "absoluteUsedCapacity": q["absolute_used_capacity"],
                        "absoluteMaxCapacity": q["absolute_maximum_capacity"],
                        "maxAMLimitPercentage": qc.maximum_am_percent * 100 if leaf else 0.0,
                        "weight": -1.0,
                        "normalizedWeight": 0.0,
                        "configuredMinResource": resource_info(ZERO_RESOURCE),
                        "configuredMaxResource": resource_info(ZERO_RESOURCE),
                        "effectiveMinResource": resource_info(effective_min),
                        "effectiveMaxResource": resource_info(effective_max),
                    }
                ]
                + [_label_capacities(p, qc, leaf) for p in q.get("partitions", ())]
            },
            "resources": {
                "resourceUsagesByPartition": [
                    _partition_usage(
                        used=q["used"],
                        reserved=q.get("reserved") or ZERO_RESOURCE,
                        pending=q.get("pending") or ZERO_RESOURCE,
                        am_used=q.get("am_used") or ZERO_RESOURCE,
                        am_limit=am_limit if leaf else ZERO_RESOURCE,
                        user_am_limit=am_limit if leaf else ZERO_RESOURCE,
                    )
                ]
                + [
                    _partition_usage(
                        used=p["used"],
                        reserved=p["reserved"],
                        pending=ZERO_RESOURCE,
                        am_used=p.get("am_used") or ZERO_RESOURCE,
                        am_limit=ZERO_RESOURCE,
                        user_am_limit=ZERO_RESOURCE,
                        partition=p["partition"],
                    )
                    for p in q.get("partitions", ())
                ]
            },
            "minEffectiveCapacity": resource_info(effective_min),
            "maxEffectiveCapacity": resource_info(effective_max),
            "maximumAllocation": resource_info(qc.maximum_allocation.to_wire()),
            "queueAcls": _acls(qc),
            "queuePriority": qc.priority,
            "orderingPolicyInfo": qc.ordering_policy,
            "autoCreateChildQueueEnabled": False,
            "leafQueueTemplate": {},
            "mode": "percentage",
            "queueType": "leaf" if leaf else "parent",
            "creationMethod": "static",
            "autoCreationEligibility": "off",
            "autoQueueTemplateProperties": {},
            "autoQueueParentTemplateProperties": {},
            "autoQueueLeafTemplateProperties": {},
        }

    def queue(q: dict[str, Any], parent_conf: Any = None) -> dict[str, Any]:
        # A queue the configuration does not list (created at run time)
        # runs with its parent's settings.
        qc = cs.queues.get(q["name"]) or parent_conf or cs.queues["root"]
        leaf = q["type"] == "leaf"
        out = common(q, qc, leaf)
        if not leaf:
            out["queues"] = {
                "queue": [queue(by_name[c], qc) for c in q["children"] if c in by_name]
            }
            return out
        effective_min = _scaled(cluster, q["absolute_capacity"] / 100)
        am_limit = _am_limit(effective_min, qc.maximum_am_percent, minimum)
        user_limit = _user_limit(cluster, q)
        max_apps = q["max_applications"]
        max_apps_per_user = min(
            max_apps, int(max_apps * q["user_limit_percent"] / 100 * q["user_limit_factor"])
        )
        out.update(
            {
                "type": "capacitySchedulerLeafQueueInfo",
                "numActiveApplications": q["active_applications"],
                "numPendingApplications": q["pending_applications"],
                "maxApplications": max_apps,
                "maxApplicationsPerUser": max_apps_per_user,
                "userLimit": q["user_limit_percent"],
                "userLimitFactor": q["user_limit_factor"],
                "numActiveUsers": q["active_users"],
                "users": {
                    "user": [
                        {
                            "username": name,
                            "resourcesUsed": resource_info(u["used"]),
                            "numPendingApplications": u["pending"],
                            "numActiveApplications": u["active"],
                            "AMResourceUsed": resource_info(u["am"]),
                            "userResourceLimit": resource_info(user_limit),
                            "resources": {
                                "resourceUsagesByPartition": [
                                    _partition_usage(
                                        used=u["used"],
                                        reserved=u["reserved"],
                                        pending=u["pending_res"],
                                        am_used=u["am"],
                                        am_limit=am_limit,
                                        # YARN keeps no AM limit per user here.
                                        user_am_limit=ZERO_RESOURCE,
                                    )
                                ]
                            },
                            "userWeight": 1.0,
                            "isActive": u["pending_res"]["memory-mb"] > 0,
                        }
                        for name, u in sorted(users.get(q["name"], {}).items())
                    ]
                },
                "configuredMaxAMResourceLimit": qc.maximum_am_percent,
                "AMResourceLimit": resource_info(am_limit),
                "usedAMResource": resource_info(q["am_used"]),
                "AMResourceUsed": resource_info(q["am_used"]),
                "userAMResourceLimit": resource_info(am_limit),
                "preemptionDisabled": qc.preemption_disabled or not cs.preemption.enabled,
                "intraQueuePreemptionDisabled": qc.intra_preemption_disabled
                or not cs.preemption.enabled,
                "defaultPriority": 0,
                "isAutoCreatedLeafQueue": False,
                "maxApplicationLifetime": -1,
                "defaultApplicationLifetime": -1,
            }
        )
        return out

    root = queue(by_name["root"])
    root_conf = cs.queues["root"]
    info = {k: v for k, v in root.items() if k not in ("queues",)}
    for k in ("state", "absoluteCapacity", "absoluteMaxCapacity", "absoluteUsedCapacity",
              "numApplications", "resourcesUsed", "hideReservationQueues", "nodeLabels",
              "allocatedContainers", "reservedContainers", "pendingContainers", "numContainers",
              "resources", "minEffectiveCapacity", "maxEffectiveCapacity",
              "autoCreateChildQueueEnabled", "leafQueueTemplate"):  # fmt: skip
        info.pop(k, None)
    info.update(
        {
            "type": "capacityScheduler",
            "capacity": 100.0,
            "usedCapacity": root["usedCapacity"],
            "maxCapacity": 100.0,
            "queueName": "root",
            "queues": root.get("queues", {"queue": []}),
            "health": _capacity_health(rm),
            "maximumAllocation": resource_info(root_conf.maximum_allocation.to_wire()),
        }
    )
    return info


def _queue_container_counts(
    rm: ResourceManager, asks: dict[str, list[Any]]
) -> tuple[dict[str, int], dict[str, int]]:
    """Pending and reserved containers per leaf queue (YARN's QueueMetrics
    pendingContainers and reservedContainers)."""
    pending: dict[str, int] = {}
    for app_id, app_asks in asks.items():
        app = rm.ctx.apps.get(app_id)
        if app is not None:
            pending[app.queue] = pending.get(app.queue, 0) + _pending_totals(app_asks)[0]
    reserved: dict[str, int] = {}
    for c in rm.ctx.containers.values():
        holder = rm.ctx.apps.get(c.app_id) if c.state == "RESERVED" else None
        if holder is not None:
            reserved[holder.queue] = reserved.get(holder.queue, 0) + 1
    return pending, reserved


def _under(counts: dict[str, int], queue: str) -> int:
    """A queue's count: its own and its descendants'."""
    return sum(n for q, n in counts.items() if q == queue or q.startswith(queue + "."))


def _capacity_health(rm: ResourceManager) -> dict[str, Any]:
    """CapacitySchedulerHealthInfo. emu keeps no record of the scheduler's
    last operations, so each reads as YARN's does before any happened
    ("N/A", counts 0)."""
    none = {"nodeId": "N/A", "containerId": "N/A", "queue": "N/A"}
    return {
        "lastrun": 0,
        "operationsInfo": [
            {"operation": op, **none}
            for op in ("last-allocation", "last-release", "last-preemption", "last-reservation")
        ],
        "lastRunDetails": [
            {"operation": op, "count": 0, "resources": resource_info(ZERO_RESOURCE)}
            for op in ("releases", "allocations", "reservations")
        ],
    }


def _fair_info(
    rm: ResourceManager,
    queues: list[dict[str, Any]],
    m: dict[str, Any],
    asks: dict[str, list[Any]],
) -> dict[str, Any]:
    names = [q["name"] for q in queues]
    by_name = {q["name"]: q for q in queues}
    cluster = resource_info(m["total"])
    max_alloc = resource_info(rm.ctx.settings.maximum_allocation.to_wire())
    pending, reserved = _queue_container_counts(rm, asks)

    def queue(q: dict[str, Any]) -> dict[str, Any]:
        leaf = q["type"] == "leaf"
        out: dict[str, Any] = {
            "queueName": q["name"],
            "schedulingPolicy": q["policy"],
            "weight": q["weight"],
            "maxApps": q["max_running_apps"],
            "minResources": resource_info(q["min_resources"]),
            # YARN shows the configured maximum within the cluster's size.
            "maxResources": resource_info(
                {k: min(v, m["total"].get(k, v)) for k, v in q["max_resources"].items()}
            ),
            "usedResources": resource_info(q["used"]),
            # Only leaf queues account AM use and limits; YARN's parents say 0.
            "amUsedResources": resource_info(q["am_resource_usage"] if leaf else ZERO_RESOURCE),
            "amMaxResources": resource_info(q["max_am_resource"] if leaf else ZERO_RESOURCE),
            "demandResources": resource_info(q["demand"]),
            "steadyFairResources": resource_info(q["steady_fair_share"]),
            "fairResources": resource_info(q["fair_share"]),
            "clusterResources": cluster,
            "reservedResources": resource_info(q.get("reserved") or {}),
            "maxContainerAllocation": max_alloc,
            "allocatedContainers": q.get("allocated_containers", 0),
            "reservedContainers": _under(reserved, q["name"]),
            "pendingContainers": _under(pending, q["name"]),
            "preemptable": q["preemptable"],
        }  # fmt: skip
        if leaf:
            out.update(
                {
                    "type": "fairSchedulerLeafQueueInfo",
                    "numActiveApps": q["num_runnable_apps"],
                    "numPendingApps": q["num_non_runnable_apps"],
                }
            )
        else:
            kids = [n for n in names if n.rsplit(".", 1)[0] == q["name"] and n != q["name"]]
            out["childQueues"] = {"queue": [queue(by_name[k]) for k in kids]}
        return out

    return {"type": "fairScheduler", "rootQueue": queue(by_name["root"])}
