"""The cluster across "hosts": Linux network namespaces joined by a bridge.

The RM runs in one namespace, NM processes in two others; each namespace is
linked by a veth pair to a bridge living in a fourth namespace, with
addresses 10.77.0.1-3 assigned inside the namespaces this test creates
(nothing is added to the machine's own network namespace). Taking one
host's bridge port down partitions it: its nodes become LOST; bringing it
back up, they register again and take work.

Needs root and `ip netns`; skipped, with the reason, where either is
missing or not permitted. Namespaces (and with them the veths) and
processes are removed by the fixture whatever happens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from emu.processes.cluster import Child
from tests.multiprocess.procs import LocalCluster, write_scenario

pytestmark = pytest.mark.timeout(180)

SUBNET = "10.77.0"
REPO = Path(__file__).resolve().parents[2]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=10)


def _netns_unavailable() -> str | None:
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    name = f"emuprobe{uuid.uuid4().hex[:6]}"
    try:
        made = _ip("netns", "add", name, check=False)
        if made.returncode != 0:
            return f"`ip netns add` is not permitted here: {made.stderr.strip()}"
        bridge = _ip("-n", name, "link", "add", "br0", "type", "bridge", check=False)
        if bridge.returncode != 0:
            return f"cannot create a bridge in a namespace: {bridge.stderr.strip()}"
    finally:
        _ip("netns", "del", name, check=False)
    return None


class Topology:
    """Namespaces rm/h1/h2 on a bridge in namespace br."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:5]
        self.tag = tag
        self.ns = {h: f"emu{tag}{h}" for h in ("br", "rm", "h1", "h2")}
        self.addr = {"rm": f"{SUBNET}.1", "h1": f"{SUBNET}.2", "h2": f"{SUBNET}.3"}
        self.created: list[str] = []

    def port(self, host: str) -> str:
        """The bridge-side end of `host`'s veth pair."""
        return f"b{self.tag}{host}"

    def up(self) -> None:
        for ns in self.ns.values():
            _ip("netns", "add", ns)
            self.created.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        br = self.ns["br"]
        _ip("-n", br, "link", "add", "br0", "type", "bridge")
        _ip("-n", br, "link", "set", "br0", "up")
        for host, address in self.addr.items():
            inner, outer = f"v{self.tag}{host}", self.port(host)
            _ip(
                "link", "add", "name", inner, "netns", self.ns[host],
                "type", "veth", "peer", "name", outer, "netns", br,
            )  # fmt: skip
            _ip("-n", self.ns[host], "addr", "add", f"{address}/24", "dev", inner)
            _ip("-n", self.ns[host], "link", "set", inner, "up")
            _ip("-n", br, "link", "set", outer, "master", "br0")
            _ip("-n", br, "link", "set", outer, "up")

    def link(self, host: str, state: str) -> None:
        _ip("-n", self.ns["br"], "link", "set", self.port(host), state)

    def wrap(self, host: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns[host]]

    def down(self) -> None:
        for ns in reversed(self.created):
            _ip("netns", "del", ns, check=False)
        self.created.clear()


class NetnsCluster(LocalCluster):
    """A LocalCluster whose clients run inside the RM's namespace."""

    def __init__(self, work: Path, topo: Topology, **kw: Any) -> None:
        self.topo = topo
        # A namespace of our own: every port is free there.
        super().__init__(work, host=topo.addr["rm"], port_base=18030, **kw)
        self.probe: subprocess.Popen[str] | None = None

    def call(self, mtype: str, timeout: float = 5.0, **fields: Any) -> dict[str, Any]:
        if self.probe is None:
            self.probe = subprocess.Popen(
                [
                    *self.topo.wrap("rm"),
                    sys.executable,
                    "-m",
                    "tests.hosts.probe",
                    self.client_address,
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=REPO,
                start_new_session=True,
            )
            self.children.children.append(Child("probe", self.probe))  # type: ignore[arg-type]
        assert self.probe.stdin is not None and self.probe.stdout is not None
        self.probe.stdin.write(f"{mtype} {json.dumps(fields)}\n")
        self.probe.stdin.flush()
        reply = json.loads(self.probe.stdout.readline())
        if "error" in reply:
            from emu.transport import RequestTimeout

            raise RequestTimeout(reply["error"])
        assert reply["type"] != "error", reply
        return reply

    def stop(self) -> None:
        super().stop()
        if self.probe is not None:
            for pipe in (self.probe.stdin, self.probe.stdout):
                if pipe is not None:
                    pipe.close()

    def check_alive(self) -> None:
        for c in self.children.children:
            if c.name in ("replay", "probe") or c.proc.poll() is None:
                continue
            raise AssertionError(f"{c.name} exited with {c.proc.returncode}:\n{self.log(c.name)}")


@pytest.fixture
def topology():
    reason = _netns_unavailable()
    if reason is not None:
        pytest.skip(reason)
    topo = Topology()
    try:
        topo.up()
        yield topo
    finally:
        topo.down()


def test_partitioned_host_loses_its_nodes_and_gets_them_back(topology, tmp_path: Path) -> None:
    cluster = NetnsCluster(
        tmp_path,
        topology,
        rate=20.0,
        conf={"yarn.nm.liveness-monitor.expiry-interval-ms": 20_000},
    )
    try:
        cluster.start_rm(wrap=topology.wrap("rm"))
        rm_spec = f"{topology.addr['rm']}:{cluster.port_base}"
        for host in ("h1", "h2"):
            cluster.start_nm(host, 2, wrap=topology.wrap(host), rm_spec=rm_spec)
        cluster.wait_nodes(4)
        nodes = cluster.call("list_nodes")["nodes"]
        # Each NM process advertised its own namespace's address.
        assert {n["nm_address"].split(":")[1] for n in nodes} == {
            f"//{topology.addr['h1']}",
            f"//{topology.addr['h2']}",
        }

        jobs = [{"id": f"job_{i}", "submit_ms": i * 2_000, "maps": 6} for i in range(3)]
        scenario = write_scenario(tmp_path / "jobs.toml", jobs)
        summary = cluster.wait_replay(cluster.replay(scenario, wrap=topology.wrap("rm")))
        assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * 3

        topology.link("h1", "down")
        cluster.wait(lambda m: m["lost_nodes"] >= 2, 30, "h1's nodes to be LOST")
        states = cluster.nodes()
        assert states["h1-1"] == states["h1-2"] == "LOST"
        assert states["h2-1"] == states["h2-2"] == "RUNNING"

        topology.link("h1", "up")
        cluster.wait(lambda m: m["active_nodes"] == 4, 60, "h1's nodes to register again")
        assert set(cluster.nodes().values()) == {"RUNNING"}

        # More work than h2 alone can hold: h1's nodes take some of it.
        busy = [{"id": f"big_{i}", "maps": 12, "map_ms": 30_000} for i in range(2)]
        replay = cluster.replay(
            write_scenario(tmp_path / "big.toml", busy), wrap=topology.wrap("rm")
        )
        used_on_h1 = 0
        while replay.proc.poll() is None:
            for n in cluster.call("list_nodes")["nodes"]:
                if n["node_id"].startswith("h1-"):
                    used_on_h1 = max(used_on_h1, n["num_containers"])
            time.sleep(0.2)
        summary = cluster.wait_replay(replay)
        assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * 2
        assert used_on_h1 > 0
    finally:
        cluster.stop()
