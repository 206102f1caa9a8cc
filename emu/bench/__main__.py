"""`python -m emu.bench`: see `emu.bench.figures`."""

import sys

from emu.bench.legacy import main

sys.exit(main())
