"""The contract between emu's Python scheduler and the Java driver around a
Hadoop scheduler (`--scheduler-impl hadoop`), on the Python side.

`java/emu/hadoop/SchedulerBackend.java` is the declaration: the methods the
driver answers, and the classes of its answers (`Reply`, `Partitions`,
`Capability`). This module mirrors it for Python, as Protocols, because
mypy cannot read Java: mypy holds emu/rm/scheduler/hadoop.py to them (a
call to a method or field they lack, or with the wrong arguments, fails
`mypy emu`), javac holds SchedulerDriver to the Java interface, and
tests/unit/test_hadoop_contract.py reads the Java file and fails when the
mirror differs from it in a method, a parameter or a field. Names are
Java's on both sides (camelCase), so the comparison needs no table of
renamings. A mirror checked by a test rather than one generated from the
other: both stay ordinary source that javac, mypy and mypyc read without a
build step, and the test says exactly where they part.

An answer crosses the bridge as columns, one Java array per field; `decode`
turns it into frozen records with named fields (`Placed`, `Finished`, ...)
in the order the scheduler produced them. Columns rather than one Java
object per record because every read of a Java field from Python is a call
across the bridge: a reply costs one read per column, however many
containers it places. A primitive column is copied out whole through the
buffer protocol; a string column element by element (JPype has no bulk
path for strings).

Nothing here imports JPype: the module is imported by the compiled RM, and
the tests read it without a JVM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing_extensions import Buffer

# --- the Java side's classes, as Python sees them ------------------------------------------
# A Java String[] reads as a sequence of str; a primitive array (long[], int[],
# boolean[]) as a buffer. The fields' meanings: SchedulerBackend.java.


class Reply(Protocol):
    """`SchedulerBackend.Reply`: what the scheduler did during one call."""

    order: str
    refusal: str | None
    placedContainer: Sequence[str]
    placedAttempt: Sequence[str]
    placedNode: Sequence[str]
    placedMemory: Buffer
    placedVcores: Buffer
    placedExtraNames: Sequence[str]
    placedExtraValues: Buffer
    placedPriority: Buffer
    placedLocality: Sequence[str]
    placedAm: Buffer
    finishedContainer: Sequence[str]
    finishedExitStatus: Buffer
    finishedDiagnostics: Sequence[str]
    cleanupNode: Sequence[str]
    cleanupContainer: Sequence[str]
    acceptedApp: Sequence[str]
    acceptedQueue: Sequence[str]
    rejectedApp: Sequence[str]
    rejectedMessage: Sequence[str]
    headroomMemory: int
    headroomVcores: int
    preempt: Sequence[str]


class Partitions(Protocol):
    """`SchedulerBackend.Partitions`: each node-label partition's resource and
    its queues' usage there."""

    partition: Sequence[str]
    partitionMemory: Buffer
    partitionVcores: Buffer
    usagePartition: Buffer
    usageQueue: Sequence[str]
    usedMemory: Buffer
    usedVcores: Buffer
    pendingMemory: Buffer
    pendingVcores: Buffer


class Capability(Protocol):
    """`SchedulerBackend.Capability`: an amount of every resource type."""

    memory: int
    vcores: int
    extraNames: Sequence[str]
    extraValues: Buffer


