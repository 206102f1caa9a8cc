"""emu's federation policies against Hadoop's own classes
(org.apache.hadoop.yarn.server.federation.policies, 3.4.2) on random
federations: every routing and splitting decision, or the refusal's
message, identical (`python -m emu.federation.fidelity`)."""

from __future__ import annotations

import json
import subprocess
import sys


def _campaign(seed: int, cases: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "emu.federation.fidelity",
            "--seed",
            str(seed),
            "--cases",
            str(cases),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_random_federations_decide_as_hadoops_policy_classes() -> None:
    done = _campaign(11, 45)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "45 of 45 random federations identical" in done.stdout
    table = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
    # Every policy manager Hadoop 3.4.2 has was drawn.
    assert len(table["by_manager"]) == 7, table["by_manager"]
    assert table["decisions"] > 300
