"""`python -m emu.hadoop` (`make hadoop`): fetch the pinned Hadoop release
with Maven, compile emu's driver against it, and say where both are."""

from __future__ import annotations

import sys

from emu.errors import InputError
from emu.hadoop import classpath as hcp


def main() -> int:
    try:
        cp = hcp.resolve(fetch=False)
    except InputError:
        print(
            f"emu.hadoop: fetching Apache Hadoop {hcp.HADOOP_VERSION} with Maven (about 105 MB "
            "into ~/.m2/repository, once)",
            flush=True,
        )
        try:
            hcp.fetch_pinned(quiet=False)
            cp = hcp.resolve(fetch=False)
        except InputError as e:
            print(f"emu: error: {e}", file=sys.stderr)
            return 2
    try:
        driver = hcp.driver_classes(cp)
    except InputError as e:
        print(f"emu: error: {e}", file=sys.stderr)
        return 2
    print(f"emu.hadoop: {cp.source}: {len(cp.entries)} jars; driver compiled in {driver}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
