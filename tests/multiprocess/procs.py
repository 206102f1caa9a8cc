"""A local cluster of real `python -m emu` processes, for tests.

Every process runs in its own process group and is stopped (SIGTERM, then
SIGKILL) by `LocalCluster.stop`, which the fixtures call whatever happens.
Clients talk to the RM with the blocking `SyncClient`, so tests need no trio.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from emu.processes.cluster import Child, Children, emu_argv
from emu.processes.common import SyncClient, free_port_base
from emu.transport import Curve, TransportError

RATE = 40.0


def write_scenario(path: Path, jobs: Sequence[dict[str, Any]], am_heartbeat_ms: int = 1000) -> Path:
    """A native scenario with MapReduce jobs: dicts of id, submit_ms, maps,
    reduces, map_ms, reduce_ms. Its [cluster] has only the AM heartbeat: a
    replay onto a running cluster refuses node or configuration sections."""
    lines = ['name = "mp"', "[cluster]"]
    lines.append(f"am_heartbeat_ms = {am_heartbeat_ms}")
    for j in jobs:
        lines += [
            "[[jobs]]",
            f'id = "{j["id"]}"',
            'type = "mapreduce"',
            f"submit_ms = {j.get('submit_ms', 0)}",
            "[[jobs.tasks]]",
            'type = "map"',
            f"count = {j.get('maps', 4)}",
            f"duration_ms = {j.get('map_ms', 20_000)}",
            "memory_mb = 1024",
        ]
        if j.get("reduces", 1):
            lines += [
                "[[jobs.tasks]]",
                'type = "reduce"',
                f"count = {j.get('reduces', 1)}",
                f"duration_ms = {j.get('reduce_ms', 10_000)}",
                "memory_mb = 1024",
            ]
    path.write_text("\n".join(lines) + "\n")
    return path


class LocalCluster:
    """An RM and NM processes on loopback, started on demand."""

    def __init__(
        self,
        work: Path,
        rate: float = RATE,
        conf: dict[str, object] | None = None,
        keys: str | None = None,
        host: str = "127.0.0.1",
        port_base: int | None = None,
    ) -> None:
        self.work = work
        self.rate = rate
        self.conf = {"yarn.resourcemanager.scheduler.class": "fifo", **(conf or {})}
        self.keys = keys
        self.host = host
        self.port_base = port_base or free_port_base(host)
        self.rm_spec = f"{host}:{self.port_base}"
        self.client_address = f"tcp://{host}:{self.port_base + 2}"
        self.children = Children()
        self.rm: Child | None = None
        self.nms: dict[str, Child] = {}
        self.curve: Curve | None = None
        if keys:
            from emu import security

            self.curve = security.load(keys, serving=False).client

    # --- processes ------------------------------------------------------------------
    def _keys(self) -> list[object]:
        return ["--keys", self.keys] if self.keys else []

    def start_rm(self, *extra: object, wrap: Sequence[str] = ()) -> Child:
        args: list[object] = ["rm", "--host", self.host, "--port-base", self.port_base]
        args += ["--rate", self.rate, *self._keys(), "--log-level", "warning", *extra]
        for k, v in self.conf.items():
            args += ["--conf", f"{k}={v}"]
        argv = [*wrap, *emu_argv(*args)]
        self.rm = self.children.start("rm", argv, self.work / "rm.log")
        self.wait_rm()
        return self.rm

    def start_nm(
        self,
        name: str,
        count: int,
        *extra: object,
        prefix: str | None = None,
        rack: str | None = None,
        wrap: Sequence[str] = (),
        rm_spec: str | None = None,
    ) -> Child:
        args: list[object] = [
            "nm",
            "--rm",
            rm_spec or self.rm_spec,
            "--count",
            count,
            "--name-prefix",
            prefix or f"{name}-",
            "--rack",
            rack or f"/{name}",
            "--memory-mb",
            4096,
            "--vcores",
            4,
            "--stats-file",
            self.work / f"{name}.json",
            *self._keys(),
            "--log-level",
            "warning",
            *extra,
        ]
        argv = [*wrap, *emu_argv(*args)]
        child = self.nms[name] = self.children.start(name, argv, self.work / f"{name}.log")
        return child

    def replay(
        self, scenario: Path, *extra: object, wrap: Sequence[str] = (), rm_spec: str | None = None
    ) -> Child:
        out = self.work / "out"
        args: list[object] = ["replay", "--rm", rm_spec or self.rm_spec, scenario]
        args += ["--output-dir", out, *self._keys(), *extra]
        argv = [*wrap, *emu_argv(*args)]
        return self.children.start("replay", argv, self.work / "replay.log")

    def kill(self, child: Child) -> None:
        """kill -9 of the child's whole process group."""
        os.killpg(child.proc.pid, signal.SIGKILL)
        child.proc.wait()

    def stop(self) -> None:
        self.children.stop_all(grace_s=3.0)

    # --- observing ------------------------------------------------------------------------
    def call(self, mtype: str, timeout: float = 5.0, **fields: Any) -> dict[str, Any]:
        with SyncClient(self.client_address, self.curve) as client:
            reply = client.call(mtype, timeout=timeout, **fields)
        assert reply["type"] != "error", reply
        return reply

    def metrics(self) -> dict[str, Any]:
        return self.call("cluster_metrics")["metrics"]

    def nodes(self) -> dict[str, str]:
        return {n["node_id"]: n["state"] for n in self.call("list_nodes")["nodes"]}

    def apps(self) -> list[dict[str, Any]]:
        return self.call("list_apps")["apps"]

    def wait_rm(self, timeout: float = 30.0) -> dict[str, Any]:
        return self.wait(lambda m: m, timeout, what="the RM to answer")

    def wait(
        self, predicate: Callable[[dict[str, Any]], Any], timeout: float = 60.0, what: str = ""
    ) -> Any:
        """Poll cluster metrics until `predicate(metrics)` is truthy."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                last = self.metrics()
                result = predicate(last)
                if result:
                    return result
            except TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what or predicate}; last metrics {last}")

    def wait_nodes(self, n: int, timeout: float = 30.0) -> None:
        self.wait(lambda m: m["active_nodes"] >= n, timeout, what=f"{n} active nodes")

    def check_alive(self) -> None:
        for c in self.children.children:
            if c.name == "replay" or c.proc.poll() is None or c.proc.returncode == -9:
                continue
            raise AssertionError(f"{c.name} exited with {c.proc.returncode}:\n{self.log(c.name)}")

    def log(self, name: str) -> str:
        path = self.work / f"{name}.log"
        return path.read_text(errors="replace")[-4000:] if path.is_file() else ""

    def wait_replay(self, child: Child, timeout: float = 120.0) -> dict[str, Any]:
        """Wait for a replay to exit 0; its summary.json."""
        deadline = time.monotonic() + timeout
        while child.proc.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"replay still running after {timeout} s:\n{self.log('replay')}\n"
                    + self.diagnose()
                )
            time.sleep(0.2)
        assert child.proc.returncode == 0, self.log("replay")
        return json.loads((self.work / "out" / "summary.json").read_text())

    def diagnose(self) -> str:
        """What a stuck run looks like from outside (a rare hang after an
        RM restart under load left only an empty replay log): the RM's
        apps, metrics and nodes if it answers, and every child's log tail."""
        parts = []
        try:
            apps = [{k: a.get(k) for k in ("app_id", "state", "diagnostics")} for a in self.apps()]
            parts += [f"apps: {apps}", f"metrics: {self.metrics()}", f"nodes: {self.nodes()}"]
        except (TransportError, AssertionError) as e:
            parts.append(f"the RM does not answer: {e}")
        for c in self.children.children:
            if c.name != "replay":
                parts.append(f"--- {c.name} (exit {c.proc.poll()}):\n{self.log(c.name)}")
        return "\n".join(parts)

    def nm_stats(self, name: str) -> dict[str, Any]:
        return json.loads((self.work / f"{name}.json").read_text())
