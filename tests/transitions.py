"""An RM core whose dispatcher records instead of handling, for transition
tests in the manner of Hadoop's TestRMAppTransitions/TestRMNodeTransitions:
put an entity in a state, fire one event at it, then assert the state after
and exactly the events its hook raised (the side effects other entities and
the scheduler would see)."""

from __future__ import annotations

import io
import json
from typing import Any

from emu.config.configuration import Configuration
from emu.metrics.eventlog import EventLog
from emu.resources import Resource
from emu.rm.app import RMApp
from emu.rm.attempt import RMAppAttempt
from emu.rm.context import RMContext
from emu.rm.dispatcher import Dispatcher, Event
from emu.rm.enums import AppState, AttemptState, NodeState
from emu.rm.node import RMNode
from emu.rm.scheduler import create
from emu.rm.settings import RMSettings

KINDS = ("app", "attempt", "container", "node", "scheduler")


class Bench:
    """One RMContext (FIFO scheduler attached for its limits) whose raised
    events are kept, in order, in `raised` rather than handled."""

    def __init__(self, **properties: str) -> None:
        conf = Configuration()
        for name, value in properties.items():
            conf.set(name, value, "test")
        self.log = io.StringIO()
        self.ctx = RMContext(RMSettings.from_conf(conf), conf, EventLog(self.log))
        self.ctx.attach_scheduler(create(self.ctx))
        self.ctx.dispatcher = Dispatcher()
        self.raised: list[Event] = []
        for kind in KINDS:
            self.ctx.dispatcher.register(kind, self.raised.append)

    def fire(self, kind: str, entity: Any, event: str, data: Any = None) -> bool:
        """Apply `event` now, then collect what its hook dispatched."""
        ok = self.ctx.fire(kind, entity, event, data)
        self.ctx.dispatcher.drain()
        return ok

    def events(self) -> list[tuple[str, str, str]]:
        return [(e.kind, e.type, e.target) for e in self.raised]

    def logged(self, kind: str) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in self.log.getvalue().splitlines()]
        return [rec for rec in lines if rec["event"] == kind]

    def attempt(self, app: RMApp, state: AttemptState, counts_as_failure: bool = True) -> str:
        """Give `app` one more attempt, already in `state`."""
        number = len(app.attempts) + 1
        attempt_id = f"appattempt_0_{app.app_id.rsplit('_', 1)[1]}_{number:06d}"
        a = RMAppAttempt(attempt_id, app.app_id, number, 0)
        a.state = state
        a.counts_as_failure = counts_as_failure
        self.ctx.attempts[attempt_id] = a
        app.attempts.append(attempt_id)
        return attempt_id

    def app(self, state: AppState, app_id: str = "application_0_0001", memory: int = 1024) -> RMApp:
        app = RMApp(
            app_id,
            "job",
            "default",
            "alice",
            0,
            Resource(memory, 1),
            "mapreduce",
            {"tasks": [1]},
            self.ctx.settings.am_max_attempts,
            0,
        )
        app.state = state
        self.ctx.apps[app_id] = app
        return app

    def node(self, state: NodeState, node_id: str = "n1") -> RMNode:
        node = RMNode(node_id, node_id, "/r1", Resource(8192, 8), "mem://nm", (), 0)
        node.state = state
        self.ctx.nodes[node_id] = node
        return node
