"""The iteration order of Java's HashMap and HashSet, for the places where
Hadoop's schedulers walk one and the order decides something.

- FairScheduler: FSPreemptionThread offers a starved app's ask the nodes of
  ClusterNodeTracker.getAllNodes (a HashMap keyed by NodeId) in that map's
  order, and on each node the containers of SchedulerNode's
  launchedContainers (keyed by ContainerId) through
  getRunningContainersWithAMsAtTheEnd; the first that do the job win, and
  are killed app by app in the order of PreemptableContainers'
  containersByApp (a HashMap keyed by ApplicationId).
- FairScheduler: FSAppAttempt.getStarvedResourceRequests walks the app's
  asks through AppSchedulingInfo.getAllResourceRequests, two
  ConcurrentHashMaps (SchedulerRequestKey to LocalityAppPlacementAllocator,
  then resource name to ResourceRequest); the first asks that cover the
  starvation are the ones preemption makes room for.
- CapacityScheduler: which reservation continue-looking gives up
  (FiCaSchedulerApp.getNodeIdToUnreserve over a HashMap<NodeId,
  RMContainer>) and the order in which the preemption policy marks and
  kills its candidates (HashMap<ApplicationAttemptId, HashSet<RMContainer>>).

A HashMap iterates its table bucket by bucket (the key's hashCode spread as
HashMap.hash does, masked by the table size), and a bucket's entries in
insertion order (a put appends to the bucket's list; a resize splits lists
keeping their order; nothing ever shrinks the table). The hashCodes are
those of YARN's record classes (NodeId, ApplicationId,
ApplicationAttemptId, ContainerId), on 32-bit ints.

A ConcurrentHashMap buckets keys the same way (its spread differs only in
the sign bit) and iterates the same way, but grows one entry sooner: when
a put brings its size to 0.75 x the table.

Not modelled: a bucket turned into a tree (8 or more colliding keys in a
table of 64 or more, or the resize such a bucket forces in a smaller table),
and the order a ConcurrentHashMap's resize leaves colliding keys in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")

_MASK32 = 0xFFFFFFFF
_INITIAL_CAPACITY = 16  # HashMap.DEFAULT_INITIAL_CAPACITY
_LOAD_FACTOR = 0.75  # HashMap.DEFAULT_LOAD_FACTOR


def _int32(x: int) -> int:
    x &= _MASK32
    return x - (1 << 32) if x & 0x80000000 else x


def string_hash(s: str) -> int:
    """java.lang.String.hashCode (UTF-16 code units)."""
    h = 0
    if s.isascii():
        for ch in s.encode("ascii"):
            h = (31 * h + ch) & _MASK32
    else:
        data = s.encode("utf-16-be")
        for i in range(0, len(data), 2):
            h = (31 * h + (data[i] << 8 | data[i + 1])) & _MASK32
    return _int32(h)


def _long_hash(v: int) -> int:
    """(int) (v ^ (v >>> 32)), as Long.hashCode and the records' hashCodes do."""
    v &= 0xFFFFFFFFFFFFFFFF
    return _int32(v ^ (v >> 32))


@lru_cache(maxsize=1 << 12)
def node_id_hash(host: str, port: int = 0) -> int:
    """NodeId.hashCode. emu's nodes have port 0, as the real-scheduler seam
    registers them with Hadoop."""
    result = 8501
    result = 493217 * result + string_hash(host)
    result = 493217 * _int32(result) + port
    return _int32(result)


def app_id_hash(cluster_timestamp: int, app_seq: int) -> int:
    """ApplicationId.hashCode."""
    app = 6521
    app = 371237 * app + _long_hash(cluster_timestamp)
    return _int32(371237 * _int32(app) + app_seq)


def app_id_hash_of(app_id: str) -> int:
    """ApplicationId.hashCode of `application_<ts>_<app>`."""
    ts, app = (int(p) for p in app_id.split("_")[-2:])
    return app_id_hash(ts, app)


def app_attempt_hash(cluster_timestamp: int, app_seq: int, attempt: int) -> int:
    """ApplicationAttemptId.hashCode (over ApplicationId.hashCode)."""
    app = app_id_hash(cluster_timestamp, app_seq)
    result = 5501
    result = 347671 * result + app
    result = 347671 * _int32(result) + attempt
    return _int32(result)


def scheduler_key_hash(priority: int, allocation_request_id: int = -1) -> int:
    """SchedulerRequestKey.hashCode (over Priority.hashCode), for a key with
    no container to update; emu's asks carry allocationRequestId -1."""
    p = _int32(517861 * 9511 + priority)
    return _int32(31 * _int32(31 * p + _long_hash(allocation_request_id)))


@lru_cache(maxsize=1 << 16)
def container_id_hash(container_id: str) -> int:
    """ContainerId.hashCode of `container_[e<epoch>_]<ts>_<app>_<attempt>_<seq>`
    (the id's long is epoch << 40 | seq)."""
    parts = container_id.split("_")
    epoch = 0
    if parts[1].startswith("e"):
        epoch = int(parts[1][1:])
        parts = parts[:1] + parts[2:]
    ts, app_seq, attempt, seq = int(parts[1]), int(parts[2]), int(parts[3]), int(parts[4])
    result = _long_hash((epoch << 40) | seq)
    return _int32(31 * result + app_attempt_hash(ts, app_seq, attempt))


def capacity_for(peak_size: int) -> int:
    """The table size of a default HashMap that has held at most `peak_size`
    entries: it doubles when a put takes the size past 0.75 x the table."""
    capacity = _INITIAL_CAPACITY
    while peak_size > capacity * _LOAD_FACTOR:
        capacity *= 2
    return capacity


def concurrent_capacity_for(peak_size: int) -> int:
    """The table size of a default ConcurrentHashMap that has held at most
    `peak_size` entries: addCount doubles it once the size reaches sizeCtl
    (0.75 x the table)."""
    capacity = _INITIAL_CAPACITY
    while peak_size >= capacity * _LOAD_FACTOR:
        capacity *= 2
    return capacity


def priority_key_hash(priority: int) -> int:
    """SchedulerRequestKey.hashCode of a key with allocationRequestId 0 and
    no container to update: 31 x (31 x Priority.hashCode)."""
    return _int32(31 * _int32(31 * _int32(517861 * 9511 + priority)))


def bucket(h: int, capacity: int) -> int:
    """HashMap.hash(key) & (table.length - 1)."""
    h &= _MASK32
    return (h ^ (h >> 16)) & (capacity - 1)


def hashmap_order(items: Sequence[T], hashes: Iterable[int], capacity: int) -> list[T]:
    """`items` (in insertion order, with their keys' hashes) in the order a
    HashMap with `capacity` buckets iterates them."""
    keyed = [(bucket(h, capacity), i) for i, h in enumerate(hashes)]
    keyed.sort()
    return [items[i] for _, i in keyed]


def attempt_hash_of(attempt_id: str) -> int:
    """ApplicationAttemptId.hashCode of `appattempt_<ts>_<app>_<attempt>`."""
    ts, app, attempt = (int(p) for p in attempt_id.split("_")[-3:])
    return app_attempt_hash(ts, app, attempt)


def hash_order(items: Sequence[T], hash_of: Callable[[T], int], peak: int) -> list[T]:
    """`items` (in insertion order) in the order a HashMap or HashSet holding
    them iterates; `peak` is the most entries it has held (its table size)."""
    if len(items) < 2:
        return list(items)
    return hashmap_order(items, [hash_of(i) for i in items], capacity_for(peak))
