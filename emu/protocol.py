"""The wire protocol: every message emu's actors exchange, in one catalogue.

A message is a msgpack map `{"v": 1, "type": <name>, ...fields}`. Requests
carry an integer `id`; the reply echoes it and has type `<name>_reply`, or is
an error `{"type": "error", "id", "code", "message"}`. Over ZeroMQ the
bytes travel; in one process (`mem://`) actors send `frame(msg)`, a `Frame`
that the in-process transport hands over as it is, so neither side pays for
msgpack while the receiver still validates the map (see `Frame`).

`CATALOGUE` maps each request type to its `Spec`: who sends it to whom, the
request's fields and the reply's fields, with their types. `decode` validates
against it, so every actor can trust a decoded message's shape; unknown
fields are tolerated (a newer peer may add some), missing or ill-typed ones
are not.

This module imports nothing from emu: every actor depends on it, it depends on
no actor.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, SupportsBytes

import msgpack

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


class ProtocolError(Exception):
    """A message that does not fit the catalogue; `code` is the error code."""

    def __init__(self, code: str, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


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
}

SERVICES: dict[str, frozenset[str]] = {
    family: frozenset(name for name, spec in CATALOGUE.items() if spec.family == family)
    for family in (RESOURCE_TRACKER, AM_PROTOCOL, CONTAINER_MANAGEMENT, CLIENT, ADMIN)
}

_REPLY_FIELDS: dict[str, dict[str, Any]] = {f"{n}_reply": s.reply for n, s in CATALOGUE.items()}
_ERROR_FIELDS = {"code": str, "message": str}


# --- validation ----------------------------------------------------------------


def _check(value: Any, desc: Any, path: str) -> None:
    if desc is ANY:
        return
    if isinstance(desc, Opt):
        if value is not None:
            _check(value, desc.inner, path)
        return
    if isinstance(desc, Struct):
        if not isinstance(value, dict):
            raise ProtocolError(BAD_FIELD, f"{path}: expected a {desc.name} map")
        _check_fields(value, desc.fields, path + ".")
        return
    if isinstance(desc, list):
        if not isinstance(value, list):
            raise ProtocolError(BAD_FIELD, f"{path}: expected a list")
        inner = desc[0]
        if inner in (str, int):
            for i, item in enumerate(value):
                if type(item) is not inner:
                    raise ProtocolError(BAD_FIELD, f"{path}[{i}]: expected {inner.__name__}")
        else:
            for i, item in enumerate(value):
                _check(item, inner, f"{path}[{i}]")
        return
    if desc is float:
        if type(value) not in (float, int):
            raise ProtocolError(BAD_FIELD, f"{path}: expected a number")
        return
    if desc is int:
        if type(value) is not int:
            raise ProtocolError(BAD_FIELD, f"{path}: expected int")
        return
    if not isinstance(value, desc):
        raise ProtocolError(BAD_FIELD, f"{path}: expected {desc.__name__}")


def _check_fields(msg: dict[str, Any], fields: dict[str, Any], prefix: str = "") -> None:
    for name, desc in fields.items():
        if name not in msg:
            if isinstance(desc, Opt):
                continue
            raise ProtocolError(BAD_FIELD, f"missing field {prefix}{name}")
        _check(msg[name], desc, prefix + name)


_MISSING = object()


def _all_of(kind: type) -> Any:
    def every(v: list[Any]) -> bool:
        return all(type(x) is kind for x in v)

    return every


def _each(pred: Any) -> Any:
    def every(v: list[Any]) -> bool:
        return all(pred(x) for x in v)

    return every


def _failing(desc: Any, env: dict[str, Any]) -> str:
    """A Python expression, true when the value `v` does not fit `desc`
    (never for `ANY`); helpers it calls are added to `env`."""
    if desc is ANY:
        return "False"
    if isinstance(desc, Opt):
        return f"(v is not None and ({_failing(desc.inner, env)}))"
    if isinstance(desc, Struct):
        name = env["_name"](_fast_fields(desc.fields, True))
        return f"not {name}(v)"
    if isinstance(desc, list):
        item = desc[0]
        every = _all_of(item) if item in (str, int) else _each(_fast(item))
        return f"(type(v) is not list or (v and not {env['_name'](every)}(v)))"
    if desc is float:
        return "(type(v) is not float and type(v) is not int)"
    if desc in (int, str):
        return f"type(v) is not {env['_name'](desc)}"
    return f"not isinstance(v, {env['_name'](desc)})"


def _fast(desc: Any) -> Any:
    """A predicate equivalent to `_check` for `desc`, without error messages:
    the hot path only needs yes or no; `_check` explains a no."""
    env: dict[str, Any] = {}
    _namer(env)
    source = f"def ok(v):\n    return not ({_failing(desc, env)})\n"
    exec(source, env)
    return env["ok"]


def _namer(env: dict[str, Any]) -> None:
    def name(obj: Any) -> str:
        key = f"_h{len(env)}"
        env[key] = obj
        return key

    env["_name"] = name
    env["_MISSING"] = _MISSING


def _fast_fields(fields: dict[str, Any], check_map: bool) -> Any:
    """A predicate for a map with `fields` (`_check_fields` without the
    messages), compiled to one straight-line function: every message is
    checked on receipt, so this is on the path of each heartbeat and
    allocate, and a loop over per-field closures costs several times more."""
    env: dict[str, Any] = {}
    _namer(env)
    lines = ["def ok(m):"]
    if check_map:
        lines.append("    if type(m) is not dict: return False")
    for name, desc in fields.items():
        if isinstance(desc, Opt):
            if desc.inner is ANY:
                continue
            lines.append(f"    v = m.get({name!r})")
            lines.append(f"    if v is not None and ({_failing(desc.inner, env)}): return False")
        else:
            lines.append(f"    v = m.get({name!r}, _MISSING)")
            lines.append(f"    if v is _MISSING or ({_failing(desc, env)}): return False")
    lines.append("    return True")
    exec("\n".join(lines) + "\n", env)
    return env["ok"]


_FAST: dict[str, Any] = {
    **{name: _fast_fields(spec.fields, False) for name, spec in CATALOGUE.items()},
    **{name: _fast_fields(fields, False) for name, fields in _REPLY_FIELDS.items()},
    "error": _fast_fields(_ERROR_FIELDS, False),
}


def validate(msg: Any) -> dict[str, Any]:
    """Check a decoded map against the catalogue; return it or raise."""
    if not isinstance(msg, dict):
        raise ProtocolError(BAD_FRAME, "message is not a map")
    rid = msg.get("id")
    rid = rid if type(rid) is int else None
    if msg.get("v") != VERSION:
        raise ProtocolError(BAD_VERSION, f"unsupported version {msg.get('v')!r}", rid)
    mtype: Any = msg.get("type")
    spec = CATALOGUE.get(mtype) if isinstance(mtype, str) else None
    if spec is not None:
        fields = spec.fields
        if rid is None:
            raise ProtocolError(BAD_FIELD, "missing field id", None)
    elif mtype in _REPLY_FIELDS:
        fields = _REPLY_FIELDS[mtype]
    elif mtype == "error":
        fields = _ERROR_FIELDS
    else:
        raise ProtocolError(UNKNOWN_TYPE, f"unknown message type {mtype!r}", rid)
    if _FAST[mtype](msg):
        return msg
    try:
        _check_fields(msg, fields)
    except ProtocolError as e:
        e.request_id = rid
        e.message = f"{mtype}: {e.message}"
        raise
    return msg


def encode(msg: dict[str, Any]) -> bytes:
    """Bytes for a message map (adds the version)."""
    msg["v"] = VERSION
    data: bytes = msgpack.packb(msg, use_bin_type=True)
    return data


class Frame:
    """A message map on its way to a receiver, not yet (maybe never) encoded.

    `bytes(frame)` is its msgpack encoding, so a transport that must send
    bytes (ZeroMQ) gets exactly what `encode` gives; the in-process transport
    hands the frame itself over and `decode` validates the map it carries, as
    it would a decoded one. The sender and the receiver then hold the same
    objects: a sender builds each message afresh and leaves it alone once
    sent, a receiver copies what it means to change.
    """

    __slots__ = ("msg",)

    def __init__(self, msg: dict[str, Any]) -> None:
        self.msg = msg

    def __bytes__(self) -> bytes:
        data: bytes = msgpack.packb(self.msg, use_bin_type=True)
        return data


# Off with the scheduler shortcuts (EMU_SHORTCUTS=0, emu.rm.scheduler.shortcuts),
# which also switch it for a run.
_frames = os.environ.get("EMU_SHORTCUTS", "1") != "0"


def set_frames(on: bool) -> bool:
    """Whether `frame` skips encoding (on by default); off, every message is
    encoded and decoded as bytes even in one process. Returns the setting it
    replaces, for a caller to put back."""
    global _frames
    before, _frames = _frames, on
    return before


def frame(msg: dict[str, Any]) -> Frame | bytes:
    """What an actor sends for a message map (adds the version): a `Frame`,
    or its bytes when frames are off."""
    msg["v"] = VERSION
    if _frames:
        return Frame(msg)
    data: bytes = msgpack.packb(msg, use_bin_type=True)
    return data


class Heartbeats:
    """A `node_heartbeats` request from an NM host to the RM in the same
    process, in its lean form: each entry `(node_id, response_id,
    statuses)` of a healthy node without a health report (what an emu NM
    sends), and no map per node. The RM in this process handles the tuples
    as they are; `bytes()` is exactly the catalogue's message (as `frame`
    of `request("node_heartbeats", ...)` would encode it) and `decode` gives
    that message validated, so any other receiver sees a plain
    `node_heartbeats`."""

    __slots__ = ("beats", "request_id")

    def __init__(self, request_id: int, beats: list[tuple[str, int, list[dict[str, Any]]]]):
        self.request_id = request_id
        self.beats = beats

    def to_msg(self) -> dict[str, Any]:
        """The catalogue's `node_heartbeats` map (with the version)."""
        return {
            "heartbeats": [
                {"node_id": n, "response_id": r, "containers": s, "healthy": True}
                for n, r, s in self.beats
            ],
            "type": "node_heartbeats",
            "id": self.request_id,
            "v": VERSION,
        }

    def __bytes__(self) -> bytes:
        data: bytes = msgpack.packb(self.to_msg(), use_bin_type=True)
        return data


