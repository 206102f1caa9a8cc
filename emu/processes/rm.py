"""`emu rm`: the ResourceManager as a process of its own."""

from __future__ import annotations

import argparse
import json
import os
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from emu import preflight, security
from emu.clock import ScaledWallClock
from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.metrics.eventlog import EventLog
from emu.processes import common as C
from emu.rm import recovery as rec
from emu.rm.actor import ResourceManager, RMAddresses
from emu.transport import MAX_MESSAGE_BYTES

HELP = """Run the ResourceManager on YARN's ports: 8030 (AM protocol), 8031
(resource tracker), 8032 (client), 8033 (admin), or from --port-base.

Configuration comes from --conf-dir (default $HADOOP_CONF_DIR): sls-runner.xml,
capacity-scheduler.xml and yarn-site.xml, merged as `emu sls` merges them,
then --conf NAME=VALUE overrides. The RM picks the cluster clock: simulated
time is (wall time - its start) * --rate; NMs, AMs and replays adopt it.

With yarn.resourcemanager.recovery.enabled=true the RM keeps its state in
yarn.resourcemanager.fs.state-store.uri (a directory) and, restarted, recovers
every application and keeps the cluster clock; running containers and AMs
carry on (work-preserving recovery).

With --keys DIR (see `emu keys generate`) every port speaks CURVE and admits
only the client keys in DIR/authorized.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rm",
        help="run the ResourceManager (YARN ports 8030-8033)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    p.add_argument(
        "--port-base",
        type=int,
        default=C.DEFAULT_PORT_BASE,
        metavar="P",
        help="AM protocol on P, resource tracker P+1, client P+2, admin P+3 (default 8030)",
    )
    for flag, service in (
        ("--scheduler-port", "am_protocol"),
        ("--tracker-port", "resource_tracker"),
        ("--client-port", "client"),
        ("--admin-port", "admin"),
    ):
        p.add_argument(
            flag,
            type=int,
            dest=service,
            metavar="PORT",
            help=f"override the {service} port (default: from --port-base)",
        )
    p.add_argument(
        "--conf-dir",
        metavar="DIR",
        help="Hadoop configuration directory (default: $HADOOP_CONF_DIR, else none)",
    )
    C.add_conf_option(p, "set a configuration property")
    p.add_argument(
        "--rate", type=float, default=1.0, help="simulated seconds per wall second (default 1)"
    )
    C.add_server_keys_option(p)
    p.add_argument(
        "--events",
        metavar="FILE",
        help="write the event log (JSON lines) here (default: not written)",
    )
    p.add_argument(
        "--ready-file",
        metavar="FILE",
        help="write the bound addresses here (JSON; default: not written)",
    )
    p.add_argument(
        "--max-message-bytes",
        type=int,
        metavar="N",
        help="disconnect peers sending larger messages (default 64 MiB)",
    )
    p.add_argument("--log-level", default="info", help="debug|info|warning|error (default: info)")
    _add_web_options(p)
    p.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
    p.set_defaults(func=C.command(main))


def _add_web_options(p: argparse.ArgumentParser) -> None:
    from emu.web.server import DEFAULT_RM_WEB_PORT

    p.add_argument(
        "--web-port",
        type=int,
        default=DEFAULT_RM_WEB_PORT,
        metavar="PORT",
        help="YARN's REST API (/ws/v1/cluster/...) and the live pages (/simulate, /track) "
        f"(default {DEFAULT_RM_WEB_PORT}, YARN's; 0 = any free port, -1 = off)",
    )
    p.add_argument(
        "--web-host",
        default="127.0.0.1",
        metavar="ADDR",
        help="address the web server listens on (default 127.0.0.1: the REST API can "
        "submit and kill applications and has no authentication)",
    )


async def _start_web(nursery: trio.Nursery, rm: ResourceManager, args: argparse.Namespace) -> str:
    """The web server beside the RM; a port in use is a warning, not a failure
    (the RM's protocol ports are what the cluster needs)."""
    from emu.web.server import serve_beside_rm

    if args.web_port < 0:
        return ""
    try:
        url: str = await nursery.start(serve_beside_rm, rm, args.web_host, args.web_port)
    except OSError as e:
        C.warn(f"web server not started on {args.web_host}:{args.web_port}: {e}")
        return ""
    return url


def main(args: argparse.Namespace) -> int:
    """`emu rm`: serve the four RM services on scaled wall time until a signal."""
    C.configure_logging(args.log_level)
    if not args.rate > 0:
        raise InputError("--rate", str(args.rate), "must be a positive number")
    overrides = C.parse_overrides(args.conf)
    conf = C.load_configuration(args.conf_dir, overrides)
    # Refused or warned about as every run is, before any port is bound.
    preflight.check_configuration(conf)
    keys = _secure(args)
    addresses = RMAddresses.tcp(args.host, _ports(args))
    clock = _cluster_clock(conf, args.rate)
    with ExitStack() as stack:
        events = EventLog()
        if args.events:
            events = EventLog(stack.enter_context(open(args.events, "a")))
        auth = security.AuthStats() if keys is not None else None
        rm = ResourceManager(
            conf,
            addresses,
            events,
            epoch=clock.epoch,
            rate=clock.rate,
            cluster_timestamp=clock.cluster_timestamp,
            recovery_meta=clock.meta,
            monitor=True,
            auth=auth,
        )
        # `emu admin refresh-queues` without properties re-reads these files.
        rm.ctx.reload_conf = lambda: C.load_configuration(args.conf_dir, overrides)

        async def run(nursery: trio.Nursery) -> None:
            if keys is not None:
                assert auth is not None
                await nursery.start(security.zap_handler, keys.allowed, auth)
            bound = await nursery.start(rm.run)
            web = await _start_web(nursery, rm, args)
            info = {
                "pid": os.getpid(),
                "epoch": clock.epoch,
                "rate": clock.rate,
                "cluster_timestamp": clock.cluster_timestamp,
                "am_protocol": bound.am_protocol,
                "resource_tracker": bound.resource_tracker,
                "client": bound.client,
                "admin": bound.admin,
                "recovery": rm.ctx.recovery.metrics() if rm.ctx.recovery is not None else None,
                "curve": keys is not None,
                "web": web,
            }
            if args.ready_file:
                C.write_json_atomic(Path(args.ready_file), info)
            C.say("emu rm ready " + json.dumps(info, sort_keys=True))
            C.settle_gc()
            await trio.sleep_forever()

        why = trio.run(
            C.until_signal, run, args.parent_pid, clock=ScaledWallClock(clock.epoch, clock.rate)
        )
    C.say(f"emu rm stopped ({why or 'done'})")
    return 0


def _secure(args: argparse.Namespace) -> security.Keys | None:
    """Load --keys (if any) as this process's transport options, and warn
    when the RM would listen beyond loopback without them."""
    keys = security.load(args.keys, serving=True) if args.keys else None
    security.install(keys, args.max_message_bytes or MAX_MESSAGE_BYTES)
    exposed = security.warn_if_exposed(
        args.host,
        keys,
        "the ResourceManager",
        "register nodes, submit and kill applications, and reconfigure queues",
    )
    if exposed:
        C.warn(exposed)
    return keys


def _ports(args: argparse.Namespace) -> dict[str, int]:
    """Each service's port: YARN's layout from --port-base, unless given its own."""
    ports = {
        "am_protocol": args.port_base,
        "resource_tracker": args.port_base + 1,
        "client": args.port_base + 2,
        "admin": args.port_base + 3,
    }
    for service in ports:
        if getattr(args, service) is not None:
            ports[service] = getattr(args, service)
    return ports


@dataclass(frozen=True)
class _Clock:
    """The cluster's scaled wall clock, and the recovery state it came from."""

    epoch: float
    rate: float
    cluster_timestamp: int
    meta: dict[str, Any] | None


def _cluster_clock(conf: Configuration, rate: float) -> _Clock:
    """A new clock starting now at `rate`, or, when recovering, the clock the
    cluster already runs on (so NM and AM processes stay in step)."""
    epoch = time.time()
    cluster_timestamp = int(epoch * 1000)
    if not rec.enabled(conf):
        return _Clock(epoch, rate, cluster_timestamp, None)
    meta = rec.open_meta(conf, epoch, rate, cluster_timestamp)
    if meta["restarts"]:
        if meta["rate"] != rate:
            C.warn(
                f"recovering: keeping the cluster's rate {meta['rate']:g} "
                f"(--rate {rate:g} ignored) so running processes stay in step"
            )
        epoch, rate, cluster_timestamp = meta["epoch"], meta["rate"], meta["cluster_timestamp"]
    return _Clock(epoch, rate, cluster_timestamp, meta)
