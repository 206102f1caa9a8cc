"""The states and events of the RM's entities: apps, attempts, containers, nodes.

They live here, apart from the entities' transition tables, so that one
entity raising another's event (an attempt telling its app it registered, a
container telling its attempt it finished) imports only this module and
nothing from `emu.rm` at all: the entity modules then import each other one
way. The names are YARN's.
"""

from __future__ import annotations

from enum import StrEnum


class AppState(StrEnum):
    """YARN's RMAppState."""

    NEW = "NEW"
    NEW_SAVING = "NEW_SAVING"
    SUBMITTED = "SUBMITTED"
    ACCEPTED = "ACCEPTED"
    RUNNING = "RUNNING"
    FINAL_SAVING = "FINAL_SAVING"
    FINISHING = "FINISHING"
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    KILLED = "KILLED"


class AppEvent(StrEnum):
    """YARN's RMAppEventType names."""

    START = "START"
    RECOVER = "RECOVER"
    KILL = "KILL"
    APP_NEW_SAVED = "APP_NEW_SAVED"
    APP_ACCEPTED = "APP_ACCEPTED"
    APP_REJECTED = "APP_REJECTED"
    ATTEMPT_REGISTERED = "ATTEMPT_REGISTERED"
    ATTEMPT_FAILED = "ATTEMPT_FAILED"
    ATTEMPT_UNREGISTERED = "ATTEMPT_UNREGISTERED"
    APP_UPDATE_SAVED = "APP_UPDATE_SAVED"
    ATTEMPT_FINISHED = "ATTEMPT_FINISHED"
    ATTEMPT_KILLED = "ATTEMPT_KILLED"


class AttemptState(StrEnum):
    """YARN's RMAppAttemptState."""

    NEW = "NEW"
    SUBMITTED = "SUBMITTED"
    SCHEDULED = "SCHEDULED"
    ALLOCATED = "ALLOCATED"
    LAUNCHED = "LAUNCHED"
    RUNNING = "RUNNING"
    FINISHING = "FINISHING"
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    KILLED = "KILLED"


class AttemptEvent(StrEnum):
    """YARN's RMAppAttemptEventType names."""

    START = "START"
    RECOVER = "RECOVER"
    KILL = "KILL"
    ATTEMPT_ADDED = "ATTEMPT_ADDED"
    CONTAINER_ALLOCATED = "CONTAINER_ALLOCATED"
    LAUNCHED = "LAUNCHED"
    LAUNCH_FAILED = "LAUNCH_FAILED"
    CONTAINER_FINISHED = "CONTAINER_FINISHED"
    REGISTERED = "REGISTERED"
    EXPIRE = "EXPIRE"
    UNREGISTERED = "UNREGISTERED"


class ContainerState(StrEnum):
    """YARN's RMContainerState."""

    NEW = "NEW"
    RESERVED = "RESERVED"
    ALLOCATED = "ALLOCATED"
    ACQUIRED = "ACQUIRED"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    RELEASED = "RELEASED"
    KILLED = "KILLED"
    EXPIRED = "EXPIRED"


class ContainerEvent(StrEnum):
    """YARN's RMContainerEventType names."""

    START = "START"
    RECOVER = "RECOVER"
    RESERVED = "RESERVED"
    KILL = "KILL"
    ACQUIRED = "ACQUIRED"
    EXPIRE = "EXPIRE"
    RELEASED = "RELEASED"
    LAUNCHED = "LAUNCHED"
    FINISHED = "FINISHED"


class NodeState(StrEnum):
    """YARN's NodeState, less what nothing here enters (DECOMMISSIONING:
    emu has no graceful decommission). REBOOTED is a node whose heartbeat
    was too far behind: told RESYNC, it is out of the cluster until it
    registers again."""

    NEW = "NEW"
    RUNNING = "RUNNING"
    UNHEALTHY = "UNHEALTHY"
    DECOMMISSIONED = "DECOMMISSIONED"
    LOST = "LOST"
    SHUTDOWN = "SHUTDOWN"
    REBOOTED = "REBOOTED"


class NodeEvent(StrEnum):
    """RMNodeEventType names for the events the RM raises about a node."""

    STARTED = "STARTED"
    STATUS_UPDATE = "STATUS_UPDATE"
    RESOURCE_UPDATE = "RESOURCE_UPDATE"
    EXPIRE = "EXPIRE"
    DECOMMISSION = "DECOMMISSION"
    SHUTDOWN = "SHUTDOWN"
    CLEANUP_CONTAINER = "CLEANUP_CONTAINER"
    CLEANUP_APP = "CLEANUP_APP"
    RECONNECTED = "RECONNECTED"
    REBOOTING = "REBOOTING"
