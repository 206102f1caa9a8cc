"""Loading scheduler and Fair policy plugins: Python classes named where
Hadoop names a Java class (docs/plugins.md).

A plugin is named as `package.module:Class`, or by the name of an entry
point in its group (`emu.schedulers`, `emu.fair_policies`), which an
installed package declares in its pyproject.toml. Loading is the only thing
here: what a plugin must be is checked by the caller, which knows the base
class, and what a plugin does at run time fails the run through
`PluginFailed`.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from emu.errors import SchedulerFailed

SCHEDULERS = "emu.schedulers"
FAIR_POLICIES = "emu.fair_policies"


class PluginError(Exception):
    """A plugin could not be loaded; the message says which and why."""


class PluginFailed(SchedulerFailed):
    """A scheduler plugin raised during a run: the run fails with the
    plugin's name, its exception and message."""

    def __init__(self, plugin: str, message: str, simulated_ms: int) -> None:
        self.plugin = plugin
        super().__init__(f"scheduler plugin {plugin}", message, simulated_ms)


def is_plugin_name(name: str, group: str) -> bool:
    """Whether `name` names a plugin: an import path, or an entry point of `group`."""
    return ":" in name or bool(entry_points(group=group, name=name.strip()))


def load(name: str, group: str) -> type:
    """The class `name` names (`package.module:Class`, or an entry point of
    `group`); PluginError says why not."""
    name = name.strip()
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            found = getattr(importlib.import_module(module), attr)
        except ImportError as e:
            raise PluginError(f"cannot import {module!r} for {name}: {e}") from None
        except AttributeError:
            raise PluginError(f"module {module!r} has no {attr!r}") from None
    else:
        points = entry_points(group=group, name=name)
        if not points:
            raise PluginError(f"no entry point {name!r} in group {group!r}")
        (point,) = tuple(points)[:1]
        try:
            found = point.load()
        except (ImportError, AttributeError) as e:
            raise PluginError(f"entry point {name!r} ({point.value}) does not load: {e}") from None
    if not isinstance(found, type):
        raise PluginError(f"{name} is not a class")
    return found