class HeartbeatReplies:
    """The RM's answer to a lean `Heartbeats`, in the same process: one
    entry per heartbeat, in order, each either an int, the new response id
    of the common reply (NORMAL, nothing to clean up, next heartbeat in
    `next_heartbeat_ms`), or the reply map itself (RESYNC, SHUTDOWN,
    cleanup, errors). `bytes()` and `decode` give the catalogue's
    `node_heartbeats_reply`, every int spelled out as its map."""

    __slots__ = ("next_heartbeat_ms", "replies", "request_id")

    def __init__(
        self, request_id: int, replies: list[int | dict[str, Any]], next_heartbeat_ms: int
    ) -> None:
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

    def to_msg(self) -> dict[str, Any]:
        """The catalogue's `node_heartbeats_reply` map (with the version)."""
        return {
            "replies": [self.entry(r) for r in self.replies],
            "type": "node_heartbeats_reply",
            "id": self.request_id,
            "v": VERSION,
        }

    def __bytes__(self) -> bytes:
        data: bytes = msgpack.packb(self.to_msg(), use_bin_type=True)
        return data


def heartbeats(
    request_id: int, beats: list[tuple[str, int, list[dict[str, Any]]]]
) -> Heartbeats | bytes:
    """What an NM host sends for a batch of heartbeats: the lean
    `Heartbeats`, or its bytes when frames are off (as `frame`)."""
    batch = Heartbeats(request_id, beats)
    return batch if _frames else bytes(batch)