class SchedulerBackend(Protocol):
    """`SchedulerBackend`: the driver's methods, as the Java interface declares
    them (see there for what each does). `now` is emu's simulated time in
    milliseconds; a Reply of None means the scheduler did nothing."""

    def updateIntervalMs(self) -> int: ...

    def preemptionIntervalMs(self) -> int: ...

    def queueDeletionIntervalMs(self) -> int: ...

    def asyncIntervalMs(self) -> int: ...

    def asyncThreads(self) -> int: ...

    def reservedNodes(self) -> int: ...

    def nodeSortIntervalMs(self) -> int: ...

    def asyncBound(self) -> int: ...

    def sortNodes(self, now: int) -> Reply | None: ...

    def asyncPass(self, now: int, starts: Sequence[int]) -> Reply | None: ...

    def addNode(
        self,
        now: int,
        emuId: str,
        host: str,
        port: int,
        rack: str,
        memory: int,
        vcores: int,
        extraNames: Sequence[str] | None,
        extraValues: Sequence[int] | None,
        nodeLabels: Sequence[str] | None,
    ) -> Reply | None: ...

    def removeNode(self, now: int, emuId: str) -> Reply | None: ...

    def updateNodeResource(
        self,
        now: int,
        emuId: str,
        memory: int,
        vcores: int,
        extraNames: Sequence[str] | None,
        extraValues: Sequence[int] | None,
    ) -> Reply | None: ...

    def nodeUpdate(
        self,
        now: int,
        emuId: str,
        launched: Sequence[str] | None,
        completed: Sequence[str] | None,
        exits: Sequence[int] | None,
        diagnostics: Sequence[str] | None,
    ) -> Reply | None: ...

    def addApp(
        self,
        now: int,
        appId: str,
        queue: str,
        user: str,
        priority: int,
        amMemory: int,
        amVcores: int,
        extraNames: Sequence[str] | None,
        extraValues: Sequence[int] | None,
        labelExpression: str | None,
        unmanaged: bool,
    ) -> Reply | None: ...

    def addAttempt(self, now: int, attemptId: str) -> Reply | None: ...

    def removeAttempt(self, now: int, attemptId: str, finalState: str) -> Reply | None: ...

    def removeApp(self, now: int, appId: str, finalState: str) -> Reply | None: ...

    def requestAm(self, now: int, attemptId: str) -> Reply | None: ...

    def allocate(
        self,
        now: int,
        attemptId: str,
        priorities: Sequence[int] | None,
        names: Sequence[str] | None,
        memory: Sequence[int] | None,
        vcores: Sequence[int] | None,
        extraNames: Sequence[str] | None,
        extraValues: Sequence[Sequence[int]] | None,
        counts: Sequence[int] | None,
        relax: Sequence[bool] | None,
        labelExpressions: Sequence[str | None] | None,
        releases: Sequence[str] | None,
        blacklistAdd: Sequence[str] | None,
        blacklistRemove: Sequence[str] | None,
    ) -> Reply | None: ...

    def expireContainer(self, now: int, cid: str) -> Reply | None: ...

    def update(self, now: int) -> Reply | None: ...

    def editSchedule(self, now: int) -> Reply | None: ...

    def deleteExpiredQueues(self, now: int) -> Reply | None: ...

    def refreshQueues(
        self, now: int, keys: Sequence[str], values: Sequence[str], allocationFile: str
    ) -> Reply | None: ...

    def nodeLabels(
        self,
        now: int,
        op: str,
        names: Sequence[str],
        exclusive: Sequence[bool],
        ports: Sequence[int],
        values: Sequence[str],
    ) -> Reply | None: ...

    def partitionUsage(self) -> Partitions | None: ...

    def maximumAllocation(self, queue: str | None) -> Capability: ...

    def close(self) -> None: ...


# --- the records a Reply decodes into -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placed:
    """A container the scheduler placed. `extras`: the resource types beyond
    memory and vcores, every one the scheduler knows, zeros included."""

    container_id: str
    attempt_id: str
    node_id: str
    memory: int
    vcores: int
    extras: Mapping[str, int]
    priority: int
    locality: str
    is_am: bool


@dataclass(frozen=True, slots=True)
class Finished:
    """A container the scheduler ended, with YARN's exit status and diagnostics."""

    container_id: str
    exit_status: int
    diagnostics: str


@dataclass(frozen=True, slots=True)
class CleanUp:
    """An order to a node's NM to stop a container."""

    node_id: str
    container_id: str


@dataclass(frozen=True, slots=True)
class Accepted:
    """An app accepted, in the queue it was placed in ("": the one it named)."""

    app_id: str
    queue: str


@dataclass(frozen=True, slots=True)
class Rejected:
    """An app rejected, with YARN's message."""

    app_id: str
    message: str


@dataclass(frozen=True, slots=True)
class Headroom:
    """The AM's headroom, from an allocate."""

    memory: int
    vcores: int


@dataclass(frozen=True, slots=True)
class Preempt:
    """A container the AM is asked to give back, from an allocate."""

    container_id: str


@dataclass(frozen=True, slots=True)
class Refused:
    """An admin change the scheduler refused, and why; nothing changed."""

    message: str


Record = Placed | Finished | CleanUp | Accepted | Rejected | Headroom | Preempt | Refused


@dataclass(frozen=True, slots=True)
class QueueUsage:
    """A queue's ResourceUsage in one partition."""

    queue: str
    used_memory: int
    used_vcores: int
    pending_memory: int
    pending_vcores: int


@dataclass(frozen=True, slots=True)
class PartitionReport:
    """A node-label partition ("" the default one): its resource, and the
    usage of the root (first) and every leaf queue in it."""

    name: str
    memory: int
    vcores: int
    queues: tuple[QueueUsage, ...]


@dataclass(frozen=True, slots=True)
class Amount:
    """An amount of every resource type the scheduler knows."""

    memory: int
    vcores: int
    extras: Mapping[str, int]


# --- decoding -------------------------------------------------------------------------------


