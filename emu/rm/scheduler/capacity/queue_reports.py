"""What clients and metrics read of the CapacityScheduler's queues.

- `queue_metrics`: a queue's QueueMetrics by path or short name; a parent's
  are its leaves' summed (Hadoop's parent QueueMetrics roll up its
  children's).
- `queue_info`: each queue's report for REST, the CLI, the web views and
  the timeline (CapacitySchedulerQueueInfo): settings, capacities, usage,
  apps and, for a leaf, users and AM usage; with node labels, per label.
- `partition_usage`: per partition, its resource and the usage and pending
  asks of the root and each leaf there, for the SLS gauges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emu.resources import ZERO, Resource
from emu.rm.scheduler.abstract_scheduler import DEFAULT_PARTITION, PartitionUsage
from emu.rm.scheduler.capacity.queues import LeafQueue, ParentQueue, Queue, leaves_under
from emu.rm.scheduler.queue_metrics import QueueMetrics

if TYPE_CHECKING:
    from emu.rm.scheduler.capacity.scheduler import CapacityScheduler


def queue_metrics(sched: CapacityScheduler, name: str) -> QueueMetrics:
    """The metrics of the queue with path or short name `name` (empty ones
    for an unknown queue)."""
    q = sched.queues.get(name)
    if q is not None:
        return q
    path = name if name in sched.tree else None
    if path is None:
        found = sched.cs.by_short_name(name)
        path = found[0] if len(found) == 1 else None
    if path is None:
        return QueueMetrics(name)
    queue = sched.tree[path]
    if isinstance(queue, LeafQueue):
        return queue.metrics
    total = QueueMetrics(path)
    for leaf in leaves_under(queue):
        _add_metrics(total, leaf.metrics)
    return total


def queue_info(sched: CapacityScheduler, name: str) -> list[dict[str, Any]]:
    """The report of the queue with path or short name `name`, or of every
    queue for ""."""
    if name:
        path = name if name in sched.tree else None
        if path is None:
            found = sched.cs.by_short_name(name)
            path = found[0] if len(found) == 1 else None
        paths = [path] if path is not None else []
    else:
        paths = list(sched.tree)
    return [_info(sched, sched.tree[p]) for p in paths]


def _info(sched: CapacityScheduler, q: Queue) -> dict[str, Any]:
    info = queue_metrics(sched, q.path).to_dict()
    c = q.conf
    info.update(
        {
            "name": q.path,
            "type": "leaf" if isinstance(q, LeafQueue) else "parent",
            "state": c.state,
            "capacity": c.capacity,
            "maximum_capacity": c.maximum_capacity,
            "absolute_capacity": q.absolute_capacity * 100,
            "absolute_maximum_capacity": q.absolute_maximum_capacity * 100,
            "used_capacity": (
                q.used_capacity(sched.default_env) * 100 if not sched.cluster.is_zero() else 0.0
            ),
            "absolute_used_capacity": q.absolute_used_capacity(sched.default_env) * 100,
            "used": q.used.to_wire(),
            "num_applications": q.num_apps,
        }
    )
    if isinstance(q, ParentQueue):
        info["children"] = [child.path for child in q.children]
    else:
        assert isinstance(q, LeafQueue)
        info.update(
            {
                "active_applications": len(q.active),
                "pending_applications": len(q.pending),
                "active_users": q.num_active_users(),
                "user_limit_percent": c.user_limit_percent,
                "user_limit_factor": c.user_limit_factor,
                "am_used": q.am_used.to_wire(),
                "max_applications": q.max_applications,
            }
        )
    labels = sorted(set(sched.cs.labels) | set(sched.partition_resource))
    if labels:
        _partition_info(sched, q, labels, info)
    return info


def _partition_info(
    sched: CapacityScheduler, q: Queue, labels: list[str], info: dict[str, Any]
) -> None:
    """With node labels: the labels the queue may use, its usage over all
    partitions (`used_total`), and per label its capacities and usage
    (QueueCapacities and ResourceUsage by partition)."""
    c = q.conf
    total = q.used
    partitions = []
    for label in labels:
        env = sched.env_for(label, False)
        rel = q.label_sizes.get(label) or c.label_capacity.get(label)
        absolute, absolute_max = q.absolute_in(label)
        used = q.used_in.get(label, ZERO)
        total = total + used
        entry: dict[str, Any] = {
            "partition": label,
            "capacity": rel[0] if rel is not None else 0.0,
            "maximum_capacity": rel[1] if rel is not None else 100.0,
            "absolute_capacity": absolute * 100,
            "absolute_maximum_capacity": absolute_max * 100,
            "used_capacity": (q.used_capacity(env) * 100 if not env.cluster.is_zero() else 0.0),
            "absolute_used_capacity": q.absolute_used_capacity(env) * 100,
            "used": used.to_wire(),
            "reserved": q.reserved_in.get(label, ZERO).to_wire(),
        }
        if isinstance(q, LeafQueue):
            entry["am_used"] = q.am_used_in.get(label, ZERO).to_wire()
        partitions.append(entry)
    info["accessible_labels"] = sorted(c.accessible_labels)
    info["default_label_expression"] = c.default_label
    info["used_total"] = total.to_wire()
    info["partitions"] = partitions


def partition_usage(sched: CapacityScheduler) -> list[PartitionUsage]:
    """Per partition: its nodes' resource (the default one's is what no
    label holds), the root's usage there and each
    leaf's (`used` is the default partition's, `used_in` a label's; both
    count reservations, as Hadoop's ResourceUsage.getUsed), and each
    leaf's pending asks in the partition its apps ask for
    (ResourceUsage.getPending)."""
    if not sched.partition_resource:
        return []
    leaves = [q for q in sched.tree.values() if isinstance(q, LeafQueue)]
    pending: dict[str, dict[str, Resource]] = {}
    for sapp in sched.apps.values():
        asked = sapp.pending
        leaf = sched.app_leaf.get(sapp.app_id)
        if leaf is None or asked.is_zero():
            continue
        by_leaf = pending.setdefault(sched.app_label.get(sapp.app_id, ""), {})
        by_leaf[leaf.path] = by_leaf.get(leaf.path, ZERO) + asked
    labelled = ZERO
    for total in sched.partition_resource.values():
        labelled = labelled + total
    out = [
        PartitionUsage(
            DEFAULT_PARTITION,
            sched.cluster - labelled,
            sched.root.used,
            {q.path: q.used for q in leaves},
            pending.get(DEFAULT_PARTITION, {}),
        )
    ]
    for label in sorted(sched.partition_resource):
        out.append(
            PartitionUsage(
                label,
                sched.partition_resource[label],
                sched.root.used_in.get(label, ZERO),
                {q.path: q.used_in[label] for q in leaves if label in q.used_in},
                pending.get(label, {}),
            )
        )
    return out


def _add_metrics(total: QueueMetrics, m: QueueMetrics) -> None:
    for name in (
        "allocated",
        "pending",
        "reserved",
    ):
        setattr(total, name, getattr(total, name) + getattr(m, name))
    for name in (
        "allocated_containers",
        "apps_submitted",
        "apps_running",
        "apps_pending",
        "apps_completed",
        "apps_failed",
        "apps_killed",
        "containers_allocated_total",
        "containers_released_total",
        "preempted_containers",
    ):
        setattr(total, name, getattr(total, name) + getattr(m, name))
