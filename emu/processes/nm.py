"""`emu nm`: one process hosting many NodeManagers, and the AMs that land on them."""

from __future__ import annotations

import argparse
import os
import socket
import time
from pathlib import Path
from typing import Any

import structlog
import trio

from emu import security
from emu.am import run_am
from emu.clock import ScaledWallClock
from emu.errors import InputError
from emu.nm import LatencyHistogram, NMNode, NodeManagerHost
from emu.processes import common as C
from emu.resources import Resource

log = structlog.get_logger("emu.nm")

HELP = """Run COUNT NodeManagers in one process, each its own node
(PREFIX<i> for i = FIRST..FIRST+COUNT-1) on rack RACK, registered with the RM
at --rm HOST[:PORT_BASE]. The process serves container management on one
port (--port, default any free one) and advertises it to the RM as
--advertise HOST (default: this machine's address on the route to the RM).
ApplicationMasters whose AM container lands on one of these nodes run inside
this process, as YARN runs them on the node.

The process first asks the RM for the cluster clock (epoch and rate) and runs
on it. With --keys DIR it talks CURVE to the RM and serves CURVE itself.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "nm",
        help="run many NodeManagers in one process",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--rm", required=True, metavar="HOST[:PORT_BASE]", help="the ResourceManager")
    p.add_argument(
        "--count", type=int, default=1, metavar="N", help="nodes in this process (default 1)"
    )
    p.add_argument(
        "--rack", default="/default-rack", help="the nodes' rack (default /default-rack)"
    )
    p.add_argument(
        "--name-prefix",
        metavar="P",
        help="node names are P<i> (default: this host's name and a dash)",
    )
    p.add_argument("--first-index", type=int, default=1, metavar="I", help="first i (default 1)")
    p.add_argument(
        "--memory-mb", type=int, default=8192, help="each node's memory in MB (default 8192)"
    )
    p.add_argument("--vcores", type=int, default=8, help="each node's vcores (default 8)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    p.add_argument("--port", type=int, default=0, help="port to listen on (default: any)")
    p.add_argument(
        "--advertise",
        metavar="HOST",
        help="address the RM and AMs use to reach us (default: --host, or the "
        "address on the route to the RM)",
    )
    C.add_server_keys_option(p)
    p.add_argument(
        "--max-in-flight",
        type=int,
        default=8,
        metavar="K",
        help="heartbeat messages outstanding at once (default 8)",
    )
    p.add_argument(
        "--align-ms",
        type=int,
        default=100,
        metavar="MS",
        help="heartbeats fall due on multiples of MS (simulated), so more nodes share "
        "each message: less CPU per heartbeat, which a busy RM needs (default 100; 0: "
        "each node's own interval, nodes found due together still share a message)",
    )
    p.add_argument(
        "--align-phase",
        type=float,
        default=0.0,
        metavar="F",
        help="this process's grid lies at F x --align-ms into each step (0 <= F < 1; "
        "default 0): NM processes with different phases reach the RM one after another "
        "instead of together (emu cluster up gives process k of K the phase k/K)",
    )
    p.add_argument(
        "--stats-file",
        metavar="FILE",
        help="write heartbeat statistics here (JSON; default: not written)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for heartbeat offsets (default 0)")
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=60.0,
        help="wall seconds to wait for the RM (default 60)",
    )
    p.add_argument("--log-level", default="info", help="debug|info|warning|error (default: info)")
    p.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
    p.set_defaults(func=C.command(main))


def main(args: argparse.Namespace) -> int:
    C.configure_logging(args.log_level)
    if args.count < 1:
        raise InputError("--count", str(args.count), "must be at least 1")
    if not 0 <= args.align_phase < 1:
        raise InputError("--align-phase", str(args.align_phase), "must be in [0, 1)")
    if args.memory_mb < 0 or args.vcores < 0:
        raise InputError("--memory-mb/--vcores", None, "must not be negative")
    rm = C.rm_addresses(args.rm)
    keys = security.load(args.keys, serving=True) if args.keys else None
    security.install(keys)
    exposed = security.warn_if_exposed(
        args.host, keys, "this NodeManager process", "start and stop containers on its nodes"
    )
    if exposed:
        C.warn(exposed)
    rm_host = C.url_host(rm.resource_tracker)
    advertise = args.advertise
    if not advertise:
        advertise = args.host if args.host not in ("0.0.0.0", "::") else None
        advertise = advertise or C.local_address_towards(rm_host)
    prefix = args.name_prefix if args.name_prefix is not None else f"{socket.gethostname()}-"

    process = _NMProcess(args, rm, keys, advertise, prefix)
    while True:
        epoch, rate = C.cluster_clock(
            rm.client, keys.client if keys else None, args.connect_timeout
        )
        process.incarnate(epoch, rate)
        try:
            why = trio.run(
                C.until_signal, process.run, args.parent_pid, clock=ScaledWallClock(epoch, rate)
            )
        finally:
            if args.stats_file:
                C.write_json_atomic(Path(args.stats_file), process.stats())
        if why is None and process.new_clock:
            continue
        break
    final = process.stats()
    C.say(
        f"emu nm stopped ({why or 'done'}): {final['heartbeats']} heartbeats, "
        f"latency p50 {final['latency']['p50_ms']} ms, p99 {final['latency']['p99_ms']} ms"
    )
    return 0


class _NMProcess:
    """The process's NodeManagerHost, rebuilt if the RM announces a new
    clock: a trio run's clock is fixed, and an RM restarted without
    recovery has forgotten every node anyway."""

    def __init__(
        self,
        args: argparse.Namespace,
        rm: Any,
        keys: security.Keys | None,
        advertise: str,
        prefix: str,
    ) -> None:
        self.args = args
        self.rm = rm
        self.keys = keys
        self.advertise = advertise
        self.prefix = prefix
        self.latency = LatencyHistogram()
        self.ams = {"started": 0, "running": 0}
        self.totals = {"heartbeats": 0, "errors": 0, "resyncs": 0, "restarts": 0}
        self.started = time.perf_counter()
        self.host: NodeManagerHost | None = None
        self.nodes: list[NMNode] = []
        self.new_clock = False
        self._scope: trio.CancelScope | None = None

    def incarnate(self, epoch: float, rate: float) -> None:
        args = self.args
        if self.host is not None:
            self.totals["heartbeats"] += self.host.heartbeats
            self.totals["errors"] += self.host.errors
            self.totals["resyncs"] += self.host.resyncs
            self.totals["restarts"] += 1
        resource = Resource(args.memory_mb, args.vcores)
        self.nodes = [
            NMNode(f"{self.prefix}{i}", f"{self.prefix}{i}", args.rack, resource)
            for i in range(args.first_index, args.first_index + args.count)
        ]
        self.new_clock = False
        self.host = NodeManagerHost(
            self.nodes,
            self.rm.resource_tracker,
            f"tcp://{_bracket(args.host)}:{args.port}",
            self._run_am,
            args.seed,
            advertise_host=self.advertise,
            max_in_flight=max(1, args.max_in_flight),
            latency=self.latency,
            on_clock=self._clock_changed,
            stagger_quantum_ms=args.align_ms,
            align_ms=args.align_ms,
            align_phase=args.align_phase,
        )
        self.host.epoch, self.host.rate = epoch, rate

    async def _run_am(self, am: dict[str, Any], node_id: str) -> None:
        # The AM reaches the RM the way this process does (the RM may
        # listen on 0.0.0.0, which is no address to connect to).
        self.ams["started"] += 1
        self.ams["running"] += 1
        try:
            await run_am({**am, "rm_address": self.rm.am_protocol})
        finally:
            self.ams["running"] -= 1

    def _clock_changed(self, epoch: float, rate: float) -> None:
        log.warning(
            "the RM announced a new clock (restarted without recovery): starting over",
            epoch=epoch,
            rate=rate,
        )
        self.new_clock = True
        if self._scope is not None:
            self._scope.cancel()

    async def run(self, nursery: trio.Nursery) -> None:
        host, nodes, args = self.host, self.nodes, self.args
        assert host is not None
        self._scope = nursery.cancel_scope
        if self.keys is not None:
            await nursery.start(security.zap_handler, self.keys.allowed, security.AuthStats())
        if args.stats_file:
            nursery.start_soon(_write_stats, Path(args.stats_file), self.stats)
        bound = await nursery.start(host.run)
        C.say(
            f"emu nm ready: {len(nodes)} nodes {nodes[0].node_id}..{nodes[-1].node_id} "
            f"on {args.rack}, serving {bound} as {host.nm_address}, "
            f"registered in {time.perf_counter() - self.started:.2f} s"
        )
        C.settle_gc()
        await trio.sleep_forever()

    def stats(self) -> dict[str, Any]:
        host, nodes = self.host, self.nodes
        assert host is not None
        return {
            "pid": os.getpid(),
            "nm_address": host.nm_address,
            "nodes": len(nodes),
            "registered": sum(1 for n in nodes if n.registered),
            "all_registered_s": host.all_registered_wall_s,
            "heartbeats": self.totals["heartbeats"] + host.heartbeats,
            "errors": self.totals["errors"] + host.errors,
            "resyncs": self.totals["resyncs"] + host.resyncs,
            "restarts": self.totals["restarts"],
            "containers": sum(len(n.containers) for n in nodes),
            "ams_started": self.ams["started"],
            "ams_running": self.ams["running"],
            "uptime_s": round(time.perf_counter() - self.started, 3),
            "latency": self.latency.to_dict(),
            "transport": {
                "requests": host.stats.requests,
                "replies": host.stats.replies,
                "dropped": host.stats.dropped,
                "handler_errors": host.stats.handler_errors,
            },
        }


async def _write_stats(path: Path, stats: Any) -> None:
    while True:
        C.write_json_atomic(path, stats())
        await trio.sleep(C.sim_seconds(1.0))


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
