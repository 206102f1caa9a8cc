"""The messages emu's actors exchange, as objects.

Every message is a `Message`: its `type` is its catalogue name
(`emu.msg.catalogue`) and `to_map()` its catalogue map, the form the codec
(`emu.msg.codec`) encodes. The messages every node and every AM send once a
heartbeat have classes of their own, with fields rather than a map:
`NodeHeartbeats` and `NodeHeartbeatsReply`, `Allocate` and `AllocateReply`.
Every other message (registrations, container management, client and admin
calls, error replies) is a `Map`, the catalogue map itself.

An actor builds a message and hands it to the transport; in one process the
receiver gets that very object, over ZeroMQ a decoded equal one. A sender
builds each message afresh and leaves it alone once sent; a receiver copies
what it means to change.

This module imports nothing from emu: every actor depends on it.
"""

from __future__ import annotations

from typing import Any

VERSION = 1

# Error codes carried by error replies.
BAD_FRAME = "bad_frame"
BAD_VERSION = "bad_version"
UNKNOWN_TYPE = "unknown_type"
BAD_FIELD = "bad_field"
WRONG_SERVICE = "wrong_service"
NOT_FOUND = "not_found"
INVALID = "invalid"
# An ask the scheduler can never grant (YARN's InvalidResourceRequestException):
# the AM fails its application with the message.
INVALID_RESOURCE_REQUEST = "invalid_resource_request"
INTERNAL = "internal"

# Node actions and AM commands, as in YARN's NodeAction / AMCommand.
NORMAL, RESYNC, SHUTDOWN = "NORMAL", "RESYNC", "SHUTDOWN"

# Container exit statuses, as YARN's ContainerExitStatus.
EXIT_SUCCESS = 0
EXIT_INVALID = -1000
EXIT_ABORTED = -100
EXIT_PREEMPTED = -102
EXIT_DISKS_FAILED = -101
EXIT_KILLED_BY_RM = -106
EXIT_KILLED_BY_AM = -105
EXIT_KILLED_EXPIRED = -107

INVALID_TYPE = "invalid"
"""The `type` of an `Invalid` message: a request that could not be read."""


