"""`emu cluster up|status`: a local multi-process cluster, and a look at any cluster.

`up` starts an RM and K NM processes as real subprocesses (`python -m emu
...`, each in its own process group), waits until every node has
registered, optionally replays a trace through an `emu replay` subprocess,
and tears everything down on exit, error or Ctrl-C: SIGTERM to each process
group, then SIGKILL to whatever is still there after a grace period. The
children also watch this process (`--parent-pid`) and exit if it vanishes,
so even a `kill -9` of `emu cluster up` leaves no orphan running for long.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from emu import security
from emu.errors import InputError
from emu.nm import LatencyHistogram
from emu.processes import common as C
from emu.rm.actor import RMAddresses
from emu.transport import Curve, TransportError

GRACE_S = 5.0


@dataclass
class Child:
    name: str
    proc: subprocess.Popen[bytes]
    log_path: Path | None = None


@dataclass
class Children:
    """Subprocesses started in their own process groups, stopped together."""

    children: list[Child] = field(default_factory=list)
    _logs: list[IO[bytes]] = field(default_factory=list)

    def start(self, name: str, argv: list[str], log_path: Path | None) -> Child:
        out: Any = None
        if log_path is not None:
            f = open(log_path, "ab")  # noqa: SIM115 - closed in stop_all
            self._logs.append(f)
            out = f
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT if out else None, start_new_session=True
        )
        child = Child(name, proc, log_path)
        self.children.append(child)
        return child

    def dead(self) -> list[Child]:
        return [c for c in self.children if c.proc.poll() is not None]

    def stop_all(self, grace_s: float = GRACE_S) -> None:
        """SIGTERM every group (last started first), SIGKILL what outlives the grace."""
        for child in reversed(self.children):
            _signal_group(child.proc, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for child in reversed(self.children):
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for child in self.children:
            # The group, not only the leader: nothing started by a child survives.
            _signal_group(child.proc, signal.SIGKILL)
            child.proc.wait()
        for f in self._logs:
            f.close()
        self._logs.clear()


def _signal_group(proc: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)


def emu_argv(*args: object) -> list[str]:
    return [sys.executable, "-m", "emu", *(str(a) for a in args)]


# --- up -------------------------------------------------------------------------------------
def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cluster",
        help="start a local multi-process cluster, or look at one",
        description="`up`: an RM and NM processes on this machine (optionally replaying a "
        "trace); `status`: a running cluster's nodes and applications.",
    )
    csub = p.add_subparsers(dest="cluster_command", required=True)
    up = csub.add_parser(
        "up",
        help="start an RM and K NM processes, wait for every node, optionally replay",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    up.add_argument(
        "--nodes",
        type=int,
        metavar="N",
        help="nodes in all (default: a --trace scenario's [cluster], else 4)",
    )
    up.add_argument(
        "--nm-procs",
        type=int,
        metavar="K",
        help="NM processes, one rack each (default: a --trace scenario's racks, else 1)",
    )
    up.add_argument(
        "--rate",
        type=float,
        default=1.0,
        help="simulated seconds per wall second (default 1)",
    )
    up.add_argument(
        "--host",
        default="127.0.0.1",
        help="address everything listens on (default 127.0.0.1)",
    )
    up.add_argument(
        "--port-base", type=int, metavar="P", help="RM ports P..P+3 (default: free ones)"
    )
    up.add_argument(
        "--memory-mb",
        type=int,
        help="each node's memory in MB (default: a --trace scenario's, else 8192)",
    )
    up.add_argument(
        "--vcores", type=int, help="each node's vcores (default: a --trace scenario's, else 8)"
    )
    up.add_argument("--name-prefix", default="node", help="node names are P1..PN (default node)")
    up.add_argument(
        "--conf-dir",
        metavar="DIR",
        help="Hadoop configuration for the RM (default: $HADOOP_CONF_DIR, else none)",
    )
    C.add_conf_option(up, "set an RM configuration property")
    C.add_server_keys_option(up)
    up.add_argument(
        "--trace",
        action="append",
        default=[],
        metavar="FILE",
        help="replay this file (repeatable; default: no replay, stay up until Ctrl-C)",
    )
    up.add_argument(
        "--tracetype",
        metavar="SLS|RUMEN|SYNTH|native",
        help="the trace format (default: native for .toml, else SLS)",
    )
    up.add_argument(
        "--output-dir",
        "-o",
        metavar="DIR",
        help="the replay's outputs (default: not written)",
    )
    up.add_argument("--work-dir", metavar="DIR", help="logs and statistics (default: a temp dir)")
    up.add_argument(
        "--web-port",
        type=int,
        default=8088,
        metavar="PORT",
        help="the RM's REST API and live pages (default 8088; 0 = any free port, -1 = off)",
    )
    up.add_argument(
        "--keep-running", action="store_true", help="after the replay, stay up until Ctrl-C"
    )
    up.add_argument(
        "--stop-after",
        type=float,
        metavar="S",
        help="stop everything S wall seconds after the last node registered, the replay "
        "finished or not (default: after the replay, or at Ctrl-C)",
    )
    up.add_argument(
        "--align-ms",
        type=int,
        metavar="MS",
        help="the NM processes' heartbeat grid (emu nm --align-ms; default: its default)",
    )
    up.add_argument(
        "--align-phases",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="spread the NM processes' heartbeat grids over each --align-ms step (process k "
        "of K at k/K), so their batches reach the RM one after another (default: on)",
    )
    up.add_argument(
        "--max-in-flight",
        type=int,
        metavar="K",
        help="heartbeat messages each NM process keeps outstanding (emu nm --max-in-flight; "
        "default: its default)",
    )
    up.add_argument(
        "--register-timeout",
        type=float,
        default=120.0,
        help="wall seconds to wait for nodes (default 120)",
    )
    up.set_defaults(func=C.command(cluster_up))
    st = csub.add_parser("status", help="print a running cluster's nodes and applications")
    st.add_argument("--rm", required=True, metavar="HOST[:PORT_BASE]", help="the ResourceManager")
    C.add_client_keys_options(st)
    st.add_argument("--json", action="store_true", help="machine-readable output")
    st.add_argument("--timeout", type=float, default=5.0, help="wall seconds to wait (default 5)")
    st.add_argument(
        "--wait-nodes",
        type=int,
        metavar="N",
        help="first wait (up to --timeout) until N nodes are active; exit 1 if they are not "
        "(default: do not wait)",
    )
    st.set_defaults(func=C.command(cluster_status))


def _say_web_url(ready: Path) -> None:
    """The RM's web address, from the ready file it writes once serving
    (moments after its protocol ports answer)."""
    deadline = time.monotonic() + 10
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        web = json.loads(ready.read_text()).get("web")
    except (OSError, ValueError):
        return
    if web:
        C.say(f"emu cluster: web UI {web}/cluster  live {web}/simulate  REST {web}/ws/v1/cluster")


@dataclass(frozen=True)
class _Launch:
    """What every child process of one `emu cluster up` is started with."""

    work: Path
    rm_spec: str
    rm: RMAddresses
    curve: Curve | None
    common: list[object]
    """Arguments every child gets (the keys directory)."""
    me: int

    def argv(self, *args: object) -> list[str]:
        """A child's command line, with the common arguments and our pid as its parent."""
        return emu_argv(*args, *self.common, "--parent-pid", self.me)


