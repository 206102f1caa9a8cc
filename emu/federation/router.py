"""The Router: the federation's client service (YARN's
FederationClientInterceptor).

Clients see one cluster. A new application id comes from a sub-cluster
drawn at random among the active ones (Hadoop's
`getRandomActiveSubCluster`); a submission goes to the home sub-cluster the
router policy chooses, retried on another (the one that failed
blacklisted) up to `yarn.router.submit.retry` times, and the app's home is
recorded in the state store; kills and reports go to the home. Listings
and metrics are the sub-clusters' merged: each app once, from its home
(its unmanaged AMs in other sub-clusters are the AMRMProxy's business),
metrics summed. A submission every policy refuses is kept as a FAILED app
with the policy's message, as emu's RM keeps an app it rejects, so the
replay goes on and every output says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from emu.federation.policies import Draws, Membership, PolicyError, PolicyFacade
from emu.msg import types as P
from emu.msg.types import Invalid, Map, Message
from emu.resources import MEMORY, VCORES
from emu.rm import app as app_sm
from emu.transport import Connection, TransportError

SUBMIT_RETRY = "yarn.router.submit.retry"
SUBMIT_RETRY_DEFAULT = 3
FORWARDED_TO_HOME = ("kill_application", "application_report")
UNAVAILABLE = "unavailable"
"""The error code of a request to a sub-cluster whose RM is down."""


@dataclass
class Routing:
    """The Router's decisions, for a run's outputs."""

    homes: dict[str, str] = field(default_factory=dict)
    """App id -> home sub-cluster, in submission order (the state store's)."""
    refused: dict[str, dict[str, Any]] = field(default_factory=dict)
    """App id -> the report of a submission no sub-cluster took."""
    retries: int = 0


class Router:
    """The client protocol over the sub-clusters' client services
    (`clients`, by sub-cluster id); `policies` says which router policy
    decides for a queue; each app's home is recorded in `homes` (the state
    store's)."""

    def __init__(
        self,
        clients: dict[str, Connection],
        policies: PolicyFacade,
        membership: Callable[[], Membership],
        draws: Draws,
        now_ms: Callable[[], int],
        retries: int = SUBMIT_RETRY_DEFAULT,
        homes: dict[str, str] | None = None,
    ) -> None:
        self.clients = clients
        self.policies = policies
        self.membership = membership
        self.draws = draws
        self.now_ms = now_ms
        self.retries = max(1, retries)
        self.routing = Routing(homes if homes is not None else {})
        self._id = 0
        self._last: dict[tuple[str, str, str], dict[str, Any]] = {}

    async def handle(self, message: Message) -> Message:
        if message.type == P.INVALID_TYPE:
            e = cast(Invalid, message).error
            return Map(P.error(e.code, e.message, e.request_id))
        msg = message.to_map()
        mtype = msg["type"]
        if mtype == "new_application":
            return await self._new_application(message, msg)
        if mtype == "submit_application":
            return Map(await self._submit(msg))
        if mtype in FORWARDED_TO_HOME:
            return await self._to_home(message, msg)
        if mtype == "list_apps":
            return Map(await self._list_apps(msg))
        if mtype == "cluster_metrics":
            return Map(await self._metrics(msg))
        if mtype == "list_nodes":
            nodes: list[dict[str, Any]] = []
            for sid in sorted(self.clients):
                nodes.extend((await self._latest(sid, "list_nodes")).get("nodes", []))
            return Map(P.reply(msg, nodes=nodes))
        return Map(P.error(P.WRONG_SERVICE, f"{mtype} is not served by the Router", msg.get("id")))

    async def _call(self, sid: str, mtype: str, **fields: Any) -> dict[str, Any]:
        """One request to sub-cluster `sid`'s client service; an RM that is
        down answers as a refused connection would (an error reply)."""
        self._id += 1
        return (await self._forward(sid, Map(P.request(mtype, self._id, **fields)))).to_map()

    async def _forward(self, sid: str, message: Message) -> Message:
        try:
            return await self.clients[sid].request(message)
        except TransportError as e:
            request_id = message.to_map().get("id")
            return Map(P.error(UNAVAILABLE, f"{sid}'s RM does not answer: {e}", request_id))

    async def _new_application(self, message: Message, msg: dict[str, Any]) -> Message:
        """An id from an active sub-cluster drawn at random, another drawn
        if it does not answer (up to the submit retries)."""
        active = self.membership().active_order()
        reply: Message = Map(P.error(P.NOT_FOUND, "No active SubCluster available", msg["id"]))
        for _ in range(min(len(active), self.retries)):
            sid = active[self.draws.facade.next_int(len(active))]
            reply = await self._forward(sid, message)
            if reply.type != "error":
                return reply
        return reply

    async def _submit(self, msg: dict[str, Any]) -> dict[str, Any]:
        app_id = msg["app_id"]
        blacklist: list[str] = []
        members = self.membership()
        tries = max(1, min(len(members.active), self.retries))
        why = ""
        for _ in range(tries):
            try:
                policy = self.policies.router(msg["queue"])
                home = policy.home(msg["queue"], None, members, blacklist)
            except PolicyError as e:
                why = str(e)
                break
            fields = {k: v for k, v in msg.items() if k not in ("type", "id")}
            reply = await self._call(home, "submit_application", **fields)
            if reply["type"] != "error":
                self.routing.homes[app_id] = home
                return P.reply(msg, app_id=app_id)
            why = f"{home}: {reply['message']}"
            blacklist.append(home)
            self.routing.retries += 1
        self.routing.refused[app_id] = self._refused_report(msg, why)
        return P.reply(msg, app_id=app_id)

    def _refused_report(self, msg: dict[str, Any], why: str) -> dict[str, Any]:
        now = self.now_ms()
        return {
            "app_id": msg["app_id"],
            "name": msg["name"],
            "queue": msg["queue"],
            "user": msg["user"],
            "state": app_sm.FAILED,
            "final_status": "FAILED",
            "submit_ms": now,
            "started_ms": -1,
            "finished_ms": now,
            "attempts": 0,
            "diagnostics": f"The Router could not place the application: {why}",
            "am_type": msg["am_type"],
            "preempted_am": 0,
            "preempted_non_am": 0,
            "unregistered_ms": -1,
        }

    async def _to_home(self, message: Message, msg: dict[str, Any]) -> Message:
        app_id = msg["app_id"]
        home = self.routing.homes.get(app_id)
        if home is None:
            refused = self.routing.refused.get(app_id)
            if refused is not None and msg["type"] == "application_report":
                return Map(P.reply(msg, report=refused))
            if refused is not None:
                return Map(P.reply(msg, killed=False))
            return Map(P.error(P.NOT_FOUND, f"unknown application {app_id}", msg["id"]))
        return await self._forward(home, message)

    async def _latest(self, sid: str, mtype: str, **fields: Any) -> dict[str, Any]:
        """A sub-cluster's answer, or while its RM is down the last it gave
        (a federated view keeps showing what it last knew of it)."""
        reply = await self._call(sid, mtype, **fields)
        key = (sid, mtype, repr(sorted(fields.items())))
        if reply["type"] == "error":
            return self._last.get(key, reply)
        self._last[key] = reply
        return reply

    async def _list_apps(self, msg: dict[str, Any]) -> dict[str, Any]:
        states = msg.get("states")
        apps: dict[str, dict[str, Any]] = {}
        homes = self.routing.homes
        for sid in sorted(self.clients):
            for report in (await self._latest(sid, "list_apps", states=states)).get("apps", []):
                if homes.get(report["app_id"]) == sid:
                    apps[report["app_id"]] = report
        for app_id, report in self.routing.refused.items():
            if not states or report["state"] in states:
                apps[app_id] = report
        return P.reply(msg, apps=[apps[a] for a in sorted(apps)])

    async def _metrics(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The sub-clusters' metrics summed (utilization weighted by each
        one's capacity); refused submissions count as submitted and failed."""
        parts = []
        for sid in sorted(self.clients):
            reply = await self._latest(sid, "cluster_metrics")
            if reply["type"] != "error":
                parts.append(reply["metrics"])
        merged = _sum(parts)
        merged["time_ms"] = self.now_ms()
        refused = len(self.routing.refused)
        merged["apps_submitted"] += refused
        merged["apps_failed"] += refused
        merged["utilization"] = _weighted_utilization(parts)
        merged["sub_clusters"] = len(parts)
        return P.reply(msg, metrics=merged)


def _sum(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Numbers summed key by key (nested maps too); other values from the first."""
    merged: dict[str, Any] = {}
    for part in parts:
        for k, v in part.items():
            if k not in merged:
                merged[k] = _sum([v]) if isinstance(v, dict) else v
            elif isinstance(v, bool):
                merged[k] = merged[k] or v
            elif isinstance(v, int | float):
                merged[k] += v
            elif isinstance(v, dict):
                merged[k] = _sum([merged[k], v])
    return merged


def _weighted_utilization(parts: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, amount in (("memory", MEMORY), ("vcores", VCORES)):
        total = sum(p["total"].get(amount, 0) for p in parts)
        weighted = sum(p["utilization"].get(key, 0.0) * p["total"].get(amount, 0) for p in parts)
        out[key] = weighted / total if total else 0.0
    return out
