"""`python -m emu.hadoop` (`make hadoop`): fetch the Hadoop releases emu
pins with Maven, compile emu's driver against each, and say where they are."""

from __future__ import annotations

import sys

from emu.errors import InputError
from emu.hadoop import classpath as hcp


def main() -> int:
    for version in hcp.VERSIONS:
        try:
            cp = hcp.resolve(fetch=False, version=version)
        except InputError:
            print(
                f"emu.hadoop: fetching Apache Hadoop {version} with Maven (about 105 MB "
                "into ~/.m2/repository, once)",
                flush=True,
            )
            try:
                hcp.fetch_pinned(quiet=False, version=version)
                cp = hcp.resolve(fetch=False, version=version)
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