def cluster_up(args: argparse.Namespace) -> int:
    """Start the RM and the NM processes, replay a trace if given, then stop them all."""
    _check_up_args(args)
    keys = security.load(args.keys, serving=False) if args.keys else None
    _check_rm_configuration(args)
    made_work_dir = not args.work_dir
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="emu-cluster-"))
    work.mkdir(parents=True, exist_ok=True)
    base = args.port_base or C.free_port_base(args.host)
    rm_spec = f"{args.host}:{base}" if ":" not in args.host else f"[{args.host}]:{base}"
    launch = _Launch(
        work=work,
        rm_spec=rm_spec,
        rm=C.rm_addresses(rm_spec),
        curve=keys.client if keys else None,
        common=["--keys", args.keys] if args.keys else [],
        me=os.getpid(),
    )
    children = Children()

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    rm_child: Child | None = None
    stats_files = [work / f"nm{k + 1}.json" for k in range(args.nm_procs)]
    registered_s: float | None = None
    window = _Window(stats_files)
    rc = 0
    try:
        rm_child, exited = _start_rm(args, launch, base, children)
        if exited is not None:
            return exited
        started = time.perf_counter()
        _start_nms(args, launch, stats_files, children)
        _wait_for_nodes(launch.rm.client, launch.curve, args.nodes, args.register_timeout, children)
        registered_s = time.perf_counter() - started
        C.say(
            f"emu cluster: {args.nodes} nodes registered in {registered_s:.2f} s "
            f"({args.nm_procs} NM processes)"
        )
        window.open(children, launch)
        deadline = None if args.stop_after is None else time.monotonic() + args.stop_after
        if args.trace:
            rc = _replay(args, launch, children, deadline, window)
        else:
            C.say("emu cluster: up; Ctrl-C to stop")
            _wait_forever(children, deadline=deadline, window=window, launch=launch)
    except KeyboardInterrupt:
        C.say("emu cluster: stopping")
        rc = 130
    finally:
        final = None
        if rm_child is not None and rm_child.proc.poll() is None:
            with (
                contextlib.suppress(TransportError),
                C.SyncClient(launch.rm.client, launch.curve) as client,
            ):
                final = client.call("cluster_metrics", timeout=2.0)["metrics"]
        window.close(children)
        # The NM processes write their final statistics as they stop.
        children.stop_all()
        signal.signal(signal.SIGTERM, previous)
        if made_work_dir and registered_s is None:
            # The cluster never came up: its logs said what they could above.
            shutil.rmtree(work, ignore_errors=True)
    summary = _report(stats_files, final, registered_s)
    if registered_s is not None:
        summary.update(
            nodes=args.nodes,
            nm_procs=args.nm_procs,
            rate=args.rate,
            exit_code=rc,
            **window.figures(),
        )
        C.write_json_atomic(work / "summary.json", summary)
    return rc