class ProtocolError(Exception):
    """A message that does not fit the catalogue; `code` is the error code."""

    def __init__(self, code: str, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


class Message:
    """Any message: `type` names it in the catalogue, and its class (a
    message of one type always has the same class)."""

    __slots__ = ("type",)

    def __init__(self, mtype: str) -> None:
        self.type = mtype

    def to_map(self) -> dict[str, Any]:
        """The catalogue map, with the version: what goes on the wire."""
        raise NotImplementedError


class Map(Message):
    """A message held as its catalogue map (`msg`, without the version
    until `to_map` adds it)."""

    __slots__ = ("msg",)

    def __init__(self, msg: dict[str, Any]) -> None:
        super().__init__(msg["type"])
        self.msg = msg

    def to_map(self) -> dict[str, Any]:
        msg = self.msg
        msg["v"] = VERSION
        return msg


class Invalid(Message):
    """A request the codec could not read (undecodable, unknown version or
    type, a missing or ill-typed field): the receiver answers it with the
    error reply `error` describes. Never sent."""

    __slots__ = ("error",)

    def __init__(self, error: ProtocolError) -> None:
        super().__init__(INVALID_TYPE)
        self.error = error

    def to_map(self) -> dict[str, Any]:
        return {**error(self.error.code, self.error.message, self.error.request_id), "v": VERSION}


Beat = tuple[str, int, list[dict[str, Any]]]
"""One node's heartbeat in a `NodeHeartbeats`: node id, response id, container statuses."""


class NodeHeartbeats(Message):
    """`node_heartbeats`: the heartbeats of the nodes an NM host has due at
    once, one `Beat` tuple each, handled by the RM in order, each as a
    heartbeat of its own. `health` is None when every node is healthy
    without a report (an emu NM's); otherwise (healthy, report) per beat."""

    __slots__ = ("beats", "health", "request_id")

    def __init__(
        self,
        request_id: int,
        beats: list[Beat],
        health: list[tuple[bool, str]] | None = None,
    ) -> None:
        super().__init__("node_heartbeats")
        self.request_id = request_id
        self.beats = beats
        self.health = health

    def to_map(self) -> dict[str, Any]:
        entries = [
            {"node_id": n, "response_id": r, "containers": s, "healthy": True}
            for n, r, s in self.beats
        ]
        if self.health is not None:
            for entry, (healthy, report) in zip(entries, self.health, strict=True):
                entry["healthy"] = healthy
                if report:
                    entry["health_report"] = report
        return {"heartbeats": entries, "type": self.type, "id": self.request_id, "v": VERSION}


class NodeHeartbeatsReply(Message):
    """`node_heartbeats_reply`: one entry per heartbeat, in order, each
    either an int, the new response id of the common reply (NORMAL,
    nothing to clean up, next heartbeat in `next_heartbeat_ms`), or the
    `node_heartbeat_reply` (or error) map itself."""

    __slots__ = ("next_heartbeat_ms", "replies", "request_id")

    def __init__(
        self, request_id: int, replies: list[int | dict[str, Any]], next_heartbeat_ms: int
    ) -> None:
        super().__init__("node_heartbeats_reply")
        self.request_id = request_id
        self.replies = replies
        self.next_heartbeat_ms = next_heartbeat_ms

    def entry(self, reply: int | dict[str, Any]) -> dict[str, Any]:
        """One entry as the reply map it stands for."""
        if isinstance(reply, dict):
            return reply
        return {
            "response_id": reply,
            "containers_to_cleanup": [],
            "apps_to_cleanup": [],
            "action": NORMAL,
            "next_heartbeat_ms": self.next_heartbeat_ms,
            "type": "node_heartbeat_reply",
            "id": self.request_id,
        }

    def to_map(self) -> dict[str, Any]:
        return {
            "replies": [self.entry(r) for r in self.replies],
            "type": self.type,
            "id": self.request_id,
            "v": VERSION,
        }


class Allocate(Message):
    """`allocate`: an AM hands over asks, releases and blacklist changes
    (all empty in most calls: then it is only the AM's heartbeat) and
    collects what the RM has for it."""

    __slots__ = (
        "asks",
        "attempt_id",
        "blacklist_add",
        "blacklist_remove",
        "progress",
        "releases",
        "request_id",
        "response_id",
    )

    def __init__(
        self,
        request_id: int,
        attempt_id: str,
        response_id: int,
        asks: list[dict[str, Any]],
        releases: list[str],
        blacklist_add: list[str],
        blacklist_remove: list[str],
        progress: float,
    ) -> None:
        super().__init__("allocate")
        self.request_id = request_id
        self.attempt_id = attempt_id
        self.response_id = response_id
        self.asks = asks
        self.releases = releases
        self.blacklist_add = blacklist_add
        self.blacklist_remove = blacklist_remove
        self.progress = progress

    def to_map(self) -> dict[str, Any]:
        return {
            "attempt_id": self.attempt_id,
            "response_id": self.response_id,
            "asks": self.asks,
            "releases": self.releases,
            "blacklist_add": self.blacklist_add,
            "blacklist_remove": self.blacklist_remove,
            "progress": self.progress,
            "type": self.type,
            "id": self.request_id,
            "v": VERSION,
        }


class AllocateReply(Message):
    """`allocate_reply`: the containers allocated and completed since the
    AM's last call, the headroom, and a command (RESYNC, SHUTDOWN) or None.
    `available` is the headroom as the RM computed it (anything with
    `to_wire()`, an `emu.resources.Resource`) or its wire map: it is put
    on the wire only if the reply is."""

    __slots__ = (
        "allocated",
        "available",
        "command",
        "completed",
        "num_cluster_nodes",
        "preemption",
        "request_id",
        "response_id",
    )

    def __init__(
        self,
        request_id: int,
        response_id: int,
        allocated: list[dict[str, Any]],
        completed: list[dict[str, Any]],
        available: Any,
        num_cluster_nodes: int,
        preemption: dict[str, Any] | None = None,
        command: str | None = None,
    ) -> None:
        super().__init__("allocate_reply")
        self.request_id = request_id
        self.response_id = response_id
        self.allocated = allocated
        self.completed = completed
        self.available = available
        self.num_cluster_nodes = num_cluster_nodes
        self.preemption = preemption
        self.command = command

    def answering(self, request_id: int) -> AllocateReply:
        """The same reply to another request (a repeated call)."""
        return AllocateReply(
            request_id,
            self.response_id,
            self.allocated,
            self.completed,
            self.available,
            self.num_cluster_nodes,
            self.preemption,
            self.command,
        )

    def to_map(self) -> dict[str, Any]:
        available = self.available
        return {
            "response_id": self.response_id,
            "allocated": self.allocated,
            "completed": self.completed,
            "available": available if isinstance(available, dict) else available.to_wire(),
            "num_cluster_nodes": self.num_cluster_nodes,
            "preemption": self.preemption,
            "command": self.command,
            "type": self.type,
            "id": self.request_id,
            "v": VERSION,
        }


def request(mtype: str, request_id: int, **fields: Any) -> dict[str, Any]:
    """A request map (type and id added to `fields`)."""
    fields["type"] = mtype
    fields["id"] = request_id
    return fields


def reply(req: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The reply map to a request."""
    fields["type"] = req["type"] + "_reply"
    fields["id"] = req["id"]
    return fields


def error(code: str, message: str, request_id: int | None = None) -> dict[str, Any]:
    """An error reply map."""
    return {"type": "error", "id": request_id, "code": code, "message": message}
