"""`python -m emu`: the `emu` command (what `emu cluster up` starts its processes with)."""

import sys

from emu.cli import main

if __name__ == "__main__":
    sys.exit(main())
