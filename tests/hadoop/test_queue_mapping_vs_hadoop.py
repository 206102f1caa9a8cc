"""Queue mappings decided by emu's CapacityScheduler and by Hadoop's
CSMappingPlacementRule (`--scheduler-impl hadoop`): the first matching
legacy rule decides, and a rule whose queue is not valid falls back to
root.default, or rejects the app when root.default is not a leaf."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.fidelity_runs import CASES
from tests.hadoop.conftest import sls_case

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

CASE = "cap-queue-mapping-fallback"
REJECTED = "Application submission have been rejected by a mapping rule"


def test_a_mapping_that_names_no_queue_places_in_root_default_as_hadoop(tmp_path):
    ours = sls_case(CASE, tmp_path / "emu", "--container-log")
    hadoops = sls_case(CASE, tmp_path / "hadoop", "--container-log", "--scheduler-impl", "hadoop")
    for name in ("jobruntime.csv", "containers.csv"):
        assert (ours / name).read_bytes() == (hadoops / name).read_bytes(), name


def _without_root_default(dest: Path) -> Path:
    """The case with queues eng (60 %) and sci (40 %) only."""
    shutil.copytree(CASES / CASE, dest)
    xml = dest / "conf" / "capacity-scheduler.xml"
    text = xml.read_text(encoding="utf-8").replace("default,eng,sci", "eng,sci")
    text = re.sub(
        r"<property>\s*<name>yarn\.scheduler\.capacity\.root\.default\.[^<]*</name>"
        r"\s*<value>[^<]*</value>\s*</property>",
        "",
        text,
    )
    text = re.sub(
        r"(<name>yarn\.scheduler\.capacity\.root\.eng\.(?:maximum-)?capacity</name>\s*<value>)40",
        r"\g<1>60",
        text,
    )
    xml.write_text(text, encoding="utf-8")
    return dest


def test_without_root_default_the_fallback_rejects_as_hadoop(tmp_path):
    d = _without_root_default(tmp_path / "case")
    runs = {}
    for impl in ("emu", "hadoop"):
        out = sls_case(
            str(d), tmp_path / impl, f"--scheduler-impl={impl}", "--timing=yarn", failed_jobs=True
        )
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        assert summary["failure_hint"].startswith("3 of 4 jobs failed: " + REJECTED)
        runs[impl] = (out / "jobruntime.csv").read_bytes()
    assert runs["emu"] == runs["hadoop"]
    assert b"sci_1,4000,49050" in runs["emu"]  # the one user with a queue ran
