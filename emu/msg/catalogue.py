"""The catalogue: every request type, who sends it to whom, its fields and
its reply's fields, with their types.

A message's map is `{"v": 1, "type": <name>, ...fields}`. Requests carry an
integer `id`; the reply echoes it and has type `<name>_reply`, or is an
error `{"type": "error", "id", "code", "message"}`. The codec
(`emu.msg.codec`) validates what arrives as bytes against it: unknown
fields are tolerated (a newer peer may add some), missing or ill-typed ones
are not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# --- field type descriptors --------------------------------------------------
# A descriptor is a Python type (int, str, float, bool, dict, list), `ANY`,
# `Opt(d)` (may be absent or None), `[d]` (a list of d), or a `Struct`.


class _Any:
    def __repr__(self) -> str:
        return "any"


ANY = _Any()


@dataclass(frozen=True)
class Opt:
    inner: Any


@dataclass(frozen=True)
class Struct:
    """A nested map with named fields (extra keys allowed)."""

    name: str
    fields: dict[str, Any]


RESOURCE = Struct("resource", {"memory-mb": int, "vcores": int})

CONTAINER_STATUS = Struct(
    "container_status",
    {"container_id": str, "state": str, "exit_status": int, "diagnostics": Opt(str)},
)
ASK = Struct(
    "ask",
    {
        "priority": int,
        "resource_name": str,
        "capability": RESOURCE,
        "num_containers": int,
        "relax_locality": bool,
    },
)
CONTAINER = Struct(
    "container",
    {
        "container_id": str,
        "node_id": str,
        "nm_address": str,
        "resource": RESOURCE,
        "priority": int,
    },
)
LAUNCH = Struct(
    "launch",
    {
        "container_id": str,
        "resource": RESOURCE,
        "duration_ms": int,
        "app_id": str,
        "am": Opt(dict),
    },
)
PREEMPTION = Struct("preemption", {"containers": [str]})
HEARTBEAT = Struct(
    "heartbeat",
    {
        "node_id": str,
        "response_id": int,
        "containers": [CONTAINER_STATUS],
        "healthy": bool,
        "health_report": Opt(str),
    },
)


@dataclass(frozen=True)
class Spec:
    """One request type: who sends it to whom, its fields and its reply's."""

    family: str
    sender: str
    receiver: str
    doc: str
    fields: dict[str, Any]
    reply: dict[str, Any]


RESOURCE_TRACKER = "resource_tracker"
AM_PROTOCOL = "am_protocol"
CONTAINER_MANAGEMENT = "container_management"
CLIENT = "client"
ADMIN = "admin"

