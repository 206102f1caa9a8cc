"""The read-only cluster view: the RM's state in the YARN REST API's shapes.

`snapshot(rm)` is the only place the web layer looks inside the RM. It reads
the RM context and the scheduler's own reports (`metrics`, `list_nodes`,
`queue_info`), never scheduler internals, and returns plain JSON-ready data
named as Hadoop's web service DAOs name it (`ClusterInfo`,
`ClusterMetricsInfo`, `{Fifo,Capacity,Fair}SchedulerInfo`, `NodeInfo`,
`AppInfo`, `AppAttemptInfo`, `ContainerInfo`). Building it changes nothing,
so a snapshot taken every wall second during a replay on the virtual clock
leaves the run's outputs byte-identical.

Times are YARN's epoch milliseconds: the run's epoch plus simulated time,
which is plain simulated milliseconds on the virtual clock (as in
`jobruntime.csv`). Fields Hadoop computes from things emu does not model
(log links, memory-seconds, JVM build strings) are left out rather than
invented.
"""

from __future__ import annotations

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


def resource_info(wire: dict[str, int]) -> dict[str, int]:
    """YARN's ResourceInfo JSON: memory (MB) and vCores."""
    return {"memory": wire.get("memory-mb", 0), "vCores": wire.get("vcores", 0)}


def snapshot(rm: ResourceManager, epoch_ms: int = 0) -> Snapshot:
    """The whole cluster view, now. Reads only; see the module docstring."""
    ctx = rm.ctx
    now = ctx.now_ms()
    metrics = rm.services.client.metrics()
    node_reports = rm.services.client.list_nodes({"type": "list_nodes", "id": 0})["nodes"]
    queues = ctx.scheduler.queue_info("")
    app_usage = _app_usage(rm)
    apps = [
        _app_info(rm, app, app_usage.get(app.app_id), now, epoch_ms)
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
        metrics=_metrics_info(metrics, node_reports, ctx.containers),
        scheduler=_scheduler_info(rm, queues, metrics),
        nodes=[_node_info(n, epoch_ms) for n in node_reports],
        apps=apps,
        attempts=attempts,
        containers=containers,
        queues=queues,
        activities={a["id"]: _app_activities(rm, a, epoch_ms) for a in apps},
    )


def _cluster_info(rm: ResourceManager, epoch_ms: int) -> dict[str, Any]:
    return {
        "id": rm.ctx.cluster_timestamp,
        "startedOn": epoch_ms,
        "state": "STARTED",
        "haState": "ACTIVE",
        "rmStateStoreName": (
            "emu.rm.recovery" if rm.ctx.recovery is not None else "NullRMStateStore"
        ),
        "resourceManagerVersion": f"emu {__version__}",
        "hadoopVersion": f"emu {__version__}",
        "schedulerType": SCHEDULER_TYPES[scheduler_kind(rm)],
    }


def _metrics_info(
    m: dict[str, Any], nodes: list[dict[str, Any]], containers: dict[str, Any]
) -> dict[str, Any]:
    total, used, avail = m["total"], m["allocated"], m["available"]
    states: dict[str, int] = {}
    for n in nodes:
        states[n["state"]] = states.get(n["state"], 0) + 1
    reserved_mb = reserved_vc = 0
    for c in containers.values():
        if c.state == "RESERVED":
            reserved_mb += c.resource.memory
            reserved_vc += c.resource.vcores
    total_mb, total_vc = total.get("memory-mb", 0), total.get("vcores", 0)
    return {
        "appsSubmitted": m["apps_submitted"],
        "appsCompleted": m["apps_completed"],
        "appsPending": m["apps_pending"],
        "appsRunning": m["apps_running"],
        "appsFailed": m["apps_failed"],
        "appsKilled": m["apps_killed"],
        "reservedMB": reserved_mb,
        "availableMB": avail.get("memory-mb", 0),
        "allocatedMB": used.get("memory-mb", 0),
        "reservedVirtualCores": reserved_vc,
        "availableVirtualCores": avail.get("vcores", 0),
        "allocatedVirtualCores": used.get("vcores", 0),
        "containersAllocated": m["containers_allocated"],
        "containersReserved": sum(1 for c in containers.values() if c.state == "RESERVED"),
        "totalMB": total_mb,
        "totalVirtualCores": total_vc,
        "utilizedMBPercent": round(100 * used.get("memory-mb", 0) / total_mb) if total_mb else 0,
        "utilizedVirtualCoresPercent": (
            round(100 * used.get("vcores", 0) / total_vc) if total_vc else 0
        ),
        "totalNodes": len(nodes),
        "activeNodes": m["active_nodes"],
        "lostNodes": states.get("LOST", 0),
        "unhealthyNodes": states.get("UNHEALTHY", 0),
        "decommissioningNodes": states.get("DECOMMISSIONING", 0),
        "decommissionedNodes": states.get("DECOMMISSIONED", 0),
        "rebootedNodes": states.get("REBOOTED", 0),
        "shutdownNodes": states.get("SHUTDOWN", 0),
    }


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
        "numContainers": n["num_containers"],
        "usedMemoryMB": used.get("memory-mb", 0),
        "availMemoryMB": avail.get("memory-mb", 0),
        "usedVirtualCores": used.get("vcores", 0),
        "availableVirtualCores": avail.get("vcores", 0),
        "nodeLabels": n["labels"],
        "used": resource_info(used),
        "avail": resource_info(avail),
        "totalResource": resource_info(total),
    }


