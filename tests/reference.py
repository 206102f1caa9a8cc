"""Where the Apache Hadoop reference inputs live, for tests that read them.

The repository sits next to the shared material (`/work/main` and
`/work/shared`), so the path is found relative to this file rather than
hard-coded.
"""

from pathlib import Path

REFERENCE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "hadoop"
