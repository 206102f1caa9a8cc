"""Why jobs failed, said once: group failed apps by the kind of YARN
diagnostic they carry and, when one kind explains most of a run's jobs,
name it and say how to fix it.

A run whose every job was rejected for an unknown queue looks, job by job,
like a wall of identical errors; the user needs one line that says "the
configuration defines no queue sls_queue_1: give one that does". The kinds
are recognised from Hadoop's own diagnostic strings (`emu.rm.diagnostics`,
the schedulers' placement messages), so they hold for every scheduler.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

SUCCEEDED = "SUCCEEDED"

# (kind, pattern over the diagnostics, what to do). The first match wins.
_KINDS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "submitted to a queue the scheduler does not have",
        re.compile(r"to (?:unknown|non-leaf|ambiguous) queue: ?(\S+)"),
        "define the queue{s} {names} in the scheduler's configuration "
        "(emu sls: --conf-dir with a capacity-scheduler.xml or fair-scheduler.xml "
        "that lists {them}; emu run: the scenario's [config]), or submit to a queue "
        "that exists",
    ),
    (
        "asked for a container larger than the maximum allocation",
        re.compile(r"requested resource is greater than maximum allowed allocation"),
        "raise yarn.scheduler.maximum-allocation-mb / -vcores (or the queue's "
        "maximum-allocation), or ask for smaller containers",
    ),
    (
        "their queue was at its maximum number of applications",
        re.compile(r"already has \d+ applications|Maximum system application limit"),
        "raise yarn.scheduler.capacity.maximum-applications or the queue's maximum-applications",
    ),
    (
        "the AM failed every attempt",
        re.compile(r"failed \d+ times due to"),
        "see each app's last attempt's diagnostics; yarn.resourcemanager.am.max-attempts "
        "sets how many attempts an app gets",
    ),
    (
        "the user may not submit to the queue",
        re.compile(r"does not have permission|cannot submit applications"),
        "grant the user acl_submit_applications on the queue",
    ),
)


def failed(row: dict[str, Any]) -> bool:
    """A job that did not succeed: rejected, failed, killed, or never ended."""
    return row["final_status"] != SUCCEEDED


def kind_of(diagnostics: str) -> tuple[str, str, list[str]]:
    """(kind, fix, names) for one app's diagnostics; names are the queues an
    unknown-queue rejection named. Unrecognised text is its own kind."""
    for kind, pattern, fix in _KINDS:
        m = pattern.search(diagnostics)
        if m is not None:
            return kind, fix, list(m.groups())
    return diagnostics or "no diagnostics", "", []


def dominant(rows: list[dict[str, Any]]) -> str | None:
    """One line when more than half of the jobs failed for one kind of
    reason: how many, why, and the fix."""
    if not rows:
        return None
    kinds: Counter[str] = Counter()
    fixes: dict[str, str] = {}
    names: dict[str, list[str]] = {}
    for r in rows:
        if not failed(r):
            continue
        kind, fix, found = kind_of(r.get("diagnostics") or "")
        kinds[kind] += 1
        fixes[kind] = fix
        for name in found:
            if name not in names.setdefault(kind, []):
                names[kind].append(name)
    if not kinds:
        return None
    kind, count = min(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    if count * 2 <= len(rows):
        return None
    line = f"{count} of {len(rows)} jobs failed: {kind}"
    fix = fixes[kind]
    if fix:
        listed = sorted(names.get(kind, []))
        line += "; fix: " + fix.format(
            s="s" if len(listed) > 1 else "",
            names=", ".join(listed),
            them="them" if len(listed) > 1 else "it",
        )
    return line