def _app_usage(rm: ResourceManager) -> dict[str, tuple[int, int, int]]:
    """(allocated MB, allocated vcores, running containers) per app."""
    usage: dict[str, list[int]] = {}
    for c in rm.ctx.containers.values():
        if c.state in ("ALLOCATED", "ACQUIRED", "RUNNING"):
            u = usage.setdefault(c.app_id, [0, 0, 0])
            u[0] += c.resource.memory
            u[1] += c.resource.vcores
            u[2] += 1
    return {k: (v[0], v[1], v[2]) for k, v in usage.items()}


def _app_info(
    rm: ResourceManager, app: Any, usage: tuple[int, int, int] | None, now: int, epoch_ms: int
) -> dict[str, Any]:
    mb, vc, running = usage or (0, 0, 0)
    cluster = rm.ctx.scheduler.cluster
    started = app.submit_ms
    finished = app.finished_ms if app.state in app_sm.FINAL else -1
    am = _am_container(rm, app)
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
        "startedTime": epoch_ms + started,
        "launchTime": epoch_ms + app.started_ms if app.started_ms >= 0 else 0,
        "finishedTime": epoch_ms + finished if finished >= 0 else 0,
        "elapsedTime": (finished if finished >= 0 else now) - started,
        "allocatedMB": mb,
        "allocatedVCores": vc,
        "runningContainers": running,
        "clusterUsagePercentage": 100.0 * mb / cluster.memory if cluster.memory else 0.0,
        "amHostHttpAddress": am[1] if am else "",
        "masterNodeId": am[1] if am else "",
        "unmanagedApplication": False,
    }
    if app.state == app_sm.RUNNING:
        info["trackingUI"] = "ApplicationMaster"
    return info


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
    return {
        "id": a.number,
        "appAttemptId": a.attempt_id,
        "appAttemptState": a.state,
        "startTime": epoch_ms + a.started_ms,
        "finishedTime": epoch_ms + a.finished_ms if a.finished_ms >= 0 else 0,
        "containerId": a.am_container_id,
        "nodeId": node,
        "nodeHttpAddress": node,
        "diagnosticsInfo": a.diagnostics,
        "blacklistedNodes": "",
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
    rm: ResourceManager, queues: list[dict[str, Any]], m: dict[str, Any]
) -> dict[str, Any]:
    kind = scheduler_kind(rm)
    if kind == "capacity":
        return _capacity_info(queues)
    if kind == "fair":
        return _fair_info(queues, m)
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


def _capacity_info(queues: list[dict[str, Any]]) -> dict[str, Any]:
    by_name = {q["name"]: q for q in queues}

    def queue(q: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "queuePath": q["name"],
            "queueName": q["name"].rsplit(".", 1)[-1],
            "state": q["state"],
            "capacity": q["capacity"],
            "maxCapacity": q["maximum_capacity"],
            "usedCapacity": q["used_capacity"],
            "absoluteCapacity": q["absolute_capacity"],
            "absoluteMaxCapacity": q["absolute_maximum_capacity"],
            "absoluteUsedCapacity": q["absolute_used_capacity"],
            "numApplications": q["num_applications"],
            "resourcesUsed": resource_info(q["used"]),
            "numContainers": q["allocated_containers"],
        }
        if q["type"] == "leaf":
            out.update(
                {
                    "type": "capacitySchedulerLeafQueueInfo",
                    "numActiveApplications": q["active_applications"],
                    "numPendingApplications": q["pending_applications"],
                    "maxApplications": q["max_applications"],
                    "userLimit": q["user_limit_percent"],
                    "userLimitFactor": q["user_limit_factor"],
                    "numActiveUsers": q["active_users"],
                    "AMResourceUsed": resource_info(q["am_used"]),
                    "pendingContainers": 0,
                }
            )
        else:
            out["queues"] = {"queue": [queue(by_name[c]) for c in q["children"] if c in by_name]}
        return out

    root = queue(by_name["root"])
    return {
        "type": "capacityScheduler",
        "capacity": 100.0,
        "usedCapacity": root["usedCapacity"],
        "maxCapacity": 100.0,
        "queueName": "root",
        "queues": root.get("queues", {"queue": []}),
    }


def _fair_info(queues: list[dict[str, Any]], m: dict[str, Any]) -> dict[str, Any]:
    names = [q["name"] for q in queues]
    by_name = {q["name"]: q for q in queues}
    cluster = resource_info(m["total"])

    def queue(q: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "queueName": q["name"],
            "schedulingPolicy": q["policy"],
            "weight": q["weight"],
            "maxApps": q["max_running_apps"],
            "minResources": resource_info(q["min_resources"]),
            "maxResources": resource_info(q["max_resources"]),
            "usedResources": resource_info(q["used"]),
            "demandResources": resource_info(q["demand"]),
            "fairResources": resource_info(q["fair_share"]),
            "steadyFairResources": resource_info(q["steady_fair_share"]),
            "clusterResources": cluster,
            "reservedResources": resource_info(q.get("reserved") or {}),
            "allocatedContainers": q.get("allocated_containers", 0),
            "pendingContainers": 0,
            "preemptable": q["preemptable"],
        }
        if q["type"] == "leaf":
            out.update(
                {
                    "type": "fairSchedulerLeafQueueInfo",
                    "numActiveApps": q["num_runnable_apps"],
                    "numPendingApps": q["num_non_runnable_apps"],
                    "amUsedResources": resource_info(q["am_resource_usage"]),
                    "amMaxResources": resource_info(q["max_am_resource"]),
                }
            )
        else:
            kids = [n for n in names if n.rsplit(".", 1)[0] == q["name"] and n != q["name"]]
            out["childQueues"] = {"queue": [queue(by_name[k]) for k in kids]}
        return out

    return {"type": "fairScheduler", "rootQueue": queue(by_name["root"])}
