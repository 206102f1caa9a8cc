"""The schedulers emu can run, by the names that select them.

`yarn.resourcemanager.scheduler.class` names a scheduler by emu's short
name (`fifo`, `capacity`, `fair`, in any case) or by a YARN class name: the
scheduler's own (`...capacity.CapacityScheduler`) or SLS's wrapper around
it (`SLSCapacityScheduler`, which only adds metrics). Each entry also names
the Hadoop class the `hadoop` implementation loads for it, and how emu
makes its own: a `ctx -> Scheduler` callable, or a `"package.module:Name"`
string imported when first used (so naming a scheduler loads only it).

Another implementation plugs in with `register`; the RM's settings and
`emu.rm.scheduler.create` read only these tables.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emu.rm.context import RMContext
    from emu.rm.scheduler.abstract_scheduler import Scheduler


class SchedulerEntry:
    """One scheduler: its short name, the class names that select it, the
    Hadoop class behind it, and its factory."""

    __slots__ = ("class_names", "factory", "java_class", "name")

    def __init__(
        self,
        name: str,
        factory: str | Callable[[RMContext], Scheduler],
        class_names: tuple[str, ...],
        java_class: str,
    ) -> None:
        self.name = name
        self.factory = factory
        self.class_names = class_names
        self.java_class = java_class

    def create(self, ctx: RMContext) -> Scheduler:
        """A new scheduler for `ctx`, importing a factory given by name."""
        factory: Any = self.factory
        if isinstance(factory, str):
            module, _, attr = factory.partition(":")
            factory = getattr(importlib.import_module(module), attr)
        scheduler: Scheduler = factory(ctx)
        return scheduler


SCHEDULERS: dict[str, SchedulerEntry] = {}
"""Short name -> entry, in the order registered."""

SCHEDULER_CLASSES: dict[str, str] = {}
"""Every name that selects a scheduler (short names in lower case, class
names as spelled) -> its short name."""

JAVA_CLASSES: dict[str, str] = {}
"""Short name -> the Hadoop class the `hadoop` implementation loads for it."""


def register(
    name: str,
    factory: str | Callable[[RMContext], Scheduler],
    java_class: str = "",
    class_names: tuple[str, ...] = (),
    replace: bool = False,
) -> SchedulerEntry:
    """Make `name` (and `java_class`, and each of `class_names`) select the
    scheduler `factory` makes. `factory` is a `ctx -> Scheduler` callable or
    a `"package.module:Name"` string, imported when a scheduler is first
    made. A name already registered is refused unless `replace`: then the
    entry of that short name is replaced, and a class name another
    scheduler answered to now selects this one."""
    short = name.strip().lower()
    if not short or "." in short:
        raise ValueError(f"a scheduler's short name is a word without dots: {name!r}")
    names = (short, *((java_class,) if java_class else ()), *class_names)
    for n in names:
        taken = SCHEDULER_CLASSES.get(n)
        if taken is not None and not replace:
            raise ValueError(f"{n!r} already names the {taken!r} scheduler")
    unregister(short)
    for n in names:
        taken = SCHEDULER_CLASSES.get(n)
        if taken is not None:
            other = SCHEDULERS[taken]
            other.class_names = tuple(c for c in other.class_names if c != n)
    entry = SchedulerEntry(short, factory, names[1:], java_class)
    SCHEDULERS[short] = entry
    for n in names:
        SCHEDULER_CLASSES[n] = short
    if java_class:
        JAVA_CLASSES[short] = java_class
    return entry


def unregister(name: str) -> None:
    """Forget the scheduler `name` and every name that selected it."""
    entry = SCHEDULERS.pop(name, None)
    if entry is None:
        return
    for n in [n for n, short in SCHEDULER_CLASSES.items() if short == name]:
        del SCHEDULER_CLASSES[n]
    JAVA_CLASSES.pop(name, None)


def lookup(name: str) -> str | None:
    """The short name of the scheduler `name` selects (a short name in any
    case, or a class name as spelled), or None."""
    return SCHEDULER_CLASSES.get(name) or SCHEDULER_CLASSES.get(name.lower())


def plugin_class(name: str) -> type[Scheduler]:
    """The scheduler class a plugin name names (`package.module:Class`, or an
    entry point of `emu.schedulers`; docs/plugins.md); `plugins.PluginError`
    says why not."""
    from emu import plugins
    from emu.rm.scheduler.abstract_scheduler import Scheduler

    cls = plugins.load(name, plugins.SCHEDULERS)
    if not issubclass(cls, Scheduler):
        raise plugins.PluginError(
            f"{name} is not a scheduler (a subclass of "
            "emu.rm.scheduler.abstract_scheduler.Scheduler)"
        )
    return cls


def plugin_kind(cls: type) -> str:
    """The registered scheduler a plugin class extends (`fair` for a
    FairScheduler subclass, ...), which outputs show it as; `custom` for a
    direct subclass of the abstract scheduler. By class, not by the `name`
    attribute, which a compiled class keeps per instance."""
    for short, entry in SCHEDULERS.items():
        factory = entry.factory
        if isinstance(factory, str):
            module, _, attr = factory.partition(":")
            factory = getattr(importlib.import_module(module), attr)
        if isinstance(factory, type) and issubclass(cls, factory):
            return short
    return "custom"


_YARN = "org.apache.hadoop.yarn.server.resourcemanager.scheduler."
_SLS = "org.apache.hadoop.yarn.sls.scheduler."

register("fifo", "emu.rm.scheduler.fifo:FifoScheduler", _YARN + "fifo.FifoScheduler")
register(
    "capacity",
    "emu.rm.scheduler.capacity:CapacityScheduler",
    _YARN + "capacity.CapacityScheduler",
    (_SLS + "SLSCapacityScheduler",),
)
register(
    "fair",
    "emu.rm.scheduler.fair:FairScheduler",
    _YARN + "fair.FairScheduler",
    (_SLS + "SLSFairScheduler",),
)