CATALOGUE: dict[str, Spec] = {
    # ResourceTracker: NodeManager -> ResourceManager
    "register_node": Spec(
        RESOURCE_TRACKER,
        "NodeManager",
        "ResourceManager",
        "An NM joins (or rejoins after RESYNC) with its total resource and "
        "location; `containers` lists what it still runs. The reply fixes the "
        "heartbeat interval and the shared clock (epoch, rate).",
        {
            "node_id": str,
            "host": str,
            "rack": str,
            "resource": RESOURCE,
            "nm_address": str,
            "containers": [CONTAINER_STATUS],
            "labels": Opt([str]),
        },
        {"action": str, "next_heartbeat_ms": int, "epoch": float, "rate": float},
    ),
    "node_heartbeat": Spec(
        RESOURCE_TRACKER,
        "NodeManager",
        "ResourceManager",
        "The NM's periodic status: container statuses since the last one, and "
        "health. It is the only moment the RM places containers on the node.",
        {
            "node_id": str,
            "response_id": int,
            "containers": [CONTAINER_STATUS],
            "healthy": bool,
            "health_report": Opt(str),
        },
        {
            "response_id": int,
            "containers_to_cleanup": [str],
            "apps_to_cleanup": [str],
            "action": str,
            "next_heartbeat_ms": int,
        },
    ),
    "node_heartbeats": Spec(
        RESOURCE_TRACKER,
        "NodeManager",
        "ResourceManager",
        "Several nodes' heartbeats in one message: an NM process hosting many "
        "nodes sends those due at once together. Each is handled exactly as a "
        "`node_heartbeat` of its own, in order; `replies` holds, in the same "
        "order, each one's `node_heartbeat_reply` (or error) map. Only the "
        "per-message cost is shared: every node keeps its own state and schedule.",
        {"heartbeats": [HEARTBEAT]},
        {"replies": [dict]},
    ),
    "unregister_node": Spec(
        RESOURCE_TRACKER,
        "NodeManager",
        "ResourceManager",
        "An NM shutting down on purpose.",
        {"node_id": str},
        {},
    ),
    # ApplicationMasterProtocol: ApplicationMaster -> ResourceManager
    "register_am": Spec(
        AM_PROTOCOL,
        "ApplicationMaster",
        "ResourceManager",
        "The AM of an attempt announces itself; starts its liveness clock.",
        {"attempt_id": str, "host": str, "tracking_url": Opt(str)},
        {"max_capability": RESOURCE, "queue": str, "cluster_resource": RESOURCE},
    ),
    "allocate": Spec(
        AM_PROTOCOL,
        "ApplicationMaster",
        "ResourceManager",
        "Hands over asks (replacing earlier asks of the same priority and "
        "resource name), releases and blacklist changes, and collects what was "
        "allocated and completed since the last call. Also the AM's heartbeat.",
        {
            "attempt_id": str,
            "response_id": int,
            "asks": [ASK],
            "releases": [str],
            "blacklist_add": [str],
            "blacklist_remove": [str],
            "progress": float,
        },
        {
            "response_id": int,
            "allocated": [CONTAINER],
            "completed": [CONTAINER_STATUS],
            "available": RESOURCE,
            "num_cluster_nodes": int,
            "preemption": Opt(PREEMPTION),
            "command": Opt(str),
        },
    ),
    "finish_am": Spec(
        AM_PROTOCOL,
        "ApplicationMaster",
        "ResourceManager",
        "The AM unregisters with its final status; the app finishes once the AM container exits.",
        {"attempt_id": str, "final_status": str, "diagnostics": Opt(str)},
        {"unregistered": bool},
    ),
    # ContainerManagement: ApplicationMaster (or RM's AM launcher) -> NodeManager
    "start_containers": Spec(
        CONTAINER_MANAGEMENT,
        "ApplicationMaster / ResourceManager",
        "NodeManager",
        "Start allocated containers on a node. A container runs for "
        "`duration_ms` (-1: until stopped); one with an `am` launch context "
        "runs an ApplicationMaster.",
        {"node_id": str, "containers": [LAUNCH]},
        {"succeeded": [str], "failed": [Struct("failure", {"container_id": str, "reason": str})]},
    ),
    "stop_containers": Spec(
        CONTAINER_MANAGEMENT,
        "ApplicationMaster",
        "NodeManager",
        "Stop running containers on a node (the AM no longer needs them).",
        {"node_id": str, "container_ids": [str]},
        {"succeeded": [str], "failed": [Struct("failure", {"container_id": str, "reason": str})]},
    ),
    # ApplicationClientProtocol: client -> ResourceManager
    "new_application": Spec(
        CLIENT,
        "Client",
        "ResourceManager",
        "Reserve an application id.",
        {},
        {"app_id": str, "max_capability": RESOURCE},
    ),
    "submit_application": Spec(
        CLIENT,
        "Client",
        "ResourceManager",
        "Submit an application: queue, user, AM resource, and the context the "
        "AM is launched with (its task plan).",
        {
            "app_id": str,
            "name": str,
            "queue": str,
            "user": str,
            "priority": int,
            "am_resource": RESOURCE,
            "am_type": str,
            "context": dict,
            "unmanaged_am": Opt(bool),
        },
        {"app_id": str},
    ),
    "kill_application": Spec(
        CLIENT,
        "Client",
        "ResourceManager",
        "Kill an application.",
        {"app_id": str},
        {"killed": bool},
    ),
    "application_report": Spec(
        CLIENT,
        "Client",
        "ResourceManager",
        "One application's state, times and queue.",
        {"app_id": str},
        {"report": dict},
    ),
    "cluster_metrics": Spec(
        CLIENT,
        "Client",
        "ResourceManager",
        "Cluster-wide counts and resources, as YARN's cluster metrics.",
        {},
        {"metrics": dict},
    ),
    "list_nodes": Spec(
        CLIENT, "Client", "ResourceManager", "Every node's report.", {}, {"nodes": [dict]}
    ),
    "list_apps": Spec(
        CLIENT,
        "Client",
        "ResourceManager",
        "Every application's report, optionally only those in `states`.",
        {"states": Opt([str])},
        {"apps": [dict]},
    ),
    "queue_info": Spec(
        CLIENT,
        "Client",
        "ResourceManager",
        "A queue's configuration and usage (empty name: every queue).",
        {"queue": str},
        {"queues": [dict]},
    ),
    # Admin: operator -> ResourceManager
    "refresh_queues": Spec(
        ADMIN,
        "Admin",
        "ResourceManager",
        "Reload the scheduler's queue configuration: with neither field, from "
        "the RM's own files on disk (yarn rmadmin -refreshQueues); `properties` "
        "override the CapacityScheduler's; `allocations` is a FairScheduler "
        "allocation file's text. Refused with the reason if invalid; the old "
        "configuration keeps running.",
        {"properties": Opt(dict), "allocations": Opt(str)},
        {"ok": bool, "reason": Opt(str)},
    ),
    "decommission_node": Spec(
        ADMIN,
        "Admin",
        "ResourceManager",
        "Take a node out of service; it is told to SHUTDOWN at its next heartbeat.",
        {"node_id": str},
        {"ok": bool},
    ),
    "update_node_resource": Spec(
        ADMIN,
        "Admin",
        "ResourceManager",
        "Change a node's total resource at run time.",
        {"node_id": str, "resource": RESOURCE},
        {"ok": bool},
    ),
    "add_node_labels": Spec(
        ADMIN,
        "Admin",
        "ResourceManager",
        "Add labels to the cluster (yarn rmadmin -addToClusterNodeLabels): "
        "`labels` as [name, exclusive] pairs. Refused with Hadoop's reason.",
        {"labels": [list]},
        {"ok": bool, "reason": Opt(str)},
    ),
    "remove_node_labels": Spec(
        ADMIN,
        "Admin",
        "ResourceManager",
        "Remove labels from the cluster (yarn rmadmin -removeFromClusterNodeLabels); "
        "their nodes return to the default partition. Refused while a queue may use one.",
        {"names": [str]},
        {"ok": bool, "reason": Opt(str)},
    ),
    "replace_labels_on_node": Spec(
        ADMIN,
        "Admin",
        "ResourceManager",
        "Put labels on nodes (yarn rmadmin -replaceLabelsOnNode): `mapping` as "
        "[node, label] pairs, node `host` (every NM on it) or `host:port`, label "
        '"" for none; `fail_on_unknown` refuses nodes the RM has never seen.',
        {"mapping": [list], "fail_on_unknown": Opt(bool)},
        {"ok": bool, "reason": Opt(str)},
    ),
    "node_labels_report": Spec(
        CLIENT,
        "Client",
        "ResourceManager",
        "The cluster's labels as [name, exclusive] pairs, each label's registered "
        "nodes, and their total resource.",
        {},
        {"labels": [list], "nodes": dict, "resources": dict},
    ),
}

