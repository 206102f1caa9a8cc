"""ClientRMService: clients submit, watch and kill applications and read
the cluster's nodes, queues and metrics."""

from __future__ import annotations

import re
from typing import Any

from emu.msg import types as P
from emu.resources import ZERO, Resource
from emu.rm import app as app_sm
from emu.rm import node as node_sm
from emu.rm.app import RMApp
from emu.rm.diagnostics import invalid_request
from emu.rm.services.service import Refused, Service

_APP_ID = re.compile(r"application_\d+_\d+")


class ClientRMService(Service):
    """The ApplicationClientProtocol."""

    def new_application(self, msg: dict[str, Any]) -> dict[str, Any]:
        return P.reply(
            msg, app_id=self.ctx.new_app_id(), max_capability=self.ctx.scheduler.maximum.to_wire()
        )

    def submit_application(self, msg: dict[str, Any]) -> dict[str, Any]:
        ctx = self.ctx
        app_id = msg["app_id"]
        if _APP_ID.fullmatch(app_id) is None:
            # YARN's ApplicationId is a typed (cluster timestamp, sequence) record.
            raise Refused(P.INVALID, f"{app_id!r} is not an application id")
        if app_id in ctx.apps:
            raise Refused(P.INVALID, f"application {app_id} already submitted")
        unmanaged = bool(msg.get("unmanaged_am"))
        # An unmanaged AM asks for no AM container (YARN's RMAppManager makes
        # no AM request for one): no AM resource counts against the queue.
        am_resource = ZERO if unmanaged else Resource.from_wire(msg["am_resource"])
        sched = ctx.scheduler
        # YARN's RMAppManager refuses an invalid AM request before the app
        # exists; emu keeps the app and rejects it with the same message
        # (RMApp's saved hook), so a replay goes on and every output says why.
        if not unmanaged and invalid_request(am_resource, sched.maximum, sched.maximum) is None:
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
        app.unmanaged = unmanaged
        ctx.apps[app_id] = app
        ctx.dispatch("app", app_sm.AppEvent.START, app_id)
        return P.reply(msg, app_id=app_id)

    def _app(self, msg: dict[str, Any]) -> RMApp:
        app = self.ctx.apps.get(msg["app_id"])
        if app is None:
            raise Refused(P.NOT_FOUND, f"unknown application {msg['app_id']}")
        return app

    def kill_application(self, msg: dict[str, Any]) -> dict[str, Any]:
        app = self._app(msg)
        if app.state in app_sm.FINAL:
            return P.reply(msg, killed=False)
        self.ctx.dispatch("app", app_sm.AppEvent.KILL, app.app_id)
        return P.reply(msg, killed=True)

    def application_report(self, msg: dict[str, Any]) -> dict[str, Any]:
        return P.reply(msg, report=self._app(msg).report())

    def cluster_metrics(self, msg: dict[str, Any]) -> dict[str, Any]:
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

    def list_nodes(self, msg: dict[str, Any]) -> dict[str, Any]:
        ctx = self.ctx
        reports = []
        for node_id in sorted({*ctx.nodes, *ctx.inactive_nodes}):
            n = ctx.nodes.get(node_id) or ctx.inactive_nodes[node_id]
            sn = ctx.scheduler.nodes.get(node_id)
            used = sn.allocated if sn is not None else Resource()
            reports.append(n.report(used, len(sn.containers) if sn is not None else 0))
        return P.reply(msg, nodes=reports)

    def list_apps(self, msg: dict[str, Any]) -> dict[str, Any]:
        states = set(msg.get("states") or ())
        apps = [
            a.report() for _, a in sorted(self.ctx.apps.items()) if not states or a.state in states
        ]
        return P.reply(msg, apps=apps)

    def queue_info(self, msg: dict[str, Any]) -> dict[str, Any]:
        return P.reply(msg, queues=self.ctx.scheduler.queue_info(msg["queue"]))

    def node_labels_report(self, msg: dict[str, Any]) -> dict[str, Any]:
        """getClusterNodeLabels and getLabelsToNodes: the cluster's labels
        (name, exclusive) and each label's registered nodes."""
        ctx = self.ctx
        labels = ctx.node_labels
        nodes = labels.nodes_of()
        resources = {}
        for label, ids in nodes.items():
            total = ZERO
            for node_id in ids:
                node = ctx.nodes.get(node_id)
                if node is not None:
                    total = total + node.resource
            resources[label] = total.to_wire()
        return P.reply(
            msg,
            labels=[[n, e] for n, e in labels.cluster_labels()],
            nodes=nodes,
            resources=resources,
        )
