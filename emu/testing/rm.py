"""An RM core driven with protocol messages: no transports, no actors, no clock.

`RMHarness(conf)` builds the RM's context, scheduler and services from a
Configuration and hands them requests the way the transports would (each
message goes through the wire encoding and back). A test plays the NMs and
AMs by hand: `add_node`, `heartbeat`, `submit`, `start_am`, `allocate`. AM
launches the RM asks for succeed at once and are kept in `launches`.
"""

from __future__ import annotations

from typing import Any

from emu.config.configuration import Configuration
from emu.metrics.eventlog import EventLog
from emu.msg import catalogue as C
from emu.msg import codec
from emu.msg import types as P
from emu.rm.context import RMContext
from emu.rm.scheduler import create
from emu.rm.services import RMServices
from emu.rm.settings import RMSettings


class RMHarness:
    def __init__(self, conf: Configuration) -> None:
        self.ctx = RMContext(RMSettings.from_conf(conf), conf, EventLog())
        self.ctx.attach_scheduler(create(self.ctx))
        self.services = RMServices(self.ctx)
        self._id = 0
        self.launches: list[tuple[str, str, dict]] = []

    def call(self, service: str, mtype: str, **fields: Any) -> dict:
        self._id += 1
        msg = codec.decode(codec.encode(P.Map(P.request(mtype, self._id, **fields)))).to_map()
        reply = self.services.handle(service, msg)
        for launch in self.services.take_am_launches():
            self.launches.append(launch)
            self.services.am_launch_result(launch[2]["am"]["attempt_id"], None)
        return reply

    def add_node(
        self,
        host: str,
        rack: str = "/r1",
        memory: int = 8192,
        vcores: int = 8,
        labels: tuple[str, ...] = (),
    ) -> None:
        extra = {"labels": list(labels)} if labels else {}
        self.call(
            C.RESOURCE_TRACKER, "register_node", node_id=host, host=host, rack=rack,
            resource={"memory-mb": memory, "vcores": vcores}, nm_address="mem://nm",
            containers=[], **extra,
        )  # fmt: skip

    def heartbeat(self, host: str, statuses: list[dict] | None = None) -> dict:
        node = self.ctx.nodes[host]
        return self.call(
            C.RESOURCE_TRACKER, "node_heartbeat", node_id=host, response_id=node.response_id,
            containers=statuses or [], healthy=True,
        )  # fmt: skip

    def submit(self, name: str, queue: str = "default", user: str = "u", memory: int = 1024) -> str:
        app_id = self.call(C.CLIENT, "new_application")["app_id"]
        self.call(
            C.CLIENT, "submit_application", app_id=app_id, name=name, queue=queue, user=user,
            priority=0, am_resource={"memory-mb": memory, "vcores": 1}, am_type="mapreduce",
            context={},
        )  # fmt: skip
        return app_id

    def attempt(self, app_id: str) -> str:
        return self.ctx.apps[app_id].attempts[-1]

    def start_am(self, app_id: str, host: str) -> None:
        """A heartbeat from `host` places (and the harness launches) the
        app's AM container there; the AM then registers."""
        self.heartbeat(host)
        self.register_am(app_id)

    def register_am(self, app_id: str) -> None:
        self.call(C.AM_PROTOCOL, "register_am", attempt_id=self.attempt(app_id), host="h")

    def allocate(self, app_id: str, asks: list[dict] | None = None, releases=()) -> dict:
        a = self.ctx.attempts[self.attempt(app_id)]
        return self.call(
            C.AM_PROTOCOL, "allocate", attempt_id=a.attempt_id, response_id=a.response_id,
            asks=asks or [], releases=list(releases), blacklist_add=[], blacklist_remove=[],
            progress=0.0,
        )  # fmt: skip