SERVICES: dict[str, frozenset[str]] = {
    family: frozenset(name for name, spec in CATALOGUE.items() if spec.family == family)
    for family in (RESOURCE_TRACKER, AM_PROTOCOL, CONTAINER_MANAGEMENT, CLIENT, ADMIN)
}

REPLY_FIELDS: dict[str, dict[str, Any]] = {f"{n}_reply": s.reply for n, s in CATALOGUE.items()}
ERROR_FIELDS: dict[str, Any] = {"code": str, "message": str}


def catalogue_markdown() -> str:
    """The catalogue as Markdown, for docs/protocol.md."""

    def fmt(desc: Any) -> str:
        if isinstance(desc, Opt):
            return f"{fmt(desc.inner)}?"
        if isinstance(desc, Struct):
            return desc.name
        if isinstance(desc, list):
            return f"[{fmt(desc[0])}]"
        if desc is ANY:
            return "any"
        name: str = desc.__name__
        return name

    lines = ["# emu protocol", "", "Generated from `emu/msg/catalogue.py`; do not edit.", ""]
    for family in SERVICES:
        lines += [f"## {family}", ""]
        for name, spec in CATALOGUE.items():
            if spec.family != family:
                continue
            req = ", ".join(f"`{k}`: {fmt(v)}" for k, v in spec.fields.items()) or "—"
            rep = ", ".join(f"`{k}`: {fmt(v)}" for k, v in spec.reply.items()) or "—"
            lines += [
                f"### `{name}` ({spec.sender} → {spec.receiver})",
                "",
                spec.doc,
                "",
                f"- request: {req}",
                f"- reply `{name}_reply`: {rep}",
                "",
            ]
    structs = [RESOURCE, CONTAINER_STATUS, ASK, CONTAINER, LAUNCH, PREEMPTION, HEARTBEAT]
    lines += ["## Structures", ""]
    for s in structs:
        body = ", ".join(f"`{k}`: {fmt(v)}" for k, v in s.fields.items())
        lines.append(f"- `{s.name}`: {body}")
    lines.append("")
    return "\n".join(lines)
