"""An `emu sls` run on a fidelity case, built one way for every test.

A case (scenarios/fidelity/cases/<name>/) is a trace.json, a nodes.json and
a conf/ directory; a test replays it from the command line (`sls_argv`, in
this process through `emu.cli.main` or in a process of its own), from
`emu.sls` (`sls_options`), or from the Python API (`replay_inputs`). Each
also takes a directory laid out as a case, for a test that changes a copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from emu.sls import SlsOptions

CASES = Path(__file__).resolve().parents[1] / "scenarios" / "fidelity" / "cases"


def case_dir(case: str | Path) -> Path:
    """The case's directory: a name under `CASES`, or a directory itself."""
    return CASES / case


def sls_argv(case: str | Path, out: Path, *extra: str, conf: bool = True) -> list[str]:
    """`emu sls` replaying the case into `out`, then `extra` options (without
    `conf`: on Hadoop's default configuration, not the case's conf/)."""
    d = case_dir(case)
    return [
        "sls",
        "--tracetype=SLS",
        f"--tracelocation={d / 'trace.json'}",
        f"--nodes={d / 'nodes.json'}",
        *([f"--conf-dir={d / 'conf'}"] if conf else []),
        f"--output-dir={out}",
        *extra,
    ]


def sls_options(case: str | Path, out: Path, **fields: Any) -> SlsOptions:
    """The `emu.sls` options of the same run; `fields` set the others."""
    d = case_dir(case)
    return SlsOptions(
        tracetype="SLS",
        traces=[str(d / "trace.json")],
        output_dir=out,
        nodes_file=str(d / "nodes.json"),
        conf_dir=str(d / "conf"),
        **fields,
    )


def replay_inputs(case: str | Path) -> dict[str, Any]:
    """`emu.api.replay`'s inputs for the case: `replay(**replay_inputs(c), ...)`."""
    d = case_dir(case)
    return {"traces": d / "trace.json", "nodes": d / "nodes.json", "conf_dir": d / "conf"}
