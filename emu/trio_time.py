"""trio's current time, read with one Python call instead of three.

`trio.current_time()` is a Python function that calls the runner's
`current_time`, another Python method, which calls the clock's. The RM
reads the time for every container it allocates or finishes and every
allocate it answers, the NodeManagers and AMs for every heartbeat: at
10,000 nodes that is millions of reads per simulated minute, and the two
wrapper frames were ~2 % of a replay. `current_time()` asks the running clock
itself: the same value, from the same clock, on every clock (the virtual
one, the scaled wall clock, a test's `MockClock`)."""

from __future__ import annotations

from trio._core._run import GLOBAL_RUN_CONTEXT


def current_time() -> float:
    """`trio.current_time()`: RuntimeError outside `trio.run`, as there."""
    try:
        runner = GLOBAL_RUN_CONTEXT.runner
    except AttributeError:
        raise RuntimeError("must be called from async context") from None
    t: float = runner.clock.current_time()
    return t
