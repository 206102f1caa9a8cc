"""The RM's services: protocol requests in, events through the dispatcher,
replies out (YARN's ResourceTrackerService, ApplicationMasterService,
ClientRMService and AdminService).

Each request is handled to completion synchronously: decode has already
validated its shape; the handler raises events, the dispatcher drains them,
and the reply reflects everything that followed. Nothing here touches a
transport: `emu.rm.actor` feeds requests in and carries replies out.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from emu import protocol as P
from emu.errors import InputError
from emu.resources import Resource
from emu.rm import app as app_sm
from emu.rm import attempt as attempt_sm
from emu.rm import node as node_sm
from emu.rm.app import RMApp
from emu.rm.context import RMContext
from emu.rm.diagnostics import invalid_request
from emu.rm.node import RMNode
from emu.rm.scheduler.common import SchedulerError
from emu.rm.scheduler.events import SchedulerEvent

log = structlog.get_logger("emu.rm")
_APP_ID = re.compile(r"application_\d+_\d+")

CAPACITY_PREFIX = "yarn.scheduler.capacity."


class RMServices:
    """Request handlers for the four RM services over one RMContext."""

    def __init__(self, ctx: RMContext, epoch: float = 0.0, rate: float = 0.0) -> None:
        self.ctx = ctx
        self.epoch = epoch
        self.rate = rate
        self.requests: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.handlers: dict[str, Callable[[dict], dict]] = {
            name: getattr(self, name) for name in P.CATALOGUE if hasattr(self, name)
        }

    def handle(self, service: str, msg: dict) -> dict:
        """One validated request on `service` -> its reply map."""
        mtype = msg["type"]
        if mtype not in P.SERVICES[service]:
            self.errors[P.WRONG_SERVICE] += 1
            return P.error(P.WRONG_SERVICE, f"{mtype} is not served by {service}", msg["id"])
        self.requests[mtype] += 1
        try:
            reply = self.handlers[mtype](msg)
        except _Refused as e:
            self.errors[e.code] += 1
            return P.error(e.code, e.message, msg["id"])
        except Exception as e:
            self.errors[P.INTERNAL] += 1
            log.exception("request failed", type=mtype)
            return P.error(P.INTERNAL, f"{type(e).__name__}: {e}", msg["id"])
        finally:
            self.ctx.dispatcher.drain()
        return reply

    def error_reply(self, err: P.ProtocolError) -> dict:
        self.errors[err.code] += 1
        return P.error(err.code, err.message, err.request_id)

    # --- ResourceTracker ----------------------------------------------------------
    def register_node(self, msg: dict) -> dict:
        ctx = self.ctx
        node_id = msg["node_id"]
        resource = Resource.from_wire(msg["resource"])
        minimum = ctx.settings.minimum_allocation
        if resource.memory < minimum.memory or resource.vcores < minimum.vcores:
            # YARN's ResourceTrackerService.registerNodeManager: a node that
            # cannot hold the smallest container is told to shut down.
            self.errors["node_below_minimum"] += 1
            return P.reply(
                msg,
                action=P.SHUTDOWN,
                next_heartbeat_ms=0,
                epoch=self.epoch,
                rate=self.rate,
                diagnostics=f"NodeManager from {msg['host']} doesn't satisfy minimum "
                f"allocations: {resource!r} < {minimum!r}",
            )
        now = ctx.now_ms()
        existing = ctx.nodes.get(node_id)
        if existing is not None:
            existing.nm_address = msg["nm_address"]
            existing.response_id = 0
            existing.last_reply = None
            ctx.nm_liveness.ping(node_id, now)
            ctx.dispatch("node", node_sm.NodeEvent.RECONNECTED, node_id, resource)
        else:
            old = ctx.inactive_nodes.pop(node_id, None)
            if old is not None and old.state == node_sm.DECOMMISSIONED:
                ctx.inactive_nodes[node_id] = old
                return P.reply(
                    msg, action=P.SHUTDOWN, next_heartbeat_ms=0, epoch=self.epoch, rate=self.rate
                )
            node = RMNode(
                node_id,
                msg["host"],
                msg["rack"],
                resource,
                msg["nm_address"],
                tuple(msg.get("labels") or ()),
                now,
            )
            ctx.nodes[node_id] = node
            ctx.dispatch("node", node_sm.NodeEvent.STARTED, node_id)
        return P.reply(
            msg,
            action=P.NORMAL,
            next_heartbeat_ms=ctx.settings.nm_heartbeat_ms,
            epoch=self.epoch,
            rate=self.rate,
        )

    def node_heartbeat(self, msg: dict) -> dict:
        ctx = self.ctx
        node_id = msg["node_id"]
        node = ctx.nodes.get(node_id)
        if node is None:
            old = ctx.inactive_nodes.get(node_id)
            action = (
                P.SHUTDOWN if old is not None and old.state == node_sm.DECOMMISSIONED else P.RESYNC
            )
            return self._node_reply(msg, msg["response_id"], [], [], action)
        rid = msg["response_id"]
        if rid + 1 == node.response_id and node.last_reply is not None:
            return {**node.last_reply, "id": msg["id"]}
        if rid != node.response_id:
            # YARN: "too far behind rm response id"; the node is REBOOTED
            # (out of the scheduler) until it registers again.
            ctx.dispatch("node", node_sm.NodeEvent.REBOOTING, node_id)
            ctx.dispatcher.drain()
            return self._node_reply(msg, rid, [], [], P.RESYNC)
        now = ctx.now_ms()
        node.last_heartbeat_ms = now
        ctx.nm_liveness.ping(node_id, now)
        launched: list[str] = []
        completed: list[dict] = []
        for st in msg["containers"]:
            if st["state"] == "COMPLETE":
                completed.append(st)
            else:
                launched.append(st["container_id"])
        node.health_report = msg.get("health_report") or ""
        ctx.dispatch(
            "node", node_sm.NodeEvent.STATUS_UPDATE, node_id, (msg["healthy"], launched, completed)
        )
        ctx.dispatcher.drain()
        node.response_id = rid + 1
        action = P.SHUTDOWN if node.state in node_sm.FINAL else P.NORMAL
        cleanup, node.containers_to_cleanup = node.containers_to_cleanup, []
        apps, node.apps_to_cleanup = node.apps_to_cleanup, []
        reply = self._node_reply(msg, node.response_id, cleanup, apps, action)
        node.last_reply = reply
        return reply

    def _node_reply(
        self, msg: dict, rid: int, cleanup: list[str], apps: list[str], action: str
    ) -> dict:
        return P.reply(
            msg,
            response_id=rid,
            containers_to_cleanup=cleanup,
            apps_to_cleanup=apps,
            action=action,
            next_heartbeat_ms=self.ctx.settings.nm_heartbeat_ms,
        )

    def unregister_node(self, msg: dict) -> dict:
        node = self.ctx.nodes.get(msg["node_id"])
        if node is None:
            raise _Refused(P.NOT_FOUND, f"unknown node {msg['node_id']}")
        self.ctx.dispatch("node", node_sm.NodeEvent.SHUTDOWN, node.node_id)
        return P.reply(msg)

    # --- ApplicationMasterProtocol ------------------------------------------------------
    def _attempt(self, msg: dict) -> attempt_sm.RMAppAttempt:
        a = self.ctx.attempts.get(msg["attempt_id"])
        if a is None:
            raise _Refused(P.NOT_FOUND, f"unknown attempt {msg['attempt_id']}")
        return a

    def register_am(self, msg: dict) -> dict:
        ctx = self.ctx
        a = self._attempt(msg)
        if a.state not in (attempt_sm.LAUNCHED, attempt_sm.ALLOCATED):
            raise _Refused(P.INVALID, f"attempt {a.attempt_id} cannot register in state {a.state}")
        ctx.dispatch("attempt", attempt_sm.AttemptEvent.REGISTERED, a.attempt_id, msg["host"])
        ctx.dispatcher.drain()
        app = ctx.apps[a.app_id]
        return P.reply(
            msg,
            max_capability=ctx.scheduler.maximum.to_wire(),
            queue=app.queue,
            cluster_resource=ctx.scheduler.cluster.to_wire(),
        )

    def allocate(self, msg: dict) -> dict:
        ctx = self.ctx
        a = self._attempt(msg)
        if a.state in attempt_sm.FINAL or a.state == attempt_sm.FINISHING:
            return self._allocate_command(msg, a, P.SHUTDOWN)
        if a.state != attempt_sm.RUNNING:
            raise _Refused(P.INVALID, f"attempt {a.attempt_id} is not registered (state {a.state})")
        rid = msg["response_id"]
        if rid + 1 == a.response_id and a.last_reply is not None:
            return {**a.last_reply, "id": msg["id"]}
        if rid != a.response_id:
            return self._allocate_command(msg, a, P.RESYNC)
        ctx.am_liveness.ping(a.attempt_id, ctx.now_ms())
        try:
            alloc = ctx.scheduler.allocate(
                a.attempt_id,
                msg["asks"],
                msg["releases"],
                msg["blacklist_add"],
                msg["blacklist_remove"],
            )
        except SchedulerError as e:
            raise _Refused(P.INVALID_RESOURCE_REQUEST, str(e)) from None
        ctx.dispatcher.drain()
        nodes = ctx.nodes
        allocated = []
        for c in alloc.containers:
            node = nodes.get(c.node_id)
            allocated.append(
                {
                    "container_id": c.container_id,
                    "node_id": c.node_id,
                    "nm_address": node.nm_address if node is not None else "",
                    "resource": c.resource.to_wire(),
                    "priority": c.priority,
                }
            )
        completed, a.just_finished = a.just_finished, []
        a.response_id = rid + 1
        reply = P.reply(
            msg,
            response_id=a.response_id,
            allocated=allocated,
            completed=completed,
            available=alloc.headroom.to_wire(),
            num_cluster_nodes=len(ctx.scheduler.nodes),
            preemption={"containers": alloc.preempt} if alloc.preempt else None,
            command=None,
        )
        a.last_reply = reply
        return reply

    def _allocate_command(self, msg: dict, a: attempt_sm.RMAppAttempt, command: str) -> dict:
        return P.reply(
            msg,
            response_id=a.response_id,
            allocated=[],
            completed=[],
            available=Resource().to_wire(),
            num_cluster_nodes=len(self.ctx.scheduler.nodes),
            preemption=None,
            command=command,
        )

    def finish_am(self, msg: dict) -> dict:
        a = self._attempt(msg)
        if a.state == attempt_sm.FINISHING:
            return P.reply(msg, unregistered=True)
        if a.state != attempt_sm.RUNNING:
            raise _Refused(
                P.INVALID, f"attempt {a.attempt_id} cannot unregister in state {a.state}"
            )
        status = msg["final_status"]
        if status not in ("SUCCEEDED", "FAILED", "KILLED", "UNDEFINED"):
            raise _Refused(P.INVALID, f"unknown final status {status!r}")
        self.ctx.dispatch(
            "attempt",
            attempt_sm.AttemptEvent.UNREGISTERED,
            a.attempt_id,
            (status, msg.get("diagnostics") or ""),
        )
        return P.reply(msg, unregistered=True)

    # --- ApplicationClientProtocol ---------------------------------------------------------
    def new_application(self, msg: dict) -> dict:
        return P.reply(
            msg, app_id=self.ctx.new_app_id(), max_capability=self.ctx.scheduler.maximum.to_wire()
        )

    def submit_application(self, msg: dict) -> dict:
        ctx = self.ctx
        app_id = msg["app_id"]
        if _APP_ID.fullmatch(app_id) is None:
            # YARN's ApplicationId is a typed (cluster timestamp, sequence) record.
            raise _Refused(P.INVALID, f"{app_id!r} is not an application id")
        if app_id in ctx.apps:
            raise _Refused(P.INVALID, f"application {app_id} already submitted")
        am_resource = Resource.from_wire(msg["am_resource"])
        sched = ctx.scheduler
        # YARN's RMAppManager refuses an invalid AM request before the app
        # exists; emu keeps the app and rejects it with the same message
        # (RMApp's saved hook), so a replay goes on and every output says why.
        if invalid_request(am_resource, sched.maximum, sched.maximum) is None:
            am_resource = sched.calc.normalize(
                am_resource, sched.minimum, sched.maximum, sched.increment
            )
        app = RMApp(
            app_id,
            msg["name"],
            msg["queue"],
            msg["user"],
            msg["priority"],
            am_resource,
            msg["am_type"],
            msg["context"],
            ctx.settings.am_max_attempts,
            ctx.now_ms(),
        )
        ctx.apps[app_id] = app
        ctx.dispatch("app", app_sm.AppEvent.START, app_id)
        return P.reply(msg, app_id=app_id)

    def _app(self, msg: dict) -> RMApp:
        app = self.ctx.apps.get(msg["app_id"])
        if app is None:
            raise _Refused(P.NOT_FOUND, f"unknown application {msg['app_id']}")
        return app

    def kill_application(self, msg: dict) -> dict:
        app = self._app(msg)
        if app.state in app_sm.FINAL:
            return P.reply(msg, killed=False)
        self.ctx.dispatch("app", app_sm.AppEvent.KILL, app.app_id)
        return P.reply(msg, killed=True)

    def application_report(self, msg: dict) -> dict:
        return P.reply(msg, report=self._app(msg).report())

    def cluster_metrics(self, msg: dict) -> dict:
        return P.reply(msg, metrics=self.metrics())

    def metrics(self) -> dict[str, Any]:
        ctx = self.ctx
        sched = ctx.scheduler
        final = ctx.final_apps
        queues = [sched.queues[n] for n in sched.leaf_queues() if n in sched.queues]
        lost = sum(1 for n in ctx.inactive_nodes.values() if n.state == node_sm.LOST)
        rebooted = sum(1 for n in ctx.inactive_nodes.values() if n.state == node_sm.REBOOTED)
        return {
            "time_ms": ctx.now_ms(),
            "apps_submitted": len(ctx.apps) + ctx.completed_apps.removed,
            "apps_completed": final[app_sm.FINISHED],
            "apps_failed": final[app_sm.FAILED],
            "apps_killed": final[app_sm.KILLED],
            "apps_running": sum(q.apps_running for q in queues),
            "apps_pending": sum(q.apps_pending for q in queues),
            "active_nodes": len(ctx.nodes),
            "lost_nodes": lost,
            "rebooted_nodes": rebooted,
            "total": sched.cluster.to_wire(),
            "allocated": sched.used.to_wire(),
            "available": (sched.cluster - sched.used).to_wire(),
            "containers_allocated": len(ctx.containers),
            "containers_total": sched.container_total,
            "utilization": sched.utilization(),
            "invalid_transitions": sum(ctx.invalid_transitions.values()),
            "unknown_container_reports": dict(sorted(ctx.scheduler.unknown_reports.items())),
            "dispatcher_max_depth": ctx.dispatcher.max_depth,
        }

    def list_nodes(self, msg: dict) -> dict:
        ctx = self.ctx
        reports = []
        for node_id in sorted({*ctx.nodes, *ctx.inactive_nodes}):
            n = ctx.nodes.get(node_id) or ctx.inactive_nodes[node_id]
            sn = ctx.scheduler.nodes.get(node_id)
            used = sn.allocated if sn is not None else Resource()
            reports.append(n.report(used, len(sn.containers) if sn is not None else 0))
        return P.reply(msg, nodes=reports)

    def list_apps(self, msg: dict) -> dict:
        states = set(msg.get("states") or ())
        apps = [
            a.report() for _, a in sorted(self.ctx.apps.items()) if not states or a.state in states
        ]
        return P.reply(msg, apps=apps)

    def queue_info(self, msg: dict) -> dict:
        return P.reply(msg, queues=self.ctx.scheduler.queue_info(msg["queue"]))

    # --- Admin ----------------------------------------------------------------------------------
    def refresh_queues(self, msg: dict) -> dict:
        reason = self._refresh(msg.get("properties") or {}, msg.get("allocations"))
        return P.reply(msg, ok=reason is None, reason=reason)

    def _refresh(self, properties: dict[str, str], allocations: str | None) -> str | None:
        """Each scheduler refreshes from what it reads: the CapacityScheduler
        from yarn.scheduler.capacity.* properties, the FairScheduler from its
        allocation file; a refresh with neither re-reads the RM's files."""
        ctx = self.ctx
        fair = ctx.settings.scheduler == "fair"
        if allocations is not None:
            if not fair:
                return (
                    f"the {ctx.settings.scheduler} scheduler takes capacity-scheduler.xml "
                    "properties, not a FairScheduler allocation file"
                )
            with tempfile.TemporaryDirectory(prefix="emu-refresh-") as d:
                path = Path(d) / "fair-scheduler.xml"
                path.write_text(allocations, encoding="utf-8")
                return ctx.scheduler.refresh_from(path)  # type: ignore[attr-defined]
        if fair and properties:
            return (
                "the FairScheduler's queues come from its allocation file: give a "
                "fair-scheduler.xml, or edit the RM's and refresh without --file"
            )
        if not properties and ctx.reload_conf is not None and not fair:
            try:
                fresh = ctx.reload_conf()
            except InputError as e:
                return str(e)
            properties = {n: fresh.get(n) or "" for n in fresh if n.startswith(CAPACITY_PREFIX)}
            reason = ctx.scheduler.refresh(properties)
            if reason is None:
                return None
            # Name the file and line of the property the refusal is about.
            named = [n for n in sorted(properties, key=len, reverse=True) if n in reason]
            where = fresh.sources.get(named[0]) if named else None
            return f"{where or 'the RM configuration files'}: {reason}"
        return ctx.scheduler.refresh(properties)

    def decommission_node(self, msg: dict) -> dict:
        node_id = msg["node_id"]
        if node_id not in self.ctx.nodes:
            raise _Refused(P.NOT_FOUND, f"unknown or inactive node {node_id}")
        self.ctx.dispatch("node", node_sm.NodeEvent.DECOMMISSION, node_id)
        return P.reply(msg, ok=True)

    def update_node_resource(self, msg: dict) -> dict:
        node_id = msg["node_id"]
        if node_id not in self.ctx.nodes:
            raise _Refused(P.NOT_FOUND, f"unknown or inactive node {node_id}")
        resource = Resource.from_wire(msg["resource"])
        if resource.any_negative():
            raise _Refused(P.INVALID, f"negative resource {resource}")
        self.ctx.dispatch("node", node_sm.NodeEvent.RESOURCE_UPDATE, node_id, resource)
        return P.reply(msg, ok=True)

    # --- periodic work and launch outcomes -------------------------------------------------------
    def check_monitor(self, name: str) -> list[str]:
        """Expire whatever the named monitor finds quiet; returns the ids."""
        ctx = self.ctx
        now = ctx.now_ms()
        if name == "nm":
            gone = ctx.nm_liveness.expired(now)
            for node_id in gone:
                ctx.dispatch("node", node_sm.NodeEvent.EXPIRE, node_id)
        elif name == "am":
            gone = ctx.am_liveness.expired(now)
            for attempt_id in gone:
                ctx.dispatch("attempt", attempt_sm.AttemptEvent.EXPIRE, attempt_id)
        else:
            gone = ctx.container_expiry.expired(now)
            for cid in gone:
                ctx.dispatch("scheduler", SchedulerEvent.CONTAINER_EXPIRED, cid)
        ctx.dispatcher.drain()
        return gone

    def scheduler_update(self) -> None:
        """The scheduler's periodic work (fair shares, preemption)."""
        self.ctx.scheduler.update()
        self.ctx.dispatcher.drain()

    def take_am_launches(self) -> list[tuple[str, str, dict[str, Any]]]:
        launches, self.ctx.am_launches = self.ctx.am_launches, []
        return launches

    def am_launch_result(self, attempt_id: str, error: str | None) -> None:
        if error is None:
            self.ctx.dispatch("attempt", attempt_sm.AttemptEvent.LAUNCHED, attempt_id)
        else:
            self.ctx.dispatch("attempt", attempt_sm.AttemptEvent.LAUNCH_FAILED, attempt_id, error)
        self.ctx.dispatcher.drain()


class _Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
