"""A client of the RM's client and admin services (YARN's YarnClient and
rmadmin), used by the replayer, the CLI and tests."""

from __future__ import annotations

from typing import Any

from emu.msg.types import Map, request
from emu.transport import Connection, request_timeout


class RMRequestError(Exception):
    """The RM answered a request with an error reply."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class RMClient:
    """Request/reply calls over an open connection to a client or admin service.
    Over a network a request unanswered for `timeout` simulated seconds raises
    RequestTimeout rather than waiting forever."""

    def __init__(self, conn: Connection, timeout: float = 60.0) -> None:
        self.conn = conn
        self.timeout = request_timeout(conn.address, timeout)
        self._id = 0

    async def call(self, mtype: str, **fields: Any) -> dict[str, Any]:
        self._id += 1
        answer = await self.conn.request(Map(request(mtype, self._id, **fields)), self.timeout)
        reply: dict[str, Any] = answer.to_map()
        if reply["type"] == "error":
            raise RMRequestError(reply["code"], reply["message"])
        return reply

    async def list_apps(self, states: list[str] | None = None) -> list[dict[str, Any]]:
        return (await self.call("list_apps", states=states))["apps"]

    async def cluster_metrics(self) -> dict[str, Any]:
        return (await self.call("cluster_metrics"))["metrics"]

    async def list_nodes(self) -> list[dict[str, Any]]:
        return (await self.call("list_nodes"))["nodes"]
