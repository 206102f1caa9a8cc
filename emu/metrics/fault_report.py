"""What a run injected and what recovered, for summary.json and the terminal.

A fault scenario is only convincing if the run says what happened: which
faults were injected, how many nodes were lost and came back, how many
attempts had to start again and how many tasks ran a second time. The
report is built from the RM's own event stream (node transitions), the
final app reports (attempt counts) and the AMs' count of re-asked tasks,
so it describes what the cluster did, not what the scenario asked for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from emu.metrics.eventlog import EventLog


class FaultReport:
    """Counts faults as they are injected and recoveries as the RM reports them."""

    def __init__(self) -> None:
        self.injected: Counter[str] = Counter()
        self.nodes_lost = 0
        self.nodes_rejoined = 0
        self.nodes_decommissioned = 0
        self.rm_restarts = 0
        self.apps_recovered = 0
        self.apps_lost = 0
        self._gone: set[str] = set()

    def rm_restarted(self, recovery: bool, unfinished: int) -> None:
        """The RM restarted with `unfinished` apps running or waiting: with
        recovery they come back from the state store, without it they are lost."""
        self.rm_restarts += 1
        if recovery:
            self.apps_recovered += unfinished
        else:
            self.apps_lost += unfinished

    def observe(self, kind: str, fields: dict[str, Any]) -> None:
        """One RM event-log record: node transitions out of and back into the cluster."""
        if kind != "node":
            return
        to, node_id = fields.get("to"), fields.get("id")
        if to == "LOST":
            self.nodes_lost += 1
            self._gone.add(str(node_id))
        elif to == "DECOMMISSIONED":
            self.nodes_decommissioned += 1
        elif to == "RUNNING" and fields.get("frm") == "NEW" and node_id in self._gone:
            self._gone.discard(str(node_id))
            self.nodes_rejoined += 1

    def to_dict(self, jobs: list[dict[str, Any]], tasks_rerun: int) -> dict[str, Any]:
        recovered = {
            "nodes_lost": self.nodes_lost,
            "nodes_rejoined": self.nodes_rejoined,
            "nodes_decommissioned": self.nodes_decommissioned,
            "attempts_restarted": sum(max(j.get("attempts", 1) - 1, 0) for j in jobs),
            "tasks_rerun": tasks_rerun,
        }
        if self.rm_restarts:  # only then, so other runs' summaries stay as they were
            recovered.update(
                rm_restarts=self.rm_restarts,
                apps_recovered=self.apps_recovered,
                apps_lost=self.apps_lost,
            )
        return {"injected": dict(sorted(self.injected.items())), "recovered": recovered}


class ObservedEventLog(EventLog):
    """An EventLog that also shows every record to `observe` (written or not)."""

    def __init__(self, inner: EventLog, observe: Callable[[str, dict[str, Any]], None]) -> None:
        self.enabled = inner.enabled
        self._inner = inner
        self._observe = observe

    def emit(self, kind: str, /, **fields: Any) -> None:
        self._observe(kind, fields)
        self._inner.emit(kind, **fields)


def describe(faults: dict[str, Any]) -> str:
    """One terminal line: what was injected, what recovered."""
    injected = ", ".join(f"{k} {n}" for k, n in faults["injected"].items()) or "none"
    r = faults["recovered"]
    line = (
        f"faults injected: {injected}; nodes lost {r['nodes_lost']} "
        f"(rejoined {r['nodes_rejoined']}), decommissioned {r['nodes_decommissioned']}, "
        f"attempts restarted {r['attempts_restarted']}, tasks re-run {r['tasks_rerun']}"
    )
    if r.get("rm_restarts"):
        line += (
            f", RM restarts {r['rm_restarts']} (apps recovered {r['apps_recovered']}, "
            f"lost {r['apps_lost']})"
        )
    return line
