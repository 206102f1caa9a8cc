"""ApplicationMasters: one engine (`engine.py`) that registers, heartbeats
with `allocate`, starts containers on NodeManagers and re-asks for lost
work; and per-type policies deciding which tasks are asked for when:
`mapreduce` (maps, then reduces once every map is done, as SLS's
MRAMSimulator), `stream` (long-running tasks, all at once) and `generic`
(a task list, each task asked for after its request delay, as SLS's DAG AM).
In one process on `mem://`, `driver` steps every AM from one task.
"""

from emu.am.driver import AMDriver
from emu.am.engine import AMFaults, ApplicationMaster, run_am

__all__ = ["AMDriver", "AMFaults", "ApplicationMaster", "run_am"]
