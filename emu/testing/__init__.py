"""Test support for emu, for a scheduler plugin's or a scenario's own tests.

Everything here runs in one process, in memory, on emu's virtual clock; it
imports no test framework, so it serves pytest and unittest alike.

- `emu.testing.cluster`: whole clusters. `simulation(jobs)` runs a workload
  on a small FIFO cluster, `scenario_simulation(file)` a scenario; `mr_job`,
  `nodes` and `fifo_conf` build their parts. The RM's invariants are
  checked while they run (`emu.simulation.run_virtual` runs one).
- `emu.testing.rm`: `RMHarness`, the RM core alone, driven with the
  protocol messages NMs and AMs send (register, heartbeat, submit,
  allocate), with no transports or actors.
- `emu.testing.capacity` and `emu.testing.fair`: `CapacityHarness` (the
  module's `Harness`) and `FSHarness`, one scheduler driven directly as
  Hadoop's own unit tests drive CapacityScheduler and FairScheduler.
  The RM reads the time from trio: `run_on_virtual_clock(fn)` calls `fn`
  inside a trio run on the virtual clock (under pytest-trio, a test with the
  `autojump_clock` fixture already has one).

docs/testing.md shows each in use.
"""

from emu.testing.capacity import Harness as CapacityHarness
from emu.testing.cluster import (
    SCENARIOS,
    ask,
    fifo_conf,
    mr_job,
    nodes,
    run_on_virtual_clock,
    scenario_simulation,
    simulation,
)
from emu.testing.fair import FSHarness, write_alloc
from emu.testing.rm import RMHarness

__all__ = [
    "SCENARIOS",
    "CapacityHarness",
    "FSHarness",
    "RMHarness",
    "ask",
    "fifo_conf",
    "mr_job",
    "nodes",
    "run_on_virtual_clock",
    "scenario_simulation",
    "simulation",
    "write_alloc",
]
