"""Node labels in the CapacityScheduler: the partition a node joins, what
a change of nodes' labels moves, and which queue uses a label.

A node's first label is its partition (YARN allows one). When an admin
relabels nodes (CapacityScheduler.updateNodeLabelsAndQueueResource), each
node takes its new partition with the usage of the containers running on
it (FiCaSchedulerApp.nodePartitionUpdated: app, user and queues up the
tree, and the AM's usage if the AM runs there), a reservation on it is
given up, and the partitions' resources follow; the scheduler then updates
the queues' capacities (root updateClusterResource) and lets waiting apps
start. Which partition each node is in, each label's exclusivity and each
partition's resource are the scheduler's (`node_partition`, `exclusive`,
`partition_resource`), as RMNodeLabelsManager keeps them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource
from emu.rm.container import RMContainer
from emu.rm.scheduler import javahash
from emu.rm.scheduler.capacity.config import CapacityConf

if TYPE_CHECKING:
    from emu.rm.scheduler.capacity.scheduler import CapacityScheduler
    from emu.rm.scheduler.scheduler_app import SchedulerApp


def node_added(sched: CapacityScheduler, node_id: str, spec: str, resource: Resource) -> None:
    """A node registers with label `spec`, its partition; a label the
    cluster does not know yet is added with the node's exclusivity
    (`name(exclusive=false)`), as addToClusterNodeLabels."""
    name = spec.split("(", 1)[0].strip()
    if name not in sched.exclusive:
        sched.exclusive[name] = sched.ctx.node_labels.exclusive.get(
            name, "exclusive=false" not in spec.replace(" ", "").lower()
        )
    sched.node_partition[node_id] = name
    sched.partition_resource[name] = sched.partition_resource.get(name, ZERO) + resource


def relabel(sched: CapacityScheduler, changed: dict[str, str]) -> None:
    """updateLabelsOnNode for each node in `changed` (node id to its new
    label): its containers' usage moves to the new partition, its
    reservation is given up, and the partitions' resources follow."""
    known = sched.ctx.node_labels.exclusive
    for name, exclusive in known.items():
        sched.exclusive[name] = exclusive
        # RMNodeLabelsManager holds every cluster label, of no resource
        # until a node has it.
        sched.partition_resource.setdefault(name, ZERO)
    for node_id, new in sorted(changed.items()):
        node = sched.nodes.get(node_id)
        if node is None:
            continue
        old = sched.node_partition.get(node_id, "")
        if old == new:
            continue
        for cid in sorted(node.containers):
            if cid in sched.held_on_node:
                continue
            c = node.containers[cid]
            sapp = sched.apps.get(c.attempt_id)
            if sapp is not None:
                _partition_updated(sched, c, sapp, old, new)
        if node.reserved is not None:
            sched.unreserve(sched.apps.get(node.reserved.attempt_id), node)
        if old:
            sched.partition_resource[old] = sched.partition_resource[old] - node.total
            del sched.node_partition[node_id]
        if new:
            sched.partition_resource[new] = sched.partition_resource.get(new, ZERO) + node.total
            sched.node_partition[node_id] = new
    gone = [n for n, r in sched.partition_resource.items() if n not in known and r.is_zero()]
    for name in gone:
        del sched.partition_resource[name]


def _partition_updated(
    sched: CapacityScheduler, c: RMContainer, sapp: SchedulerApp, old: str, new: str
) -> None:
    """FiCaSchedulerApp.nodePartitionUpdated for one running container."""
    leaf = sched.app_leaf.get(c.app_id)
    if leaf is None:
        return
    r = c.resource
    for partition, delta in ((old, ZERO - r), (new, r)):
        u = leaf.user(sapp.user)
        if partition:
            leaf.charge_in(partition, delta, ZERO)
            u.used_in[partition] = u.used_in.get(partition, ZERO) + delta
        else:
            leaf.charge(delta, ZERO)
            u.used = u.used + delta
            # decUsedResource/incUsedResource: updateUserResourceUsage
            leaf.update_usage_ratio(u, sched.calc, sched.default_env.cluster)
    leaf.touch()
    if c.is_am and sapp in leaf.active:
        am = sapp.am_resource
        u = leaf.user(sapp.user)
        was = leaf.am_partition.pop(sapp.attempt_id, "")
        if was:
            leaf.am_used_in[was] = leaf.am_used_in.get(was, ZERO) - am
            u.am_used_in[was] = u.am_used_in.get(was, ZERO) - am
        else:
            leaf.am_used = leaf.am_used - am
            u.am_used = u.am_used - am
        if new:
            leaf.am_partition[sapp.attempt_id] = new
            leaf.am_used_in[new] = leaf.am_used_in.get(new, ZERO) + am
            u.am_used_in[new] = u.am_used_in.get(new, ZERO) + am
        else:
            leaf.am_used = leaf.am_used + am
            u.am_used = u.am_used + am


def queue_using_label(cs: CapacityConf, label: str) -> str | None:
    """The queue Hadoop's RMNodeLabelsManager names first (its map of
    queue paths to accessible labels, in HashMap order)."""
    using = [p for p, q in cs.queues.items() if label in q.accessible_labels]
    if not using:
        return None
    return javahash.hash_order(using, javahash.string_hash, len(cs.queues))[0]
