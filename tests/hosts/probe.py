"""A client that lives in another network namespace: reads request lines
(`TYPE [JSON fields]`) on stdin and answers each with one JSON line (the
reply map, or {"error": ...}). Run as `python -m tests.hosts.probe ADDRESS`."""

from __future__ import annotations

import json
import sys

from emu.processes.common import SyncClient
from emu.transport import TransportError


def main() -> None:
    client = SyncClient(sys.argv[1])
    for line in sys.stdin:
        mtype, _, fields = line.strip().partition(" ")
        try:
            reply = client.call(mtype, timeout=3.0, **(json.loads(fields) if fields else {}))
        except TransportError as e:
            reply = {"error": str(e)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
