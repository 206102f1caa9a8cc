"""AdminService: `yarn rmadmin`'s queue refreshes, node changes and node labels."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from emu.errors import InputError
from emu.msg import types as P
from emu.resources import Resource
from emu.rm import node as node_sm
from emu.rm.scheduler.events import SchedulerEvent
from emu.rm.services.service import Refused, Service

CAPACITY_PREFIX = "yarn.scheduler.capacity."


class AdminService(Service):
    """The ResourceManagerAdministrationProtocol."""

    def refresh_queues(self, msg: dict[str, Any]) -> dict[str, Any]:
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
                return ctx.scheduler.refresh_from(path)
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

    def decommission_node(self, msg: dict[str, Any]) -> dict[str, Any]:
        node_id = msg["node_id"]
        if node_id not in self.ctx.nodes:
            raise Refused(P.NOT_FOUND, f"unknown or inactive node {node_id}")
        self.ctx.dispatch("node", node_sm.NodeEvent.DECOMMISSION, node_id)
        return P.reply(msg, ok=True)

    def update_node_resource(self, msg: dict[str, Any]) -> dict[str, Any]:
        node_id = msg["node_id"]
        if node_id not in self.ctx.nodes:
            raise Refused(P.NOT_FOUND, f"unknown or inactive node {node_id}")
        resource = Resource.from_wire(msg["resource"])
        if resource.any_negative():
            raise Refused(P.INVALID, f"negative resource {resource}")
        self.ctx.dispatch("node", node_sm.NodeEvent.RESOURCE_UPDATE, node_id, resource)
        return P.reply(msg, ok=True)

    # --- node labels ---------------------------------------------------------------
    def add_node_labels(self, msg: dict[str, Any]) -> dict[str, Any]:
        """addToClusterNodeLabels: `labels` as [name, exclusive] pairs."""
        labels = [(n, e) for n, e in _pairs(msg["labels"], "labels", str, bool)]
        ctx = self.ctx
        reason = ctx.scheduler.node_labels_admin("add", {"labels": labels})
        if reason is None:
            reason = ctx.node_labels.add(labels)
        if reason is None:
            # No node changes; the scheduler learns the labels (a partition
            # of no resource), as Hadoop's label manager holds them.
            ctx.dispatch("scheduler", SchedulerEvent.NODE_LABELS_UPDATE, "", {})
        return P.reply(msg, ok=reason is None, reason=reason)

    def remove_node_labels(self, msg: dict[str, Any]) -> dict[str, Any]:
        """removeFromClusterNodeLabels: `names`; nodes that had one of them
        go back to the default partition."""
        names = [str(n) for n in msg["names"]]
        ctx = self.ctx
        reason = ctx.scheduler.node_labels_admin("remove", {"names": names})
        if reason is None:
            reason, changed = ctx.node_labels.remove(names, ctx.scheduler.queue_using_label)
            if reason is None:
                self._relabel(changed, always=True)
        return P.reply(msg, ok=reason is None, reason=reason)

    def replace_labels_on_node(self, msg: dict[str, Any]) -> dict[str, Any]:
        """replaceLabelsOnNode: `mapping` as [node, label] pairs (node
        `host` or `host:port`, label "" for none); `fail_on_unknown` refuses
        nodes the RM has never seen (active or inactive)."""
        mapping = [(n, label) for n, label in _pairs(msg["mapping"], "mapping", str, str)]
        fail_on_unknown = bool(msg.get("fail_on_unknown"))
        ctx = self.ctx
        labels = ctx.node_labels
        reason = labels.unknown_nodes(mapping) if fail_on_unknown else None
        if reason is None:
            reason = ctx.scheduler.node_labels_admin("replace", {"mapping": mapping})
        if reason is None:
            reason, changed = labels.replace(mapping)
            if reason is None:
                self._relabel(changed)
        return P.reply(msg, ok=reason is None, reason=reason)

    def _relabel(self, changed: dict[str, str], always: bool = False) -> None:
        """The registered nodes whose label changed carry it, and the
        scheduler hears of it (NodeLabelsUpdateSchedulerEvent; `always`:
        even with no node changed, for the labels the cluster has)."""
        ctx = self.ctx
        changed = {n: label for n, label in changed.items() if n in ctx.nodes}
        for node_id, label in changed.items():
            ctx.nodes[node_id].labels = (label,) if label else ()
        if changed or always:
            ctx.dispatch("scheduler", SchedulerEvent.NODE_LABELS_UPDATE, "", changed)


def _pairs(items: list[Any], field: str, first: type, second: type) -> list[tuple[Any, Any]]:
    """A request's list of pairs, each checked for its two types."""
    out: list[tuple[Any, Any]] = []
    for item in items:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], first)
            or not isinstance(item[1], second)
        ):
            raise Refused(
                P.INVALID,
                f"{field}: expected [{first.__name__}, {second.__name__}] pairs, got {item!r}",
            )
        out.append((item[0], item[1]))
    return out
