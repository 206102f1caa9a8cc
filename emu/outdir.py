"""`--output-dir`: created on demand, or one error line saying why it cannot be.

`emu run`, `emu sls` and `emu rumen2sls` all write into a directory the user
names; a path under a file, on a read-only mount or without permission must
end in `emu: error: --output-dir: PATH: ...` and exit code 2, not an OSError
traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

from emu.errors import InputError


def make(path: str | os.PathLike[str]) -> Path:
    """The directory at `path`, created with its parents if missing."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError("--output-dir", str(out), "exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError("--output-dir", str(out), f"cannot create it: {e.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise InputError("--output-dir", str(out), "cannot write there: permission denied")
    return out
