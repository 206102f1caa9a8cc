"""Trace readers: every workload input becomes one `emu.workload.Workload`.

The formats are SLS's (`slsrun.sh --tracetype=SLS|RUMEN|SYNTH`):

- `sls`: SLS's own JSON job stream (`read_sls`), also home of the JSON-stream
  and `/rack/host` helpers the other readers share;
- `rumen`: Hadoop job-history traces (`read_rumen`), and `rumen2sls`, the
  converter SLS ships as `rumen2sls.sh`;
- `synth`: seeded sampling from SYNTH workload descriptions (`read_synth`);
- `topology`: the `--nodes` cluster topology file (`read_nodes_file`).

Every reader raises `emu.errors.InputError` naming the file and the line or
key at fault; nothing here touches the clock, the network or the RM.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from emu.errors import InputError
from emu.resources import Resource
from emu.scenario.rumen import read_rumen
from emu.scenario.sls import read_sls
from emu.scenario.synth import read_synth
from emu.workload import Workload

TRACE_TYPES = ("SLS", "RUMEN", "SYNTH")


def read_trace(
    tracetype: str,
    paths: Sequence[str | os.PathLike[str]],
    *,
    container_default: Resource,
    am_default: Resource,
    resource_types: Iterable[str],
    seed: int | None = None,
) -> Workload:
    """Read traces of one `--tracetype` (case-insensitive) into a Workload.

    SLS and RUMEN read every path onto one timeline; SYNTH, like SLS, reads
    only the first. `resource_types` are the cluster's extra types
    (`yarn.resource-types`), the only ones an SLS trace may ask for. `seed`
    is used by SYNTH only.
    """
    kind = tracetype.strip().upper()
    if kind not in TRACE_TYPES:
        raise InputError(
            "--tracetype",
            tracetype,
            f"unknown trace type; expected one of {', '.join(TRACE_TYPES)}",
        )
    if not paths:
        raise InputError("--tracelocation", None, "no trace file given")
    for p in paths:
        if Path(p).is_dir():
            raise InputError(os.fspath(p), None, "is a directory; give the trace file(s) in it")
        if not Path(p).is_file():
            raise InputError(os.fspath(p), None, "no such file")
    if kind == "SLS":
        return read_sls(
            paths,
            container_default=container_default,
            am_default=am_default,
            resource_types=resource_types,
        )
    if kind == "RUMEN":
        return read_rumen(paths, container_default=container_default, am_default=am_default)
    return read_synth(
        paths[0], container_default=container_default, am_default=am_default, seed=seed
    )
