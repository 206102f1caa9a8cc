"""When emu's simulated AMs and NMs act: YARN's timing or SLS's.

emu's AM (emu.am.engine) and NM (emu.nm) act as YARN's do: an AM's
heartbeats start when it registers, its first allocate goes out at once,
and what an allocate returns (containers to start, completions) is acted on
as it arrives; a NodeManager heartbeats as soon as it has registered; a
job ends when the RM finishes its application.

Hadoop's SLS (hadoop-sls 3.4.2) times the same steps otherwise, and each
difference adds to every job's end (about a second or two per job and one
more per wave of containers). `SLS` reproduces them; `emu sls`, which
replays SLS traces as SLS does, uses it by default (`--timing yarn` for
YARN's); emu's own scenario format keeps `YARN` (scenarios model a YARN
cluster, not SLS). The scheduler's decisions are the same under both: only
when the AMs and NMs ask and report moves.

What SLS does that YARN does not (SLS's Java, hadoop-sls 3.4.2):

- `am_ticks_from_submission`: an AM simulator is a TaskRunner task from its
  submission (AMSimulator.firstStep submits the app); its middleStep runs
  every `yarn.sls.am.heartbeat.interval.ms` after that and does nothing
  until the AM container is launched (MockAMLauncher.handle registers the
  AM at once, notifyAMContainerLaunched). So the AM registers when its
  container is launched, but its first allocate, and every one after, falls
  on submission + k * interval (TaskRunner.Task.run). A YARN AM heartbeats
  from registration, the first allocate right after it.
- `am_replies_next_heartbeat`: MRAMSimulator.middleStep first processes the
  allocate responses queued by the previous middleStep
  (processResponseQueue: starts the allocated containers, counts
  completions, unregisters once every task is done), then allocates and
  queues the response (sendContainerRequest: `responseQueue.put`). Every
  container therefore starts, and every completion is seen, one AM
  heartbeat after the allocate that returned it; the AM unregisters one
  heartbeat after its last task's completion reached it, without
  allocating again. One allocate per heartbeat: the asks stated are those
  after the queued response was processed. A YARN AM (AMRMClientAsync)
  hands each response to its handler as it arrives.
- `nm_first_heartbeat_after_interval`: NMRunner gives each NMSimulator a
  random start in [0, interval) and NMSimulator.firstStep does nothing: its
  first heartbeat comes one interval later, in [interval, 2 * interval)
  after the simulation's start (emu's NMs: in [0, interval)). A YARN NM
  heartbeats as soon as it has registered.
- `end_at_unregister`: SLS's jobruntime.csv ends a job when its AM has
  unregistered (AMSimulator.lastStep: simulateFinishTimeMS is taken right
  after finishApplicationMaster), not when the RM finishes the application
  (YARN: once the NM has reported the AM container's exit, at its next
  heartbeat).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Which of SLS's timings the AMs, NMs and job records follow (each
    False: YARN's). See the module docstring for what each one is."""

    am_ticks_from_submission: bool = False
    """AM heartbeats fall on submission + k * interval (SLS); False: from
    registration, the first allocate at registration (YARN)."""
    am_replies_next_heartbeat: bool = False
    """An allocate's response is acted on at the AM's next heartbeat (SLS);
    False: as it arrives (YARN)."""
    nm_first_heartbeat_after_interval: bool = False
    """A registered node's first heartbeat comes one interval after its
    random offset (SLS); False: at the offset (emu's NMs)."""
    end_at_unregister: bool = False
    """A job's end is when its AM unregistered (SLS's jobruntime.csv);
    False: when the RM finished its application (YARN)."""

    @property
    def name(self) -> str:
        return "yarn" if self == YARN else "sls" if self == SLS else "custom"


YARN = Timing()
"""YARN's timing: emu's scenario format and `emu sls --timing yarn`."""
SLS = Timing(
    am_ticks_from_submission=True,
    am_replies_next_heartbeat=True,
    nm_first_heartbeat_after_interval=True,
    end_at_unregister=True,
)
"""SLS's timing: `emu sls`'s default."""
TIMINGS = {"yarn": YARN, "sls": SLS}