def _check_up_args(args: argparse.Namespace) -> None:
    """Apply the scenario's settings to `args` and refuse impossible sizes."""
    scenario_conf = _apply_scenario(args)
    args.conf = [*scenario_conf, *args.conf]
    if args.nodes < 1 or args.nm_procs < 1 or args.nm_procs > args.nodes:
        raise InputError("--nodes/--nm-procs", None, "need 1 <= --nm-procs <= --nodes")
    if not args.rate > 0:
        raise InputError("--rate", str(args.rate), "must be a positive number")
    if args.stop_after is not None and not args.stop_after > 0:
        raise InputError(
            "--stop-after", str(args.stop_after), "must be a positive number of seconds"
        )


def _start_rm(
    args: argparse.Namespace, launch: _Launch, base: int, children: Children
) -> tuple[Child, int | None]:
    """Start the RM process and wait until it answers.

    If it exited instead, its last error line is printed and its exit code
    is returned beside it (None: it is up).
    """
    rm_args: list[object] = ["rm", "--host", args.host, "--port-base", base, "--rate", args.rate]
    rm_args += ["--web-port", args.web_port, "--ready-file", launch.work / "rm.json"]
    if args.conf_dir:
        rm_args += ["--conf-dir", args.conf_dir]
    for item in args.conf:
        rm_args += ["--conf", item]
    rm_child = children.start("rm", launch.argv(*rm_args), launch.work / "rm.log")
    try:
        C.cluster_metrics(
            launch.rm.client, launch.curve, 30.0, alive=lambda: rm_child.proc.poll() is None
        )
    except TransportError:
        if rm_child.proc.poll() is None:
            raise
        # The RM said why on its way out: that line, not "it exited".
        C.warn(
            _last_error(launch.work / "rm.log")
            or f"error: the ResourceManager exited with {rm_child.proc.returncode}"
        )
        return rm_child, rm_child.proc.returncode
    C.say(f"emu cluster: RM up at {launch.rm_spec} (rate {args.rate:g}); logs in {launch.work}")
    _say_web_url(launch.work / "rm.json")
    return rm_child, None


def _start_nms(
    args: argparse.Namespace, launch: _Launch, stats_files: list[Path], children: Children
) -> None:
    """Start `--nm-procs` NM processes sharing `--nodes` nodes, one rack each."""
    per, extra = divmod(args.nodes, args.nm_procs)
    first = 1
    for k in range(args.nm_procs):
        count = per + (1 if k < extra else 0)
        nm_args: list[object] = ["nm", "--rm", launch.rm_spec, "--count", count]
        nm_args += ["--first-index", first, "--name-prefix", args.name_prefix]
        nm_args += ["--rack", f"/rack{k + 1}", "--memory-mb", args.memory_mb]
        nm_args += ["--vcores", args.vcores, "--host", args.host]
        nm_args += ["--stats-file", stats_files[k], "--seed", k, "--log-level", "warning"]
        if args.align_phases:
            nm_args += ["--align-phase", f"{k / args.nm_procs:g}"]
        if args.align_ms is not None:
            nm_args += ["--align-ms", args.align_ms]
        if args.max_in_flight is not None:
            nm_args += ["--max-in-flight", args.max_in_flight]
        children.start(f"nm{k + 1}", launch.argv(*nm_args), launch.work / f"nm{k + 1}.log")
        first += count


