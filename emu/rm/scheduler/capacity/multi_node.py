"""Global scheduling with multi-node placement
(`yarn.scheduler.capacity.multi-node-placement-enabled`), as Hadoop's
CapacityScheduler, MultiNodeSortingManager and MultiNodeSorter do it.

With it on, an offer is not one node but every node of a partition that has
heartbeated recently (CapacityScheduler.getCandidateNodeSet): the reserved
nodes among them are tried first, then the queues are walked once for the
whole set, and each app walks its *preferred nodes* in turn until one takes
a container (RegularContainerAllocator.allocate); a reservation is made only
on the last node of the walk.

An app's preferred nodes come from its sorting policy: the policy class its
leaf names (`<queue>.multi-node-sorting.policy`, else the global
`multi-node-sorting.policy`, each a name whose `.class` is set), fixed when
the attempt is made. Only the policies listed in `multi-node-sorting.policy.names`
have a sorter; an app with no policy, or one no sorter runs, gets the first
candidate alone (MultiNodeSortingManager.getMultiNodeSortIterator's
fallback). Hadoop 3.4.2 and 3.5.0 ship one policy, ResourceUsageMultiNodeLookupPolicy:
nodes by allocated resource (memory, then vcores, then the other types),
then by NodeId. A sorter with a positive `sorting-interval.ms` (1,000 by
default) sorts each partition's nodes on that interval, and an app walks the
order of the last sort, whatever has been allocated since (the skip list
keeps its order); with interval 0 the candidates are sorted afresh for every
app's turn. Hadoop's sorter thread runs on the wall clock; here it runs on
emu's (the RM's `_sort_loop`), so both implementations sort at the same
simulated instants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.rm.scheduler import javahash

if TYPE_CHECKING:
    from emu.rm.scheduler.scheduler_node import SchedulerNode

PREFIX = "yarn.scheduler.capacity."
ENABLED = PREFIX + "multi-node-placement-enabled"
POLICY = PREFIX + "multi-node-sorting.policy"
POLICY_NAMES = POLICY + ".names"
RESOURCE_USAGE = (
    "org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement."
    "ResourceUsageMultiNodeLookupPolicy"
)
DEFAULT_NAME = "default"
"""The one policy name whose class need not be given (CapacitySchedulerConfiguration)."""
DEFAULT_INTERVAL_MS = 1000
AS_OPERATORS_TURN_IT_ON = {
    ENABLED: "true",
    POLICY_NAMES: "default",
    POLICY: "default",
    f"{POLICY}.default.class": RESOURCE_USAGE,
}
"""Multi-node placement as operators turn it on: the resource-usage policy
for every queue, sorted every second (the benchmark's and tests' setting)."""


@dataclass(frozen=True, slots=True)
class MultiNodeConf:
    """What the configuration says about multi-node placement."""

    enabled: bool = False
    sorters: dict[str, int] = field(default_factory=dict)
    """The policy classes a MultiNodeSorter runs for, each with its sorting
    interval in ms (0: sorted on every use)."""
    global_policy: str | None = None
    """The class of `multi-node-sorting.policy`, for queues naming none."""
    queue_policy: dict[str, str | None] = field(default_factory=dict)
    """The class each queue that sets `<queue>.multi-node-sorting.policy` names."""

    def policy_of(self, queue: str) -> str | None:
        """The sorting policy class an app of leaf `queue` gets
        (CapacitySchedulerConfiguration.getMultiNodesSortingAlgorithmPolicy)."""
        return self.queue_policy.get(queue, self.global_policy)

    @property
    def interval_ms(self) -> int:
        """The interval the sorter emu runs resorts on; 0 when none does."""
        return self.sorters.get(RESOURCE_USAGE, 0) if self.enabled else 0


def _fail(conf: Configuration, name: str, message: str) -> InputError:
    return InputError(conf.sources.get(name, "configuration"), name, message)


def _class_of(conf: Configuration, key: str, name: str, hadoop: bool) -> str:
    """The class of policy `name` (read for `key`); emu's port knows one."""
    class_key = f"{POLICY}.{name}.class"
    cls = (conf.get(class_key) or "").strip()
    if not cls:
        raise _fail(
            conf,
            key,
            f"sorting policy {name!r} has no class: set {class_key} "
            f"(Hadoop's own is {RESOURCE_USAGE})",
        )
    if cls != RESOURCE_USAGE and not hadoop:
        raise _fail(
            conf,
            class_key,
            f"{cls} is not a policy emu's CapacityScheduler implements (it has "
            f"{RESOURCE_USAGE.rsplit('.', 1)[1]}, the one Hadoop ships); "
            "run Hadoop's own scheduler with --scheduler-impl hadoop",
        )
    return cls