class IdleAllocate:
    """An `allocate` from an AM in the same process that hands over nothing
    (no asks, releases or blacklist change): the AM's heartbeat, most of an
    AM's calls once its asks are stated. The RM in this process answers it
    without a request map; `bytes()` is exactly the catalogue's `allocate`
    (as `frame` of `request("allocate", ...)` would encode it) and `decode`
    gives that message validated, so any other receiver sees a plain
    `allocate`."""

    __slots__ = ("attempt_id", "progress", "request_id", "response_id")

    def __init__(self, request_id: int, attempt_id: str, response_id: int, progress: float):
        self.request_id = request_id
        self.attempt_id = attempt_id
        self.response_id = response_id
        self.progress = progress

    def to_msg(self) -> dict[str, Any]:
        """The catalogue's `allocate` map (with the version)."""
        return {
            "attempt_id": self.attempt_id,
            "response_id": self.response_id,
            "asks": [],
            "releases": [],
            "blacklist_add": [],
            "blacklist_remove": [],
            "progress": self.progress,
            "type": "allocate",
            "id": self.request_id,
            "v": VERSION,
        }

    def __bytes__(self) -> bytes:
        data: bytes = msgpack.packb(self.to_msg(), use_bin_type=True)
        return data


class IdleAllocateReply:
    """The RM's answer to an allocate, in the same process, when it has
    nothing for the AM either (no container allocated or completed, no
    preemption, no command): the new response id and the headroom.
    `available` is kept as the resource it was computed as and put on the
    wire only if the reply is (`to_msg`). `bytes()` and `decode` give the
    catalogue's `allocate_reply`."""

    __slots__ = ("available", "num_cluster_nodes", "request_id", "response_id")

    def __init__(
        self, request_id: int, response_id: int, available: Any, num_cluster_nodes: int
    ) -> None:
        self.request_id = request_id
        self.response_id = response_id
        self.available = available
        """The headroom, anything with `to_wire()` (an `emu.resources.Resource`)."""
        self.num_cluster_nodes = num_cluster_nodes

    def reply_map(self) -> dict[str, Any]:
        """The `allocate_reply` map it stands for, as `reply` builds it."""
        return {
            "response_id": self.response_id,
            "allocated": [],
            "completed": [],
            "available": self.available.to_wire(),
            "num_cluster_nodes": self.num_cluster_nodes,
            "preemption": None,
            "command": None,
            "type": "allocate_reply",
            "id": self.request_id,
        }

    def to_msg(self) -> dict[str, Any]:
        """The catalogue's `allocate_reply` map (with the version)."""
        msg = self.reply_map()
        msg["v"] = VERSION
        return msg

    def __bytes__(self) -> bytes:
        data: bytes = msgpack.packb(self.to_msg(), use_bin_type=True)
        return data


def lean(message: IdleAllocate | IdleAllocateReply) -> IdleAllocate | IdleAllocateReply | bytes:
    """What an actor sends for a lean in-process message: the object, or
    its bytes when frames are off (as `frame`)."""
    return message if _frames else bytes(message)


def decode(data: bytes | SupportsBytes) -> dict[str, Any]:
    """A validated message map from bytes, a `Frame` or a lean in-process
    message (heartbeat batch, idle allocate, or their replies);
    ProtocolError if it is not one."""
    if type(data) is Frame:
        return validate(data.msg)
    if (
        type(data) is Heartbeats
        or type(data) is HeartbeatReplies
        or type(data) is IdleAllocate
        or type(data) is IdleAllocateReply
    ):
        return validate(data.to_msg())
    try:
        msg = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except Exception as e:
        raise ProtocolError(BAD_FRAME, f"undecodable frame: {type(e).__name__}") from None
    return validate(msg)


def request(mtype: str, request_id: int, **fields: Any) -> dict[str, Any]:
    """A request map of a catalogue type."""
    if mtype not in CATALOGUE:
        raise KeyError(mtype)
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

    lines = ["# emu protocol", "", "Generated from `emu/protocol.py`; do not edit.", ""]
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
