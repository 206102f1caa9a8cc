"""The structured event log: one JSON object per line, stamped with
simulated time.

It goes through structlog so users can post-process it with the usual
tools, but with a logger of its own (not the global configuration), so
several runs in one process do not share a file. Records carry simulated
milliseconds (`t`), never wall time, so two runs of one scenario write the
same bytes.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import IO, Any, TextIO, cast

import structlog
import trio


def _stamp(logger: Any, method: str, event_dict: MutableMapping[str, Any]) -> dict[str, Any]:
    kind = event_dict.pop("event")
    return {"t": round(trio.current_time() * 1000), "event": kind, **event_dict}


class EventLog:
    """Emits `{"t": ms, "event": kind, ...fields}` lines to a file, or nothing."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.enabled = stream is not None
        self._log = (
            structlog.wrap_logger(
                # WriteLogger only writes and flushes, which any text stream does.
                structlog.WriteLogger(cast(TextIO, stream)),
                processors=[_stamp, structlog.processors.JSONRenderer()],
            )
            if stream is not None
            else None
        )

    def emit(self, kind: str, /, **fields: Any) -> None:
        if self._log is not None:
            self._log.info(kind, **fields)
