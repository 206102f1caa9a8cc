"""Hadoop's scheduler runs the same way every time where it iterates a
HashSet or HashMap keyed by objects without a hashCode of their own.

The preemption policy hands queues of equal need their shares in the order
of a HashSet<TempQueuePerPartition>
(PreemptableResourceCalculator.computeIdealResourceDistribution). In
cap-preemption-equal-leaves two identical flexible leaves each hold an AM
and their guarantees round to no vcore: the leaf served first keeps its
vcore, the other's AM is preempted. With the JVM's default identity hashes
the loser changed from run to run; emu's JVM makes every identity hash 1
(`emu.hadoop.bridge`), so such a set iterates in insertion order, the order
emu's port walks the queues in.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.hadoop.conftest import ROOT, runtime_and_containers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

CASE = "cap-preemption-equal-leaves"


def test_identity_hashes_are_fixed():
    probe = (
        "import os, jpype\n"
        "from emu.hadoop import bridge\n"
        "bridge.start()\n"
        "System, Object = jpype.JClass('java.lang.System'), jpype.JClass('java.lang.Object')\n"
        "print(System.identityHashCode(Object()), System.identityHashCode(Object()), flush=True)\n"
        "os._exit(0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1", "1"]


def test_equal_leaves_preempted_alike_every_run(tmp_path):
    runs = [
        runtime_and_containers(CASE, tmp_path / f"hadoop-{i}", "--scheduler-impl", "hadoop")
        for i in range(3)
    ]
    assert runs[1] == runs[0]
    assert runs[2] == runs[0]
    jobs, containers = runs[0]
    # alice's app (the second leaf created) loses its AM to preemption
    assert b"preempted,container_0_0003_01_000001," in containers
    assert runtime_and_containers(CASE, tmp_path / "emu") == (jobs, containers)