def numbers(column: Buffer) -> list[int]:
    """A Java primitive array (long[], int[], boolean[]: 0 or 1) as a list,
    copied whole. JPype's buffers carry a byte-order prefix ("=q") that
    memoryview.tolist does not take; the cast through bytes drops it."""
    view = memoryview(column)
    code = view.format[-1:]
    raw = view.cast("B")
    if code == "q":
        return raw.cast("q").tolist()
    if code == "i":
        return raw.cast("i").tolist()
    if code in ("?", "b", "B"):
        return raw.tolist()
    raise TypeError(f"not a column of longs, ints or booleans: format {view.format!r}")


def decode(reply: Reply | None) -> list[Record]:
    """What the scheduler did, in the order it did it (see `Reply`)."""
    if reply is None:
        return []
    if reply.refusal is not None:
        return [Refused(str(reply.refusal))]
    order = str(reply.order)
    placed = iter(_placed(reply) if "P" in order else ())
    finished = iter(_finished(reply) if "F" in order else ())
    cleanup = iter(_cleanup(reply) if "C" in order else ())
    accepted = iter(_accepted(reply) if "A" in order else ())
    rejected = iter(_rejected(reply) if "R" in order else ())
    preempt = iter([Preempt(c) for c in reply.preempt] if "X" in order else ())
    out: list[Record] = []
    for kind in order:
        if kind == "P":
            out.append(next(placed))
        elif kind == "F":
            out.append(next(finished))
        elif kind == "C":
            out.append(next(cleanup))
        elif kind == "A":
            out.append(next(accepted))
        elif kind == "R":
            out.append(next(rejected))
        elif kind == "H":
            out.append(Headroom(int(reply.headroomMemory), int(reply.headroomVcores)))
        elif kind == "X":
            out.append(next(preempt))
        else:
            raise ValueError(f"the driver answered a record of unknown kind {kind!r}")
    return out


def _placed(r: Reply) -> list[Placed]:
    names = list(r.placedExtraNames)
    values = numbers(r.placedExtraValues) if names else []
    width = len(names)
    memory = numbers(r.placedMemory)
    vcores = numbers(r.placedVcores)
    priority = numbers(r.placedPriority)
    am = numbers(r.placedAm)
    return [
        Placed(
            cid,
            attempt,
            node,
            memory[i],
            vcores[i],
            dict(zip(names, values[i * width : (i + 1) * width], strict=True)) if width else {},
            priority[i],
            locality,
            bool(am[i]),
        )
        for i, (cid, attempt, node, locality) in enumerate(
            zip(r.placedContainer, r.placedAttempt, r.placedNode, r.placedLocality, strict=True)
        )
    ]


def _finished(r: Reply) -> list[Finished]:
    exits = numbers(r.finishedExitStatus)
    return [
        Finished(cid, exits[i], diagnostics)
        for i, (cid, diagnostics) in enumerate(
            zip(r.finishedContainer, r.finishedDiagnostics, strict=True)
        )
    ]


def _cleanup(r: Reply) -> list[CleanUp]:
    return [CleanUp(n, c) for n, c in zip(r.cleanupNode, r.cleanupContainer, strict=True)]


def _accepted(r: Reply) -> list[Accepted]:
    return [Accepted(a, q) for a, q in zip(r.acceptedApp, r.acceptedQueue, strict=True)]


def _rejected(r: Reply) -> list[Rejected]:
    return [Rejected(a, m) for a, m in zip(r.rejectedApp, r.rejectedMessage, strict=True)]


def decode_partitions(p: Partitions | None) -> list[PartitionReport]:
    """Each partition with its queues' usage (see `Partitions`)."""
    if p is None:
        return []
    names = list(p.partition)
    memory = numbers(p.partitionMemory)
    vcores = numbers(p.partitionVcores)
    queues: list[list[QueueUsage]] = [[] for _ in names]
    owner = numbers(p.usagePartition)
    used_memory = numbers(p.usedMemory)
    used_vcores = numbers(p.usedVcores)
    pending_memory = numbers(p.pendingMemory)
    pending_vcores = numbers(p.pendingVcores)
    for i, queue in enumerate(p.usageQueue):
        queues[owner[i]].append(
            QueueUsage(queue, used_memory[i], used_vcores[i], pending_memory[i], pending_vcores[i])
        )
    return [
        PartitionReport(name, memory[i], vcores[i], tuple(queues[i]))
        for i, name in enumerate(names)
    ]


def decode_capability(c: Capability) -> Amount:
    """An amount of every resource type (see `Capability`)."""
    names = list(c.extraNames)
    values = numbers(c.extraValues) if names else []
    return Amount(int(c.memory), int(c.vcores), dict(zip(names, values, strict=True)))