def _replay(
    args: argparse.Namespace,
    launch: _Launch,
    children: Children,
    deadline: float | None = None,
    window: _Window | None = None,
) -> int:
    """Run `emu replay` on the trace against the cluster; its exit code.

    With --keep-running the cluster then stays up until interrupted; with
    `deadline` (time.monotonic()) it stops then, the replay done or not
    (exit code 0 if the replay was still running without error).
    """
    # The scenario's [config] and [cluster] were applied by _check_up_args.
    replay_args: list[object] = ["replay", "--rm", launch.rm_spec, "--workload-only", *args.trace]
    if args.tracetype:
        replay_args += ["--tracetype", args.tracetype]
    if args.output_dir:
        replay_args += ["--output-dir", args.output_dir]
    if args.conf_dir:
        replay_args += ["--conf-dir", args.conf_dir]
    replay = children.start("replay", launch.argv(*replay_args), None)
    while replay.proc.poll() is None:
        _check_alive(children, exclude=("replay",))
        if window is not None:
            window.sample(launch)
        if deadline is not None and time.monotonic() >= deadline:
            C.say(f"emu cluster: stopping after {args.stop_after:g} s, the replay still running")
            return 0
        time.sleep(0.5)
    if args.keep_running or deadline is not None:
        C.say("emu cluster: replay done; still up" + ("" if deadline else ", Ctrl-C to stop"))
        _wait_forever(
            children, exclude=("replay",), deadline=deadline, window=window, launch=launch
        )
    return replay.proc.returncode


def _apply_scenario(args: argparse.Namespace) -> list[str]:
    """Start the cluster a `--trace` scenario file describes: its [config]
    becomes the RM's configuration (returned as NAME=VALUE items, under the
    user's own --conf), and its [cluster] the nodes, unless --nodes,
    --nm-procs, --memory-mb or --vcores say otherwise. Fills in the node
    options' defaults either way."""
    from emu.processes.replay import is_scenario

    given = {k: getattr(args, k) for k in ("nodes", "nm_procs", "memory_mb", "vcores")}
    defaults = {"nodes": 4, "nm_procs": 1, "memory_mb": 8192, "vcores": 8}
    items: list[str] = []
    if len(args.trace) == 1 and is_scenario(args.trace[0], args.tracetype):
        from emu.rm.scheduler.fair.settings import ALLOCATION_FILE, allocation_file_path
        from emu.scenario import native

        scenario = native.load(args.trace[0])
        for name in scenario.conf:
            value = scenario.conf.get(name)
            if name == ALLOCATION_FILE:
                value = str(allocation_file_path(scenario.conf)[0])
            items.append(f"{name}={value}")
        if all(v is None for v in given.values()):
            defaults = _uniform_shape(args.trace[0], scenario.nodes)
    for key, value in given.items():
        if value is None:
            setattr(args, key, defaults[key])
    return items


def _uniform_shape(path: str, nodes: list[Any]) -> dict[str, int]:
    """--nodes/--nm-procs/--memory-mb/--vcores for a scenario's nodes, when
    `emu cluster up` can start them as they are: equal nodes named node1..N,
    the same number in each of the racks /rack1../rackK (one NM process per
    rack, as `up` lays them out)."""
    racks = sorted({n.rack for n in nodes})
    per_rack, extra = divmod(len(nodes), len(racks))
    expected = [(f"node{i + 1}", f"/rack{i // per_rack + 1}") for i in range(len(nodes))]
    if (
        extra
        or [(n.host, n.rack) for n in nodes] != expected
        or len({n.resource for n in nodes}) > 1
    ):
        hosts = ", ".join(n.host for n in nodes[:4]) + (" ..." if len(nodes) > 4 else "")
        raise InputError(
            path,
            "cluster",
            f"emu cluster up starts equal nodes named node1..N in racks /rack1..K; this "
            f"scenario's nodes ({hosts}) are not like that. Run it in one process with "
            "emu run, or give --nodes/--memory-mb/--vcores to replay its jobs on such nodes",
        )
    size = nodes[0].resource
    return {
        "nodes": len(nodes),
        "nm_procs": len(racks),
        "memory_mb": size.memory,
        "vcores": size.vcores,
    }