def parse(conf: Configuration, queues: list[str], hadoop: bool = False) -> MultiNodeConf:
    """Read multi-node placement's settings; a policy without a class, a
    class emu's port does not implement (unless Hadoop's own scheduler
    decides, `hadoop`), a negative sorting interval, or two names for one
    class with different intervals (Hadoop keeps one of them, which one
    depending on identity hash codes) is refused, naming the property."""
    sorters: dict[str, int] = {}
    for raw in (conf.get(POLICY_NAMES) or "").split(","):
        name = raw.strip()
        if not name:
            continue
        class_key = f"{POLICY}.{name}.class"
        if name == DEFAULT_NAME and not (conf.get(class_key) or "").strip():
            cls = RESOURCE_USAGE
        else:
            cls = _class_of(conf, POLICY_NAMES, name, hadoop)
        interval_key = f"{POLICY}.{name}.sorting-interval.ms"
        interval = conf.get_int(interval_key, DEFAULT_INTERVAL_MS)
        if interval < 0:
            raise _fail(conf, interval_key, f"must be 0 or more, got {interval}")
        if sorters.get(cls, interval) != interval:
            raise _fail(
                conf,
                interval_key,
                f"another policy name gives {cls.rsplit('.', 1)[1]} a sorting interval of "
                f"{sorters[cls]} ms: Hadoop runs one sorter per class and keeps one of the "
                "two at random",
            )
        sorters[cls] = interval
    global_name = (conf.get(POLICY) or "").strip()
    global_policy = _class_of(conf, POLICY, global_name, hadoop) if global_name else None
    queue_policy: dict[str, str | None] = {}
    for queue in queues:
        key = f"{PREFIX}{queue}.multi-node-sorting.policy"
        name = (conf.get(key) or "").strip()
        if conf.get(key) is not None:
            # Set but empty: this queue sorts nothing, whatever the global policy says.
            queue_policy[queue] = _class_of(conf, key, name, hadoop) if name else None
    return MultiNodeConf(
        enabled=conf.get_bool(ENABLED, False),
        sorters=sorters,
        global_policy=global_policy,
        queue_policy=queue_policy,
    )


def usage_key(node: SchedulerNode) -> tuple[int, int, tuple[tuple[str, int], ...], str]:
    """ResourceUsageMultiNodeLookupPolicy's comparator: allocated resource
    (Resource.compareTo: memory, vcores, then the other types), then NodeId
    (host; emu's nodes all have port 0)."""
    a = node.allocated
    return (a.memory, a.vcores, a.extra, node.host)


def sort_partitions(
    nodes_by_partition: dict[str, list[SchedulerNode]],
) -> dict[str, list[str]]:
    """MultiNodeSorter.reSortClusterNodes: each partition's nodes in the
    policy's order now, as node ids."""
    return {
        p: [n.node_id for n in sorted(nodes, key=usage_key)]
        for p, nodes in nodes_by_partition.items()
        if nodes
    }


