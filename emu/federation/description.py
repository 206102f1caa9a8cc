"""A federation file: sub-clusters, the federation's policies, the workload.

One TOML file in the shape of a scenario file (`emu.scenario.native`), whose
cluster is a list of sub-clusters::

    name = "two-subclusters"
    seed = 1

    [federation]                    # the Router's and AMRMProxy's yarn-site.xml
    "yarn.federation.policy-manager" = "...policies.manager.WeightedLocalityPolicyManager"
    "yarn.federation.policy-manager-params" = '{"routerPolicyWeights": ...}'

    [config]                        # every sub-cluster RM's properties
    "yarn.resourcemanager.scheduler.class" = "...fair.FairScheduler"

    [[subclusters]]
    id = "SC-1"
    racks = 2                       # or nodes = [...], or nodes_file = "sls-nodes.json"
    nodes_per_rack = 4
    conf_dir = "sc1"                # optional: a Hadoop configuration directory
    [subclusters.config]            # optional: properties over it

    [[jobs]] ...  or  [trace] ...   # as in a scenario file

A sub-cluster's properties are `[config]`, then its `conf_dir`'s files, then
its own `[subclusters.config]`. Generated nodes are named after their
sub-cluster (`SC-1-node1` on `/SC-1-rack1`) so no two sub-clusters share a
host. Everything is checked before anything runs; a refusal names the file
and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emu import preflight
from emu.config.configuration import Configuration
from emu.errors import InputError, check_keys
from emu.federation.policies import PolicyManager, manager_from_conf
from emu.resources import Resource
from emu.scenario import native
from emu.scenario.limits import JAVA_INT_MAX
from emu.scenario.queues import check_capacity_queues
from emu.scenario.topology import read_nodes_file
from emu.workload import NodeSpec, Workload

TOP_KEYS = {
    "name",
    "description",
    "seed",
    "federation",
    "config",
    "subclusters",
    "jobs",
    "trace",
    "faults",
}
FAULT_KINDS = ("subcluster_down", "subcluster_up")
SUBCLUSTER_KEYS = {
    "id",
    "racks",
    "nodes_per_rack",
    "node_memory_mb",
    "node_vcores",
    "nodes",
    "nodes_file",
    "conf_dir",
    "config",
}
# Hadoop's SubClusterId is any string; emu's names address paths and files.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
AM_HEARTBEAT_MS = "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms"


@dataclass
class SubCluster:
    """One sub-cluster: its id (Hadoop's SubClusterId), its RM's
    configuration and its nodes."""

    id: str
    conf: Configuration
    nodes: list[NodeSpec]


@dataclass(frozen=True)
class SubClusterFault:
    """A sub-cluster's RM going down (its process gone: nothing answers, no
    membership heartbeat) or coming back (a new RM process, recovering its
    apps if `yarn.resourcemanager.recovery.enabled`)."""

    at_ms: int
    kind: str
    target: str


@dataclass
class Federation:
    """A federation file, read and checked."""

    name: str
    description: str
    seed: int
    conf: Configuration
    """The federation's own properties (`yarn.federation.*`): the Router's,
    the AMRMProxy's and the Global Policy Generator's."""
    subclusters: list[SubCluster]
    workload: Workload
    policy: PolicyManager
    am_heartbeat_ms: int = 1000
    path: str = ""
    faults: list[SubClusterFault] = field(default_factory=list)


FEDERATION_PREFIXES = ("yarn.federation.", "yarn.router.")
"""Properties of the federation's own actors (Router, AMRMProxy, GPG)."""


def load(path: str | Path, overrides: dict[str, tuple[str, str]] | None = None) -> Federation:
    """Read and check a federation file; InputError names what is wrong.
    `overrides` (property -> value and the flag that set it) go over the
    file: a federation property (`FEDERATION_PREFIXES`) over [federation],
    any other over every sub-cluster's configuration."""
    path = str(path)
    data = native._read_toml(path)
    r = native._Reader(path)
    check_keys(path, data, TOP_KEYS)
    name = r.str_(data, "name", "", Path(path).stem)
    seed = r.int_(data, "seed", "", 0)
    fed_conf = _federation_conf(r, data)
    rm_overrides = {}
    for prop, (value, source) in (overrides or {}).items():
        if prop.startswith(FEDERATION_PREFIXES):
            fed_conf.set(prop, value, source)
        else:
            rm_overrides[prop] = (value, source)
    policy = manager_from_conf(fed_conf, path)
    base = native._config(r, data)
    entries = r.list_(data, "subclusters", "")
    if not entries:
        raise r.fail("subclusters", "a federation has at least one sub-cluster")
    subclusters: list[SubCluster] = []
    owner: dict[str, str] = {}
    for i, entry in enumerate(entries):
        sc = _subcluster(r, entry, f"subclusters[{i}].", base, Path(path).parent)
        for prop, (value, source) in rm_overrides.items():
            sc.conf.set(prop, value, source)
        if any(s.id == sc.id for s in subclusters):
            raise r.fail(f"subclusters[{i}].id", f"sub-cluster {sc.id!r} is listed twice")
        for n in sc.nodes:
            other = owner.setdefault(n.host, sc.id)
            if other != sc.id:
                raise r.fail(
                    f"subclusters[{i}]",
                    f"host {n.host!r} is in sub-cluster {other!r} too: "
                    "a node belongs to one sub-cluster",
                )
        subclusters.append(sc)
    policy.check_subclusters(path, [s.id for s in subclusters])
    jobs = native._workload_jobs(r, data, subclusters[0].conf)
    keyed = [(f"jobs: {j.job_id}: queue", j) for j in jobs]
    for sc in subclusters[1:]:
        check_capacity_queues(path, sc.conf, keyed)
    faults = _faults(r, data, [s.id for s in subclusters])
    return Federation(
        name=name,
        description=str(data.get("description", "")),
        seed=seed,
        conf=fed_conf,
        subclusters=subclusters,
        workload=Workload(jobs),
        policy=policy,
        am_heartbeat_ms=base.get_int(AM_HEARTBEAT_MS, 1000),
        path=path,
        faults=faults,
    )


