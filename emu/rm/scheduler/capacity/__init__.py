"""Hadoop's CapacityScheduler, emulated.

Select it with `yarn.resourcemanager.scheduler.class` = `capacity` (or
Hadoop's class name; it is also the default). Its configuration is read
from the RM's Configuration, i.e. capacity-scheduler.xml and yarn-site.xml
properties under their Hadoop names; with no `root.queues` there is one
leaf, `root.default`, at 100 %, as in Hadoop's shipped file.

What is emulated, with YARN's defaults:
- queues: `capacity` (percent, or weights `Nw`), `maximum-capacity`,
  `minimum-user-limit-percent`, `user-limit-factor`,
  `maximum-allocation-mb/-vcores`, `maximum-applications`,
  `maximum-am-resource-percent`, `state`, `acl_submit_applications`,
  `acl_administer_queue` (enforced with `yarn.acl.enable`),
  `disable_preemption`, `ordering-policy` (fifo/fair; utilization or
  priority-utilization for parents), `priority`;
- global: `maximum-applications`, `maximum-am-resource-percent`,
  `resource-calculator`, `node-locality-delay`,
  `rack-locality-additional-delay`, `rack-locality-full-reset`,
  `reservations-continue-look-all-nodes`,
  `per-node-heartbeat.maximum-offswitch-assignments` /
  `multiple-assignments-enabled` / `maximum-container-assignments`,
  `queue-mappings` and `queue-mappings-override.enable` (groups from
  `hadoop.user.group.static.mapping.overrides`),
  `yarn.cluster.max-application-priority`;
- preemption: `yarn.resourcemanager.scheduler.monitor.enable` with
  ProportionalCapacityPreemptionPolicy and its
  `yarn.resourcemanager.monitor.capacity.preemption.*` settings
  (observe_only, monitoring_interval, max_wait_before_kill,
  total_preemption_per_round, max_ignored_over_capacity,
  natural_termination_factor). A refresh can change these or turn the
  monitor off; turning it on or changing its interval needs a restart;
- auto-created queues: legacy managed parents
  (`auto-create-child-queue.enabled`, `leaf-queue-template.*`) and
  flexible ones (`auto-queue-creation-v2.*`, templates, two levels), made
  at submission for a mapping such as `u:%user:parent.%user`, and
  AutoCreatedQueueDeletionPolicy as a monitor policy (`auto_queues`).

Resource calculators, as in Hadoop: with the default
(`DefaultResourceCalculator`) every decision - node fit, reservations,
headroom, queue and user limits, AM limits, preemption - looks at memory
alone, and asks are granted as memory plus one vcore (vcores are
over-committed, extra resource types are not granted). With the
`DominantResourceCalculator` asks are granted as asked and every resource
type counts: fit in every type, comparisons by dominant share.

Node labels (partitions): a node's label from the topology file
(`gpu`, or `gpu(exclusive=false)` for a non-exclusive one; the property
`yarn.node-labels.enabled` must be true, as in Hadoop), queues'
`accessible-node-labels` (inherited; root `*`),
`accessible-node-labels.<label>.capacity` / `.maximum-capacity` and
`default-node-label-expression`, and an SLS job's `job.label.expression`
for its AM and tasks. A node serves only asks of its partition, within
each queue's capacities and usage there; a non-exclusive node left idle
by them serves default-partition asks (IGNORE_PARTITION_EXCLUSIVITY, no
AM containers, once an ask has missed one scheduling opportunity per
node), each queue up to the whole partition. AM limits count per
partition. Preemption works per partition, as Hadoop's does: each
partition's guarantees, usage and asks decide what is taken back on its
nodes (default-partition containers on a non-exclusive node first), and
intra-queue preemption weighs apps and users by their usage and asks in
the partition.

Reservable queues (`reservable`) are built as Hadoop builds them even
without a reservation system: the leaf becomes a plan (a parent) whose one
child, `<name>-default`, takes the apps submitted to it; that queue's AM
resource percent is 0, so it runs one app at a time (ReservationQueue).

Capacities in resources (`[memory=...,vcores=...]`) are emulated as
Hadoop's legacy queue mode computes them: effective resources from the root
down whenever the cluster changes (`queues.update_absolute`), and per node
label from the partition's resource whenever it changes
(`queues.update_absolute_labels`). User weights
scale each user's user limit and split it among active users by weight.
Auto-created queues (legacy managed parents and flexible/v2 parents) are
created on an app's first submission (`auto_queues`). Node labels
(partitions) are matched to asks, exclusive and non-exclusive, with
per-partition queue capacities and usage.

Not emulated: per-label queue settings other than capacity and
maximum-capacity, QueueManagementDynamicEditPolicy (legacy auto-created
queues keep the guarantee they were created with), reservations themselves
(plan followers, reservation queues other than the default one); their
properties are refused or accepted without effect as `emu.config.support`
decides (docs/configuration.md).

- `config`               capacity-scheduler.xml -> validated, immutable queue settings
- `placement`            which leaf an app joins: mappings, names, ACLs, state
- `auto_queues`          the settings with a queue created for an app, or removed
- `queue_manager`        queues created, removed when idle, or refreshed, in the
                         live tree (CapacitySchedulerQueueManager,
                         AutoCreatedQueueDeletionPolicy)
- `queues`               the live queue tree: usage, users, user/AM limits, ordering
- `max_running_apps`     max-parallel-apps (CSMaxRunningAppsEnforcer)
- `allocator`            one app's turn on a node: locality delay, reservations
- `scheduler`            CapacityScheduler: node updates, the assignment walk,
                         usage, headroom, refresh
- `node_labels`          a node's partition, and what relabelling nodes moves
- `queue_reports`        queue metrics and info, usage per partition
- `preemption_snapshot`  the queue tree as the preemption policy sees it
- `preemption`           ProportionalCapacityPreemptionPolicy
- `intra_preemption`     IntraQueueCandidatesSelector
- `resource_math`        Hadoop's `Resources` helpers with calculator semantics
"""

from emu.rm.scheduler.capacity.scheduler import CapacityScheduler

__all__ = ["CapacityScheduler"]
