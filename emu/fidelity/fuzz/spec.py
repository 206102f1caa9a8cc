"""One generated case: the cluster, the workload and the configuration, as data.

A `FuzzCase` is what the generator draws and what the shrinker cuts down: a
plain structure (it round-trips through JSON, `case.json` beside every kept
case) that `write` turns into Hadoop's own files, the same files a user
would bring: an SLS trace, an SLS topology file and a configuration
directory (yarn-site.xml, sls-runner.xml, capacity-scheduler.xml or
fair-scheduler.xml). Both implementations then replay those files with
`emu sls`, so a reproducer is a fidelity case as it stands.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from emu.config.hadoop_xml import configuration_xml
from emu.fidelity.suite import Case

SCHEDULER_CLASS = "yarn.resourcemanager.scheduler.class"
_PACKAGE = "org.apache.hadoop.yarn.server.resourcemanager.scheduler"
CLASSES = {
    "fifo": f"{_PACKAGE}.fifo.FifoScheduler",
    "capacity": f"{_PACKAGE}.capacity.CapacityScheduler",
    "fair": f"{_PACKAGE}.fair.FairScheduler",
}


@dataclass
class Node:
    name: str
    rack: str
    labels: str = ""
    """YARN's label list as a topology file writes it (`gpu`, `x(exclusive=false)`)."""


@dataclass
class Tasks:
    """One `job.tasks` entry: `count` containers alike."""

    count: int
    duration_ms: int
    memory_mb: int
    vcores: int
    priority: int
    type: str = "map"
    host: str = ""
    """`/rack/node` the containers prefer, or none."""


@dataclass
class Job:
    id: str
    queue: str
    user: str
    start_ms: int
    tasks: list[Tasks]
    am_memory_mb: int = 0
    """0: the AM container of sls-runner.xml."""
    label: str = ""
    priority: int = 0

    def trace_entry(self) -> dict[str, object]:
        end = self.start_ms + max(t.duration_ms for t in self.tasks)
        job: dict[str, object] = {
            "am.type": "mapreduce",
            "job.start.ms": self.start_ms,
            "job.end.ms": end,
            "job.queue.name": self.queue,
            "job.id": self.id,
            "job.user": self.user,
        }
        if self.am_memory_mb:
            job["am.memory-mb"] = self.am_memory_mb
        if self.label:
            job["job.label.expression"] = self.label
        if self.priority:
            job["job.priority"] = self.priority
        tasks = []
        for t in self.tasks:
            entry: dict[str, object] = {
                "count": t.count,
                "container.start.ms": 0,
                "container.end.ms": t.duration_ms,
                "container.priority": t.priority,
                "container.type": t.type,
                "container.memory-mb": t.memory_mb,
                "container.vcores": t.vcores,
            }
            if t.host:
                entry["container.host"] = t.host
            tasks.append(entry)
        job["job.tasks"] = tasks
        return job


@dataclass
class Queue:
    """A queue of either scheduler's tree: its settings by their own names
    (a capacity-scheduler.xml key's last part, or an allocation file element)."""

    name: str
    settings: dict[str, str] = field(default_factory=dict)
    children: list[Queue] = field(default_factory=list)

    def leaves(self, prefix: str = "") -> list[tuple[str, Queue]]:
        path = f"{prefix}.{self.name}" if prefix else self.name
        if not self.children:
            return [(path, self)]
        return [leaf for c in self.children for leaf in c.leaves(path)]

    def walk(self, prefix: str = "") -> list[tuple[str, Queue]]:
        path = f"{prefix}.{self.name}" if prefix else self.name
        return [(path, self)] + [q for c in self.children for q in c.walk(path)]