def _faults(r: native._Reader, data: dict[str, Any], ids: list[str]) -> list[SubClusterFault]:
    """[[faults]]: sub-clusters going down and coming back, in time order;
    a sub-cluster comes back only after it went down."""
    faults = []
    for i, f in enumerate(r.list_(data, "faults", "")):
        p = f"faults[{i}]."
        if not isinstance(f, dict):
            raise r.fail(p.rstrip("."), "expected a table")
        check_keys(r.path, f, {"at_ms", "kind", "target"}, p)
        kind = r.str_(f, "kind", p)
        if kind not in FAULT_KINDS:
            raise r.fail(
                f"{p}kind", f"unknown kind {kind!r} (expected one of {', '.join(FAULT_KINDS)})"
            )
        target = r.str_(f, "target", p)
        if target not in ids:
            raise r.fail(
                f"{p}target", f"no sub-cluster {target!r} (the federation has {', '.join(ids)})"
            )
        faults.append(SubClusterFault(r.int_(f, "at_ms", p, None, 0), kind, target))
    faults.sort(key=lambda f: f.at_ms)
    down: set[str] = set()
    for f in faults:
        if f.kind == "subcluster_down":
            if f.target in down:
                raise r.fail("faults", f"{f.target} goes down at {f.at_ms} ms while it is down")
            down.add(f.target)
        elif f.target not in down:
            raise r.fail("faults", f"{f.target} comes back at {f.at_ms} ms but was not down")
        else:
            down.discard(f.target)
    return faults


def _federation_conf(r: native._Reader, data: dict[str, Any]) -> Configuration:
    """[federation]: Hadoop properties of the federation (names checked)."""
    table = data.get("federation", {})
    if not isinstance(table, dict):
        raise r.fail("federation", "expected a table")
    return native.property_table(r, table, "federation.", Configuration())


def _subcluster(
    r: native._Reader, entry: Any, p: str, base: Configuration, here: Path
) -> SubCluster:
    if not isinstance(entry, dict):
        raise r.fail(p.rstrip("."), "expected a table")
    check_keys(r.path, entry, SUBCLUSTER_KEYS, p)
    sid = r.str_(entry, "id", p)
    if _ID.fullmatch(sid) is None:
        raise r.fail(f"{p}id", f"{sid!r}: letters, digits, '.', '_' and '-' only")
    conf = Configuration()
    conf.update(base)
    if "conf_dir" in entry:
        d = Path(r.str_(entry, "conf_dir", p))
        d = d if d.is_absolute() else here / d
        if not d.is_dir():
            raise r.fail(f"{p}conf_dir", f"no such directory: {d}")
        conf.update(preflight.read_configuration(str(d), {}).conf)
    own = entry.get("config", {})
    if not isinstance(own, dict):
        raise r.fail(f"{p}config", "expected a table")
    native.property_table(r, own, f"{p}config.", conf)
    mem = r.int_(entry, "node_memory_mb", p, 8192, 1)
    vcores = r.int_(entry, "node_vcores", p, 8, 1, JAVA_INT_MAX)
    given = [k for k in ("racks", "nodes", "nodes_file") if k in entry]
    if len(given) > 1:
        raise r.fail(p + given[1], f"give one of racks, nodes and nodes_file, not {given}")
    if "nodes_file" in entry:
        f = Path(r.str_(entry, "nodes_file", p))
        f = f if f.is_absolute() else here / f
        nodes = read_nodes_file(f, nm_default=Resource(mem, vcores))
        if not nodes:
            raise r.fail(f"{p}nodes_file", f"{f}: no nodes")
    elif "nodes" in entry:
        nodes = native._nodes(r, {"nodes": entry["nodes"]}, mem, vcores)
    else:
        racks = r.int_(entry, "racks", p, 1, 1, JAVA_INT_MAX)
        per_rack = r.int_(entry, "nodes_per_rack", p, 4, 1, JAVA_INT_MAX)
        if racks * per_rack > native.MAX_NODES:
            raise r.fail(
                p.rstrip("."), f"{racks * per_rack} nodes: emu runs at most {native.MAX_NODES}"
            )
        nodes = [
            NodeSpec(
                f"{sid}-node{k * per_rack + i + 1}", f"/{sid}-rack{k + 1}", Resource(mem, vcores)
            )
            for k in range(racks)
            for i in range(per_rack)
        ]
    return SubCluster(sid, conf, nodes)


def check_configurations(fed: Federation) -> None:
    """Each sub-cluster's RM configuration as `emu run` checks one (the
    scheduler built once, unsupported properties refused); the refusal
    names the sub-cluster."""
    for sc in fed.subclusters:
        try:
            preflight.check_configuration(sc.conf)
        except InputError as e:
            raise InputError(
                e.path, f"sub-cluster {sc.id}: {e.where or ''}".rstrip(": "), e.message
            ) from None
