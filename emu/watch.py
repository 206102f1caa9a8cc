"""How a replay is watched while it runs: the progress line and the web server.

`emu run` and `emu sls` add the options (`add_options`) and wrap their run
in a `Watch`: `start(workload, epoch_ms)` starts what was asked for and
returns the observer to call every simulated second (None when nothing
watches, so the run is assembled exactly as before; a replay in pure Python
for want of a build is watched by `native.CompileHint`, which says once how
to compile); `stop()` clears the
progress line, publishes the final snapshot and stops the server. Every
observer only reads the RM, so outputs are the same with or without them.

With `--keep-serving` the server outlives the run: `stop()` leaves it up
and the command, once it has written and reported the run, calls
`serve_until_stopped()`, which serves the final state (pages and REST)
until SIGINT or SIGTERM, so a finished replay can still be looked at.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from emu.errors import InputError
from emu.metrics.progress import MODES, Progress
from emu.native import CompileHint

if TYPE_CHECKING:
    from emu.rm.actor import ResourceManager
    from emu.web.live import LiveView
    from emu.web.server import WebServer
    from emu.workload import Workload

Observer = Callable[["ResourceManager"], None]


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        choices=MODES,
        default="auto",
        help="a progress line on stderr every 2 wall seconds once a run has taken 2 s: "
        "auto = only when stderr is a terminal (default), always, never",
    )
    p.add_argument(
        "--web-port",
        type=int,
        metavar="PORT",
        help="serve YARN's REST API (/ws/v1/cluster/...) and the live pages "
        "(/simulate, /track) on this port while the run goes on "
        "(0 = any free port; default: no web server)",
    )
    p.add_argument(
        "--web-host",
        default="127.0.0.1",
        metavar="ADDR",
        help="address the web server listens on (default 127.0.0.1)",
    )
    p.add_argument(
        "--keep-serving",
        action="store_true",
        help="with --web-port: after the run, keep serving its final state (pages and "
        "REST API) until Ctrl-C or SIGTERM (default: the server stops with the run)",
    )


def chain(*observers: Observer) -> Observer:
    """One observer calling each of `observers` in order."""

    def tick(rm: ResourceManager) -> None:
        for observe in observers:
            observe(rm)

    return tick


class Watch:
    """What `--progress` and `--web-port` asked for, for one run."""

    def __init__(
        self,
        progress: str = "auto",
        web_port: int | None = None,
        web_host: str = "127.0.0.1",
        keep_serving: bool = False,
    ) -> None:
        if web_port is not None and not 0 <= web_port <= 65535:
            raise InputError("--web-port", str(web_port), "must be a port number 0-65535")
        if keep_serving and web_port is None:
            raise InputError(
                "--keep-serving", None, "keeps the web server up: give --web-port PORT with it"
            )
        self.progress_mode = progress
        self.web_port = web_port
        self.web_host = web_host
        self.keep_serving = keep_serving
        self.progress: Progress | None = None
        self.live: LiveView | None = None
        self.server: WebServer | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Watch:
        return cls(args.progress, args.web_port, args.web_host, args.keep_serving)

    def start(
        self, workload: Workload, epoch_ms: int = 0, track_jobs: tuple[str, ...] = ()
    ) -> Observer | None:
        """Start what was asked for; `track_jobs` (trace job ids) get a chart
        each on /track."""
        observers: list[Observer] = []
        hint = CompileHint.wanted()
        if hint is not None:
            observers.append(hint.tick)
        self.progress = Progress.for_mode(self.progress_mode, workload)
        if self.progress is not None:
            observers.append(self.progress.tick)
        if self.web_port is not None:
            from emu.web.live import LiveView
            from emu.web.server import WebServer

            self.live = LiveView(epoch_ms, total_jobs=len(workload.jobs), track_jobs=track_jobs)
            self.server = WebServer(self.live, self.web_host, self.web_port)
            try:
                url = self.server.start()
            except OSError as e:
                raise InputError("--web-port", str(self.web_port), f"cannot listen: {e}") from None
            print(f"emu: web: {url}/cluster  {url}/simulate  {url}/ws/v1/cluster", file=sys.stderr)
            observers.append(self.live.tick)
        if not observers:
            return None
        return observers[0] if len(observers) == 1 else chain(*observers)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.close()
        if self.live is not None:
            self.live.close()
        if self.server is not None and not self.keep_serving:
            self.server.stop()

    def serve_until_stopped(self) -> None:
        """`--keep-serving`: the run is over; serve its final state until
        SIGINT or SIGTERM (which the command turns into KeyboardInterrupt),
        then stop the server. A stop asked for here is the normal end, not
        an interrupted run."""
        server = self.server
        if server is None or not self.keep_serving:
            return
        sys.stdout.flush()  # the run's report, before waiting
        print(
            f"emu: web: the run is over; serving its final state at {server.url}/track "
            f"and {server.url}/ws/v1/cluster until Ctrl-C or SIGTERM (kill {os.getpid()})",
            file=sys.stderr,
            flush=True,
        )
        try:
            while server.serving():
                server.join(1.0)
        except KeyboardInterrupt:
            pass
        finally:
            # A second Ctrl-C while stopping changes nothing: the run is done.
            with contextlib.suppress(KeyboardInterrupt):
                server.stop()
