"""Serving the web app: hypercorn's trio worker in a thread of its own.

The server gets its own thread and trio loop, so a replay on the virtual
clock never sees it: no task, timer or socket is added to the run's loop.
The run and the server meet only in `LiveView` (snapshots one way, client
requests the other). `emu rm` uses the same server beside its own loop.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.responses import RedirectResponse
from starlette.routing import Route

from emu.web.api import build_api, with_error_handlers
from emu.web.live import LiveView

if TYPE_CHECKING:
    from emu.rm.actor import ResourceManager

DEFAULT_RM_WEB_PORT = 8088
"""yarn.resourcemanager.webapp.address's port."""


def build_app(live: LiveView) -> Starlette:
    """The REST API and the live pages over one LiveView."""
    from emu.web.pages import page_routes

    async def home(request: object) -> RedirectResponse:
        return RedirectResponse("/cluster")

    routes = [Route("/", home), *build_api(live), *page_routes(live)]
    return with_error_handlers(Starlette(routes=routes))


@dataclass
class WebServer:
    """`start()` binds and returns the base URL; `stop()` shuts down."""

    live: LiveView
    host: str = "127.0.0.1"
    port: int = DEFAULT_RM_WEB_PORT
    url: str = ""
    _thread: threading.Thread | None = None
    _token: trio.lowlevel.TrioToken | None = None
    _stop: trio.Event | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _error: BaseException | None = None

    def start(self) -> str:
        self._thread = threading.Thread(target=self._run, name="emu-web", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise _first_os_error(self._error) or self._error
        return self.url

    def _run(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as e:
            if not self._ready.is_set():
                self._error = e
                self._ready.set()

    async def _serve(self) -> None:
        config = Config()
        config.bind = [f"{self.host}:{self.port}"]
        config.accesslog = None
        config.errorlog = logging.getLogger("emu.web")
        self._token = trio.lowlevel.current_trio_token()
        self._stop = stop = trio.Event()
        # Starlette is an ASGI 3 app; hypercorn's annotation spells ASGI with
        # its own TypedDicts, which Starlette's looser types do not match.
        app: Any = build_app(self.live)
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(
                lambda task_status: serve(
                    app, config, shutdown_trigger=stop.wait, task_status=task_status
                )
            )
            self.url = binds[0].replace("0.0.0.0", "127.0.0.1")
            self._ready.set()

    def serving(self) -> bool:
        """Whether the server's thread is still up."""
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the server's thread to end (a
        signal handler still runs in the meantime)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self) -> None:
        if self._thread is None or self._token is None or self._stop is None:
            return
        with contextlib.suppress(trio.RunFinishedError):
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(timeout=10)
        self._thread = None


def _first_os_error(e: BaseException) -> OSError | None:
    """Hypercorn's bind error, out of the exception groups trio wraps it in."""
    if isinstance(e, OSError):
        return e
    if isinstance(e, BaseExceptionGroup):
        for sub in e.exceptions:
            found = _first_os_error(sub)
            if found is not None:
                return found
    return None


async def serve_beside_rm(
    rm: ResourceManager,
    host: str,
    port: int,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """`emu rm`: the web server in its thread, snapshots published from this
    (the RM's) loop every wall second. Reports the base URL when serving;
    raises OSError if the port cannot be bound."""
    live = LiveView(round(rm.epoch * 1000))
    server = WebServer(live, host, port)
    url = await trio.to_thread.run_sync(server.start)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(live.publish_loop, rm)
            task_status.started(url)
    finally:
        live.close()
        await trio.to_thread.run_sync(server.stop)