def _check_rm_configuration(args: argparse.Namespace) -> None:
    """Check the RM's configuration here first, as `emu rm` will, so a bad
    file is one `emu: error:` line (exit 2) before any process starts."""
    from emu.preflight import check_configuration

    check_configuration(C.load_configuration(args.conf_dir, C.parse_overrides(args.conf)))


def _last_error(log: Path) -> str | None:
    """The last `emu: ...` line a child wrote to its log, without the prefix."""
    if not log.is_file():
        return None
    lines = [x for x in log.read_text(errors="replace").splitlines() if x.startswith("emu: ")]
    return lines[-1].removeprefix("emu: ") if lines else None


def _check_alive(children: Children, exclude: tuple[str, ...] = ()) -> None:
    dead = [c for c in children.dead() if c.name not in exclude]
    if dead:
        c = dead[0]
        tail = ""
        if c.log_path is not None and c.log_path.is_file():
            tail = "\n".join(c.log_path.read_text(errors="replace").splitlines()[-15:])
        raise RuntimeError(f"{c.name} exited with {c.proc.returncode}; its log ends:\n{tail}")


def _wait_forever(
    children: Children,
    exclude: tuple[str, ...] = (),
    deadline: float | None = None,
    window: _Window | None = None,
    launch: _Launch | None = None,
) -> None:
    """Until a child dies (an error), Ctrl-C, or `deadline` (time.monotonic())."""
    while deadline is None or time.monotonic() < deadline:
        _check_alive(children, exclude)
        if window is not None and launch is not None:
            window.sample(launch)
        time.sleep(0.5 if deadline is not None else 1.0)


def _wait_for_nodes(
    client_address: str, curve: Curve | None, n: int, timeout_s: float, children: Children
) -> None:
    deadline = time.monotonic() + timeout_s
    with C.SyncClient(client_address, curve) as client:
        while True:
            _check_alive(children)
            try:
                reply = client.call("cluster_metrics", timeout=5.0)
                active = reply["metrics"]["active_nodes"]
            except (TransportError, KeyError):
                active = -1
            if active >= n:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {active} of {n} nodes registered in {timeout_s:g} s")
            time.sleep(0.2)


def _report(
    stats_files: list[Path], m: dict[str, Any] | None, registered_s: float | None
) -> dict[str, Any]:
    """Print heartbeat latency as the NM processes measured it, and the
    cluster's final state; return both for `summary.json`."""
    merged = LatencyHistogram()
    lines = []
    per_nm = []
    for path in stats_files:
        if not path.is_file():
            continue
        s = json.loads(path.read_text())
        merged.merge(s["latency"])
        per_nm.append(
            {k: v for k, v in s.items() if k != "latency"}
            | {
                "p50_ms": s["latency"]["p50_ms"],
                "p99_ms": s["latency"]["p99_ms"],
            }
        )
        lines.append(
            f"  {path.stem}: {s['nodes']} nodes, registered in "
            f"{s['all_registered_s'] or float('nan'):.2f} s, {s['heartbeats']} heartbeats, "
            f"p50 {s['latency']['p50_ms']:.2f} ms, p99 {s['latency']['p99_ms']:.2f} ms, "
            f"errors {s['errors']}, resyncs {s['resyncs']}"
        )
    C.say("emu cluster: heartbeat latency (wall, measured in the NM processes)")
    for line in lines:
        C.say(line)
    C.say(
        f"  all: {merged.count} heartbeats, p50 {merged.quantile(0.5) * 1000:.2f} ms, "
        f"p99 {merged.quantile(0.99) * 1000:.2f} ms, max {merged.max_s * 1000:.2f} ms"
    )
    if m is not None:
        C.say(
            f"emu cluster: {m['active_nodes']} nodes active, {m['lost_nodes']} lost; "
            f"apps {m['apps_completed']} finished, {m['apps_failed']} failed, "
            f"{m['apps_killed']} killed, {m['apps_running']} running"
            + (f"; registration took {registered_s:.2f} s" if registered_s is not None else "")
        )
    return {
        "registered_s": registered_s,
        "latency": _latency_figures(merged),
        "nm": per_nm,
        "metrics": m,
    }