class MultiNodePlacement:
    """The scheduler's side of multi-node placement: each partition's
    candidate nodes (CapacityScheduler.getNodesHeartbeated), the sorter's
    last order (MultiNodeSorter), each app's policy, and an app's preferred
    nodes (MultiNodeSortingManager.getMultiNodeSortIterator).

    `nodes`, `partition_of` and `beats` are the scheduler's live maps (node
    id to node, labelled node id to partition, node id to the simulated ms
    of its last heartbeat)."""

    def __init__(
        self,
        conf: MultiNodeConf,
        nodes: dict[str, SchedulerNode],
        partition_of: dict[str, str],
        beats: dict[str, int],
        skip_ms: int,
    ) -> None:
        self.conf = conf
        self.nodes = nodes
        self.partition_of = partition_of
        self.beats = beats
        self.skip_ms = skip_ms
        self.app_policy: dict[str, str | None] = {}
        """Each app's sorting policy class, fixed when its first attempt is
        made (FiCaSchedulerApp.updateMultiNodeSortingPolicy puts it in the
        RMApp's scheduling environment)."""
        self.sorted: dict[str, list[SchedulerNode]] = {}
        """Each partition's nodes in the order of the sorter's last run."""
        self._by_partition: dict[str, list[SchedulerNode]] | None = None
        self._peak_partitions = 1
        self._oldest_beat = -1
        """A lower bound of every node's last heartbeat: while now is within
        the skip interval of it, no node is stale and none is filtered."""

    def invalidate(self) -> None:
        """Nodes came, went or changed partition."""
        self._by_partition = None
        self._oldest_beat = -1
        nodes = self.nodes
        for p, order in self.sorted.items():
            if any(n.node_id not in nodes for n in order):
                self.sorted[p] = [n for n in order if n.node_id in nodes]

    def by_partition(self) -> dict[str, list[SchedulerNode]]:
        """ClusterNodeTracker's nodesPerLabel: each partition's nodes in the
        order they joined it."""
        groups = self._by_partition
        if groups is None:
            groups = {}
            partition_of = self.partition_of
            for node_id, node in self.nodes.items():
                groups.setdefault(partition_of.get(node_id, ""), []).append(node)
            self._by_partition = groups
            self._peak_partitions = max(self._peak_partitions, len(groups))
        return groups

    def partitions(self) -> list[str]:
        """ClusterNodeTracker.getPartitions: the partitions holding nodes, in
        its HashMap's order."""
        groups = self.by_partition()
        return javahash.hash_order(list(groups), javahash.string_hash, self._peak_partitions)

    def fresh(self, node: SchedulerNode, now: int) -> bool:
        """SchedulerUtils.isNodeHeartbeated, on emu's clock."""
        return now - self.beats[node.node_id] <= self.skip_ms

    def all_fresh(self, now: int) -> bool:
        if self._oldest_beat < 0 or now - self._oldest_beat > self.skip_ms:
            beats = self.beats
            self._oldest_beat = min((beats[n] for n in self.nodes), default=now)
        return now - self._oldest_beat <= self.skip_ms

    def candidates(self, partition: str, now: int) -> list[SchedulerNode]:
        """CapacityScheduler.getNodesHeartbeated: the partition's nodes that
        heartbeated within the skip interval, in the order of the
        HashMap<NodeId, node> Hadoop puts them in."""
        nodes = self.by_partition().get(partition, [])
        if not self.all_fresh(now):
            nodes = [n for n in nodes if self.fresh(n, now)]
        return javahash.hashmap_order(
            nodes,
            [javahash.node_id_hash(n.host, 0) for n in nodes],
            javahash.capacity_for(len(nodes)),
        )

    def sort(self) -> bool:
        """One run of the sorter thread; whether any partition's order changed."""
        changed = False
        for p, nodes in self.by_partition().items():
            order = sorted(nodes, key=usage_key)
            if order != self.sorted.get(p):
                self.sorted[p] = order
                changed = True
        return changed

    def preferred(
        self, app_id: str, candidates: list[SchedulerNode], partition: str, now: int
    ) -> list[SchedulerNode]:
        """The nodes an app walks (AppPlacementAllocator.getPreferredNodeIterator):
        a lone candidate; the first candidate when the app has no policy or
        no sorter runs for it; else its sorter's order, sorted now when its
        interval is 0, those that missed heartbeats left out."""
        if len(candidates) == 1:
            return candidates
        policy = self.app_policy.get(app_id)
        sorters = self.conf.sorters
        if policy is None or policy not in sorters or not candidates:
            return candidates[:1]
        if sorters[policy] == 0:
            return sorted(candidates, key=usage_key)
        order = self.sorted.get(partition, [])
        if self.all_fresh(now):
            return order
        return [n for n in order if self.fresh(n, now)]