@dataclass
class FuzzCase:
    """A generated case; see the module docstring."""

    name: str
    kind: str
    """The class the campaign's table counts it in (fifo, capacity, ...)."""
    scheduler: str
    """fifo, capacity or fair."""
    nodes: list[Node]
    jobs: list[Job]
    nm_memory_mb: int = 8192
    nm_vcores: int = 8
    am_memory_mb: int = 1024
    site: dict[str, str] = field(default_factory=dict)
    """yarn-site.xml besides the scheduler class."""
    scheduler_conf: dict[str, str] = field(default_factory=dict)
    """capacity-scheduler.xml's properties not tied to a queue, or the
    allocation file's top-level elements."""
    root: Queue = field(default_factory=lambda: Queue("root"))
    placement: list[dict[str, str]] = field(default_factory=list)
    """The allocation file's queuePlacementPolicy rules (Fair), as attributes."""
    hadoop_version: str = ""
    """The Hadoop release both implementations follow (`emu.hadoop.version`
    in yarn-site.xml); empty for the default, 3.4.2."""

    # -- files -----------------------------------------------------------------

    def write(self, where: Path) -> Case:
        """Hadoop's files for this case under `where`; the fidelity Case that replays them."""
        conf = where / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        site = {SCHEDULER_CLASS: CLASSES[self.scheduler], **self.site}
        if self.hadoop_version:
            site["emu.hadoop.version"] = self.hadoop_version
        if self.scheduler == "fair":
            site["yarn.scheduler.fair.allocation.file"] = "fair-scheduler.xml"
            (conf / "fair-scheduler.xml").write_text(self.allocation_file(), encoding="utf-8")
        elif self.scheduler == "capacity":
            (conf / "capacity-scheduler.xml").write_text(
                configuration_xml(self.capacity_properties()), encoding="utf-8"
            )
        if any(n.labels for n in self.nodes):
            site["yarn.node-labels.enabled"] = "true"
        (conf / "yarn-site.xml").write_text(configuration_xml(site), encoding="utf-8")
        runner = {
            "yarn.sls.nm.memory.mb": str(self.nm_memory_mb),
            "yarn.sls.nm.vcores": str(self.nm_vcores),
            "yarn.sls.nm.heartbeat.interval.ms": "1000",
            "yarn.sls.am.heartbeat.interval.ms": "1000",
            "yarn.sls.am.container.memory": str(self.am_memory_mb),
            "yarn.sls.am.container.vcores": "1",
            # The comparison reads containers.csv and jobruntime.csv only; the
            # per-second metrics would double the cost of a replay by Hadoop's
            # scheduler (its queues asked for their usage every second).
            "yarn.sls.metrics.switch": "OFF",
        }
        (conf / "sls-runner.xml").write_text(configuration_xml(runner), encoding="utf-8")
        racks: dict[str, list[dict[str, str]]] = {}
        for n in self.nodes:
            entry = {"node": n.name}
            if n.labels:
                entry["labels"] = n.labels
            racks.setdefault(n.rack, []).append(entry)
        (where / "nodes.json").write_text(
            "\n".join(json.dumps({"rack": r, "nodes": ns}) for r, ns in racks.items()) + "\n",
            encoding="utf-8",
        )
        (where / "trace.json").write_text(
            "\n".join(json.dumps(j.trace_entry()) for j in self.jobs) + "\n", encoding="utf-8"
        )
        return Case(
            name=self.name,
            what=f"generated {self.kind} case",
            traces=(where / "trace.json",),
            nodes=where / "nodes.json",
            conf=conf,
            properties={SCHEDULER_CLASS: CLASSES[self.scheduler]},
        )

    def capacity_properties(self) -> dict[str, str]:
        props = dict(self.scheduler_conf)
        for path, q in self.root.walk():
            prefix = f"yarn.scheduler.capacity.{path}"
            if q.children:
                props[f"{prefix}.queues"] = ",".join(c.name for c in q.children)
            for key, value in q.settings.items():
                props[f"{prefix}.{key}"] = value
        return props

    def allocation_file(self) -> str:
        lines = ['<?xml version="1.0"?>', "<allocations>"]
        for key, value in self.scheduler_conf.items():
            lines.append(f"  <{key}>{escape(value)}</{key}>")

        def queue(q: Queue, depth: int) -> None:
            pad = "  " * depth
            lines.append(f"{pad}<queue name={quoteattr(q.name)}>")
            for key, value in q.settings.items():
                lines.append(f"{pad}  <{key}>{escape(value)}</{key}>")
            for c in q.children:
                queue(c, depth + 1)
            lines.append(f"{pad}</queue>")

        for c in self.root.children:
            queue(c, 1)
        if self.placement:
            lines.append("  <queuePlacementPolicy>")
            for rule in self.placement:
                attrs = " ".join(f"{k}={quoteattr(v)}" for k, v in rule.items())
                lines.append(f"    <rule {attrs}/>")
            lines.append("  </queuePlacementPolicy>")
        lines.append("</allocations>")
        return "\n".join(lines) + "\n"

    # -- JSON ------------------------------------------------------------------

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @staticmethod
    def from_json(text: str) -> FuzzCase:
        d = json.loads(text)

        def queue(q: dict) -> Queue:
            return Queue(q["name"], dict(q["settings"]), [queue(c) for c in q["children"]])

        return FuzzCase(
            name=d["name"],
            kind=d["kind"],
            scheduler=d["scheduler"],
            nodes=[Node(**n) for n in d["nodes"]],
            jobs=[Job(**{**j, "tasks": [Tasks(**t) for t in j["tasks"]]}) for j in d["jobs"]],
            nm_memory_mb=d["nm_memory_mb"],
            nm_vcores=d["nm_vcores"],
            am_memory_mb=d["am_memory_mb"],
            site=dict(d["site"]),
            scheduler_conf=dict(d["scheduler_conf"]),
            root=queue(d["root"]),
            placement=[dict(r) for r in d["placement"]],
            hadoop_version=d.get("hadoop_version", ""),
        )

    def features(self) -> list[str]:
        """The mechanisms this case exercises, as the campaign's per-feature
        table names them: a divergence counts against each."""
        found: set[str] = set()
        settings = [
            (path, key, value) for path, q in self.root.walk() for key, value in q.settings.items()
        ]
        keys = {key.rsplit(".", 1)[-1] if "." in key else key for _, key, _ in settings}
        site, conf = self.site, self.scheduler_conf
        if any(t.host for j in self.jobs for t in j.tasks):
            found.add("preferred hosts")
        if any(t.type == "reduce" for j in self.jobs for t in j.tasks):
            found.add("reduces")
        if len(self.root.walk()) > 1 + len(self.root.children):
            found.add("two-level tree")
        if self.scheduler == "capacity":
            capacities = [v for _, k, v in settings if k == "capacity"]
            if any(v.endswith("w") for v in capacities):
                found.add("capacity: weights")
            if any(v.startswith("[") for v in capacities):
                found.add("capacity: absolute resources")
            if "Dominant" in conf.get("yarn.scheduler.capacity.resource-calculator", ""):
                found.add("capacity: dominant resource calculator")
            if any("auto-queue-creation-v2.enabled" in k for _, k, _ in settings):
                found.add("capacity: auto-created queues")
            for name, label in (
                ("maximum-applications", "maximum applications"),
                ("max-parallel-apps", "max-parallel-apps"),
                ("user-limit-factor", "user-limit-factor"),
                ("minimum-user-limit-percent", "minimum-user-limit-percent"),
                ("maximum-am-resource-percent", "AM resource percent"),
                ("weight", "user weights"),
                ("priority", "queue priorities"),
            ):
                if name in keys or any(k.endswith(name) for k in conf):
                    found.add(f"capacity: {label}")
            if any(k == "ordering-policy" and v == "fair" for _, k, v in settings):
                found.add("capacity: fair ordering policy")
            if any(k.endswith("queue-mappings") for k in conf):
                found.add("capacity: queue mappings")
            if any(k.endswith("node-locality-delay") for k in conf):
                found.add("capacity: node-locality-delay")
            if any(n.labels for n in self.nodes):
                found.add("capacity: node labels")
            cap = "yarn.scheduler.capacity."
            if conf.get(cap + "multi-node-placement-enabled") == "true":
                found.add("capacity: multi-node placement")
                if not conf.get(cap + "multi-node-sorting.policy"):
                    found.add("capacity: multi-node, no sorting policy")
                elif any(k.endswith("sorting-interval.ms") and v == "0" for k, v in conf.items()):
                    found.add("capacity: multi-node, sorted on every use")
            if self.hadoop_version == "3.5.0" and (
                conf.get(cap + "schedule-asynchronously.enable", "") != "false"
            ):
                found.add("capacity: asynchronous scheduling")
            if site.get("yarn.resourcemanager.scheduler.monitor.enable") == "true":
                found.add("capacity: preemption")
                if any(k.endswith("intra-queue-preemption.enabled") for k in site):
                    found.add("capacity: intra-queue preemption")
        elif self.scheduler == "fair":
            policies = {v for _, k, v in settings if k == "schedulingPolicy"}
            policies.add(conf.get("defaultQueueSchedulingPolicy", "fair"))
            found.update(f"fair: {p} policy" for p in policies)
            for name in (
                "minResources",
                "maxResources",
                "maxRunningApps",
                "maxAMShare",
                "maxChildResources",
            ):
                if name in keys:
                    found.add(f"fair: {name}")
            if self.placement:
                found.add("fair: placement rules")
            if site.get("yarn.scheduler.fair.assignmultiple") == "true":
                found.add("fair: assignmultiple")
            if any("locality.threshold" in k for k in site):
                found.add("fair: locality thresholds")
            if site.get("yarn.scheduler.fair.preemption") == "true":
                found.add("fair: preemption")
                if (
                    "minSharePreemptionTimeout" in keys
                    or "defaultMinSharePreemptionTimeout" in conf
                ):
                    found.add("fair: min-share preemption")
        return sorted(found)

    def size(self) -> tuple[int, int, int, int]:
        """What the shrinker makes smaller: jobs, containers, nodes, settings."""
        settings = len(self.site) + len(self.scheduler_conf)
        settings += sum(len(q.settings) for _, q in self.root.walk())
        containers = sum(t.count for j in self.jobs for t in j.tasks)
        return (len(self.jobs), containers, len(self.nodes), settings)
