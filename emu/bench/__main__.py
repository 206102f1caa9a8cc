"""`python -m emu.bench`: the figures of `emu.bench.figures`."""

import sys

from emu.bench.figures import main

sys.exit(main())
