"""The codec: messages to msgpack bytes and back, validated against the catalogue.

Only a transport that carries bytes (ZeroMQ) uses it, at its boundary: in
one process messages are handed over as the objects they are. `decode`
checks every map against the catalogue (`emu.msg.catalogue`), so a
receiver can trust a decoded message's shape, and gives the message class
its type calls for (`emu.msg.types`). `CODEC` is what actors hand the
transport.
"""

from __future__ import annotations

from typing import Any

import msgpack

from emu.msg.catalogue import (
    ANY,
    CATALOGUE,
    ERROR_FIELDS,
    REPLY_FIELDS,
    Opt,
    Struct,
)
from emu.msg.types import (
    BAD_FIELD,
    BAD_FRAME,
    BAD_VERSION,
    UNKNOWN_TYPE,
    VERSION,
    Allocate,
    AllocateReply,
    Invalid,
    Map,
    Message,
    NodeHeartbeats,
    NodeHeartbeatsReply,
    ProtocolError,
    error,
)

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
    messages), compiled to one straight-line function rather than a loop
    over per-field closures: every message that arrives as bytes, each
    heartbeat batch and allocate over ZeroMQ among them, is checked."""
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
    **{name: _fast_fields(fields, False) for name, fields in REPLY_FIELDS.items()},
    "error": _fast_fields(ERROR_FIELDS, False),
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
    elif mtype in REPLY_FIELDS:
        fields = REPLY_FIELDS[mtype]
    elif mtype == "error":
        fields = ERROR_FIELDS
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


def encode(message: Message) -> bytes:
    """The msgpack bytes of a message (its catalogue map, with the version)."""
    data: bytes = msgpack.packb(message.to_map(), use_bin_type=True)
    return data


def decode(data: bytes) -> Message:
    """The validated message `data` encodes; ProtocolError if it is not one."""
    try:
        msg = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except Exception as e:
        raise ProtocolError(BAD_FRAME, f"undecodable frame: {type(e).__name__}") from None
    return from_map(validate(msg))


def decode_request(data: bytes) -> Message:
    """`decode` for a server: a malformed request becomes an `Invalid`
    message, which the receiver answers with its error."""
    try:
        return decode(data)
    except ProtocolError as e:
        return Invalid(e)


def from_map(msg: dict[str, Any]) -> Message:
    """The message object for a validated map."""
    mtype = msg["type"]
    if mtype == "node_heartbeats":
        return _heartbeats(msg)
    if mtype == "node_heartbeats_reply":
        return _heartbeats_reply(msg)
    if mtype == "allocate":
        return Allocate(
            msg["id"],
            msg["attempt_id"],
            msg["response_id"],
            msg["asks"],
            msg["releases"],
            msg["blacklist_add"],
            msg["blacklist_remove"],
            msg["progress"],
        )
    if mtype == "allocate_reply":
        return AllocateReply(
            msg["id"],
            msg["response_id"],
            msg["allocated"],
            msg["completed"],
            msg["available"],
            msg["num_cluster_nodes"],
            msg.get("preemption"),
            msg.get("command"),
        )
    return Map(msg)


def _heartbeats(msg: dict[str, Any]) -> NodeHeartbeats:
    entries = msg["heartbeats"]
    beats = [(hb["node_id"], hb["response_id"], hb["containers"]) for hb in entries]
    health = None
    if any(not hb["healthy"] or hb.get("health_report") for hb in entries):
        health = [(bool(hb["healthy"]), hb.get("health_report") or "") for hb in entries]
    return NodeHeartbeats(msg["id"], beats, health)


def _heartbeats_reply(msg: dict[str, Any]) -> NodeHeartbeatsReply:
    """Each entry checked as a message of its own; one that is not a
    `node_heartbeat_reply` or error becomes an error for its node alone."""
    replies: list[int | dict[str, Any]] = []
    for sub in msg["replies"]:
        try:
            validate({**sub, "v": VERSION})
        except ProtocolError as e:
            replies.append(error(e.code, e.message, msg["id"]))
            continue
        replies.append(sub)
    return NodeHeartbeatsReply(msg["id"], replies, 0)


class Codec:
    """The codec as the transport takes it (`emu.transport.Codec`)."""

    __slots__ = ()

    def encode(self, message: Message) -> bytes:
        """`encode`."""
        return encode(message)

    def decode(self, data: bytes) -> Message:
        """`decode`: raises ProtocolError for a malformed reply."""
        return decode(data)

    def decode_request(self, data: bytes) -> Message:
        """`decode_request`."""
        return decode_request(data)


CODEC = Codec()