def _latency_figures(h: LatencyHistogram) -> dict[str, Any]:
    return {
        "count": h.count,
        "p50_ms": round(h.quantile(0.5) * 1000, 3),
        "p99_ms": round(h.quantile(0.99) * 1000, 3),
        "max_ms": round(h.max_s * 1000, 3),
    }


def latency_between(before: dict[str, Any] | None, after: dict[str, Any]) -> LatencyHistogram:
    """The heartbeats `after` (a LatencyHistogram.to_dict) holds that
    `before` (an earlier one of the same process, or None) did not: the
    histogram of a window. Its max is the upper bound of its top bucket."""
    h = LatencyHistogram()
    h.merge(after)
    if before is not None:
        for b, n in before.get("buckets", {}).items():
            left = h.buckets.get(int(b), 0) - n
            if left > 0:
                h.buckets[int(b)] = left
            else:
                h.buckets.pop(int(b), None)
        h.count = sum(h.buckets.values())
        top = max(h.buckets, default=None)
        h.max_s = min(h.max_s, h.FLOOR_S * h.STEP ** (top + 1)) if top is not None else 0.0
    return h


def _cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a live process so far (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # utime and stime are the 14th and 15th fields; fields[0] is the 3rd (state).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Window:
    """What the cluster did between every node registered and the stop:
    heartbeats and their latency (from the NM processes' statistics files,
    rewritten every second), CPU per process, and the RM's metrics every
    `every_s` wall seconds. Written to `summary.json` beside the totals."""

    def __init__(self, stats_files: list[Path], every_s: float = 10.0) -> None:
        self.stats_files = stats_files
        self.every_s = every_s
        self.t0: float | None = None
        self.t1: float | None = None
        self.nm0: dict[str, dict[str, Any]] = {}
        self.nm1: dict[str, dict[str, Any]] = {}
        self.cpu0: dict[str, float] = {}
        self.cpu1: dict[str, float] = {}
        self.samples: list[dict[str, Any]] = []
        self._next_sample = 0.0
        self._launch: _Launch | None = None

    def _read(self) -> dict[str, dict[str, Any]]:
        out = {}
        for path in self.stats_files:
            with contextlib.suppress(OSError, ValueError):
                out[path.stem] = json.loads(path.read_text())
        return out

    @staticmethod
    def _cpu(children: Children) -> dict[str, float]:
        cpu = {}
        for c in children.children:
            if c.proc.poll() is None and (s := _cpu_s(c.proc.pid)) is not None:
                cpu[c.name] = s
        return cpu

    def open(self, children: Children, launch: _Launch) -> None:
        self._launch = launch
        self.t0 = time.monotonic()
        self.nm0 = self._read()
        self.cpu0 = self._cpu(children)
        self._next_sample = self.t0

    def sample(self, launch: _Launch, force: bool = False) -> None:
        now = time.monotonic()
        if self.t0 is None or (now < self._next_sample and not force):
            return
        self._next_sample = now + self.every_s
        try:
            m = C.cluster_metrics(launch.rm.client, launch.curve, 2.0)
        except TransportError:
            return
        self.samples.append(
            {
                "wall_s": round(now - self.t0, 2),
                "sim_s": m["time_ms"] / 1000,
                "apps_running": m["apps_running"],
                "containers_allocated": m["containers_allocated"],
                "memory_used": m["utilization"]["memory"],
                "active_nodes": m["active_nodes"],
                "lost_nodes": m["lost_nodes"],
            }
        )

    def close(self, children: Children) -> None:
        if self.t0 is None:
            return
        rm_up = any(c.name == "rm" and c.proc.poll() is None for c in children.children)
        if self._launch is not None and rm_up:
            self.sample(self._launch, force=True)
        self.t1 = time.monotonic()
        self.nm1 = self._read()
        self.cpu1 = self._cpu(children)

    def figures(self) -> dict[str, Any]:
        """The window's figures (empty if it never opened)."""
        if self.t0 is None or self.t1 is None:
            return {}
        wall = max(self.t1 - self.t0, 1e-9)
        merged = LatencyHistogram()
        heartbeats = 0
        for name, end in self.nm1.items():
            start = self.nm0.get(name)
            h = latency_between(start["latency"] if start else None, end["latency"])
            merged.merge(h.to_dict())
            heartbeats += end["heartbeats"] - (start["heartbeats"] if start else 0)
        cpu = {
            name: round(self.cpu1[name] - self.cpu0[name], 2)
            for name in self.cpu1
            if name in self.cpu0
        }
        return {
            "window_s": round(wall, 2),
            "window": {
                "heartbeats": heartbeats,
                "heartbeats_per_s": round(heartbeats / wall, 1),
                "latency": _latency_figures(merged),
                "cpu_s": cpu,
                "cpu_pct": {name: round(100 * s / wall, 1) for name, s in cpu.items()},
            },
            "samples": self.samples,
        }


# --- status ---------------------------------------------------------------------------------------
def cluster_status(args: argparse.Namespace) -> int:
    """Print (or --json) a cluster's metrics, nodes and apps; 1 if it cannot be asked."""
    rm = C.rm_addresses(args.rm)
    keys = (
        security.load(args.keys, serving=False, client_key=args.client_key) if args.keys else None
    )
    curve = keys.client if keys else None
    try:
        if args.wait_nodes and not _await_active_nodes(rm.client, curve, args):
            return 1
        with C.SyncClient(rm.client, curve) as client:
            metrics = client.call("cluster_metrics", timeout=args.timeout)["metrics"]
            nodes = client.call("list_nodes", timeout=args.timeout)["nodes"]
            apps = client.call("list_apps", timeout=args.timeout)["apps"]
    except TransportError as e:
        C.warn(f"error: {e}")
        return 1
    if args.json:
        C.say(json.dumps({"metrics": metrics, "nodes": nodes, "apps": apps}, indent=1))
    else:
        _print_status(args.rm, metrics, nodes, apps)
    return 0


def _await_active_nodes(address: str, curve: Curve | None, args: argparse.Namespace) -> bool:
    """Wait up to --timeout for --wait-nodes active nodes; False (said why) if they never were."""
    deadline = time.monotonic() + args.timeout
    while True:
        left = deadline - time.monotonic()
        active = C.cluster_metrics(address, curve, max(left, 0.5))["active_nodes"]
        if active >= args.wait_nodes:
            return True
        if time.monotonic() >= deadline:
            C.warn(f"error: {active} of {args.wait_nodes} nodes active after {args.timeout:g} s")
            return False
        time.sleep(0.5)


def _print_status(
    where: str, metrics: dict[str, Any], nodes: list[dict[str, Any]], apps: list[dict[str, Any]]
) -> None:
    """The human-readable `emu cluster status`: a summary line, then tables of
    the first 50 nodes and the last 50 apps."""
    by_state: dict[str, int] = {}
    for n in nodes:
        by_state[n["state"]] = by_state.get(n["state"], 0) + 1
    total = metrics["total"]
    C.say(
        f"cluster at {where}: rate {metrics.get('rate', 0):g}, simulated "
        f"{metrics['time_ms'] / 1000:.1f} s; capacity {total['memory-mb']} MB / "
        f"{total['vcores']} vcores, utilization memory {metrics['utilization']['memory']:.1%}"
    )
    C.say("nodes: " + (", ".join(f"{k} {v}" for k, v in sorted(by_state.items())) or "none"))
    _table(
        [("node", "rack", "state", "containers", "used MB", "nm address")]
        + [
            (
                n["node_id"],
                n["rack"],
                n["state"],
                str(n["num_containers"]),
                str(n["used"]["memory-mb"]),
                n["nm_address"],
            )
            for n in nodes[:50]
        ]
    )
    if len(nodes) > 50:
        C.say(f"... and {len(nodes) - 50} more nodes (--json for all)")
    C.say(
        f"apps: {metrics['apps_submitted']} submitted, {metrics['apps_running']} running, "
        f"{metrics['apps_completed']} finished, {metrics['apps_failed']} failed, "
        f"{metrics['apps_killed']} killed"
    )
    _table(
        [("app", "name", "queue", "state", "attempts", "submit s", "finish s")]
        + [
            (
                a["app_id"],
                a["name"],
                a["queue"],
                a["state"],
                str(a["attempts"]),
                f"{a['submit_ms'] / 1000:.1f}",
                f"{a['finished_ms'] / 1000:.1f}" if a["finished_ms"] >= 0 else "-",
            )
            for a in apps[-50:]
        ]
    )
    auth = metrics.get("auth")
    if auth:
        C.say(f"CURVE: {auth['allowed']} handshakes admitted, {auth['refused']} refused")


def _table(rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        C.say("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
