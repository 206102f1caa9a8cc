"""Misspelt property prefixes.

Hadoop ignores a property it does not know, so `yarn.scheduler.capcity.root.queues`
silently leaves the CapacityScheduler on its defaults and the run answers a
different question than the one asked. A property name whose leading parts
are one small typo away from a namespace emu reads (and are not that
namespace) is reported instead. Names outside these namespaces, however
unusual, are left alone: Hadoop has thousands of properties emu does not model.
"""

from __future__ import annotations

from difflib import SequenceMatcher

# Namespace parts by depth: the words `yarn.<part>` and `yarn.scheduler.<part>`
# that emu reads properties under.
NAMESPACES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("yarn",): ("resourcemanager", "nodemanager", "scheduler", "resource-types"),
    ("yarn", "scheduler"): ("capacity", "fair"),
}
# Close enough to be a typo of a namespace part and not another word
# (resourcemanger -> 0.97, capcity -> 0.93, faire -> 0.89; nm/nodemanager 0.31).
SIMILARITY = 0.85


def misspelt_prefix(name: str) -> str | None:
    """The namespace prefix `name` looks like a misspelling of, or None."""
    parts = name.split(".")
    for depth in range(1, len(parts) - 1):
        head = tuple(parts[:depth])
        known = NAMESPACES.get(head)
        if known is None:
            return None
        part = parts[depth]
        if part in known:
            continue
        for word in known:
            if SequenceMatcher(None, part, word).ratio() >= SIMILARITY:
                return ".".join((*head, word)) + "."
        return None
    return None


def check_name(name: str) -> str | None:
    """A one-line complaint about `name`, or None if it is fine."""
    prefix = misspelt_prefix(name)
    if prefix is None:
        return None
    return f"unknown property {name!r}: did you mean the prefix {prefix!r}?"
