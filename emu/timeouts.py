"""How long an actor waits for a reply before it asks again.

Timeouts are in simulated seconds (trio's clock), so they mean the same at
every rate -- but at a high rate a few simulated seconds are a few wall
milliseconds, and a busy host would turn slow replies into spurious
timeouts. Over the network a timeout is therefore never shorter than a
floor of wall time; in-process (`mem://`) there is none, as before.
"""

from __future__ import annotations

import trio

from emu.transport import request_timeout


def network_timeout(address: str, simulated_s: float, min_wall_s: float) -> float | None:
    """`simulated_s`, but at least `min_wall_s` of wall time; None in-process."""
    timeout = request_timeout(address, simulated_s)
    if timeout is None:
        return None
    rate = getattr(trio.lowlevel.current_clock(), "rate", 1.0)
    return max(timeout, min_wall_s * rate)
