"""Where the Apache Hadoop reference inputs live, for tests that read them.

`tests/data/hadoop/` is a verbatim copy of the shared reference material
(SLS traces, topology files, Hadoop configuration files; Apache License 2.0,
provenance in its SOURCES.md), so the suite runs from a checkout alone and a
change to the shared folder cannot change what the tests see unnoticed.
"""

from pathlib import Path

REFERENCE_DIR = Path(__file__).resolve().parent / "data" / "hadoop"
