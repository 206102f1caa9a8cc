"""The integer ranges Hadoop's readers accept.

Every count, size and time in Hadoop's inputs is a Java `int` (task and job
counts, vcores) or `long` (memory, milliseconds). A number outside its range
fails in Hadoop when the file is read; emu refuses it at the same point,
because a Python integer has no limit and would instead fail deep inside a
run (msgpack cannot encode it; a list of 10**12 tasks cannot be built).
"""

from __future__ import annotations

JAVA_INT_MAX = 2**31 - 1
JAVA_LONG_MIN = -(2**63)
JAVA_LONG_MAX = 2**63 - 1
# Tasks one scenario may expand to: each is an object in memory, and a run
# that large would take days here; a typo of a few extra zeros should be
# caught at load, not by the out-of-memory killer.
MAX_TASKS = 10_000_000


def shorten(digits: str) -> str:
    """A huge number as an error message can show it."""
    return digits if len(digits) <= 24 else f"{digits[:12]}...{digits[-6:]} ({len(digits)} digits)"
