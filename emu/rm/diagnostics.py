"""YARN's own diagnostic messages for requests and applications the RM refuses.

Users grep their logs and search the web for these strings, so they are
Hadoop's, word for word: `InvalidResourceRequestException`'s templates (as
`SchedulerUtils.normalizeAndValidateRequest` fills them in) and the message
`RMAppImpl` gives an application whose attempts are used up, and the
CapacityScheduler's activity diagnostics (`ActivityDiagnosticConstant`)
where emu's why-pending line says more than a short reason. One module
holds them so the RM's services, its app state machine and the schedulers
say the same thing.
"""

from __future__ import annotations

from emu.resources import Resource

QUEUE_HIT_MAX_CAPACITY_LIMIT = "Queue hits max-capacity limit"
"""ActivityDiagnosticConstant.QUEUE_HIT_MAX_CAPACITY_LIMIT: what LeafQueue
records when canAssignToThisQueue refuses, as it does in a partition the
queue has no capacities for (its maximum there is 0)."""


def invalid_request(requested: Resource, maximum: Resource, configured: Resource) -> str | None:
    """Why `requested` cannot be granted under `maximum` (the scheduler's,
    or a queue's, maximum allocation), or None when it can. Like
    `SchedulerUtils.checkResourceRequestAgainstAvailableResource`, names the
    first resource type that is negative or over the maximum."""
    limits = maximum.components()
    for name, value in requested.components().items():
        if value < 0:
            return (
                "Invalid resource request! Cannot allocate containers as requested resource "
                f"is less than 0! Requested resource type=[{name}], "
                f"Requested resource={requested}"
            )
        if value > limits.get(name, 0):
            return (
                "Invalid resource request! Cannot allocate containers as requested resource "
                "is greater than maximum allowed allocation. "
                f"Requested resource type=[{name}], Requested resource={requested}, "
                f"maximum allowed allocation={maximum}, please note that maximum allowed "
                "allocation is calculated by scheduler based on maximum resource of "
                "registered NodeManagers, which might be less than configured maximum "
                f"allocation={configured}"
            )
    return None


def attempts_exhausted(app_id: str, max_attempts: int, last: str) -> str:
    """RMAppImpl's diagnostics when the last allowed attempt failed."""
    return (
        f"Application {app_id} failed {max_attempts} times due to {last}. Failing the application."
    )


def no_capacity_in_label(label: str, queues: list[str], properties: list[str]) -> str:
    """Why an app waits in partition `label` when `queues` (its leaf or the
    parents above it, top down) configure no capacity there: Hadoop then
    holds nothing for the label in their QueueCapacities, so their maximum
    there is 0 and the app waits for ever, though the queue may use the
    label. Hadoop says only that the queue hit its limit; this also names
    the label and the `properties` that give the queues a share of it."""
    verb = "has" if len(queues) == 1 else "have"
    return (
        f"{QUEUE_HIT_MAX_CAPACITY_LIMIT} in partition {label}: {', '.join(queues)} {verb} "
        f"no capacity there; set {' and '.join(properties)}"
    )
