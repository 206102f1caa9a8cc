"""Why an app waits at its queue's limit in a node partition, in words.

A queue that may use a label (`accessible-node-labels`) but configures no
`accessible-node-labels.<label>.*` property has nothing for the label in
Hadoop's QueueCapacities: its maximum there is 0, so an app asking for the
label waits for ever, with only "queue at max capacity" to go on. The
why-pending line then names the label and the property to set, which is the
one thing the user can change (`emu.rm.diagnostics.no_capacity_in_label`).
"""

from __future__ import annotations

from emu.rm.diagnostics import no_capacity_in_label
from emu.rm.scheduler import activities as act
from emu.rm.scheduler.capacity.config import LABELS_KEY, PREFIX
from emu.rm.scheduler.capacity.queues import Queue

_reasons: dict[tuple[tuple[str, ...], str], str] = {}
"""The line per (queues without capacity, partition): an app waiting there
is told at every node offer, and the scheduler's hot path must not format a
string each time."""


def queue_max(leaf: Queue, partition: str) -> str:
    """`act.QUEUE_MAX`, or, in a labelled partition some queue from the root
    to `leaf` configures no capacity in, the line that says so."""
    if not partition:
        return act.QUEUE_MAX
    missing: list[str] = []
    q: Queue | None = leaf
    while q is not None and q.parent is not None:  # root has every configured label
        if partition not in q.conf.label_capacity:
            missing.append(q.path)
        q = q.parent
    if not missing:
        return act.QUEUE_MAX
    missing.reverse()
    key = (tuple(missing), partition)
    reason = _reasons.get(key)
    if reason is None:
        properties = [f"{PREFIX}{path}.{LABELS_KEY}.{partition}.capacity" for path in missing]
        reason = _reasons[key] = no_capacity_in_label(partition, missing, properties)
    return reason
