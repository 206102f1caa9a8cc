"""emu.testing.scenario_simulation takes a scenario by path from anywhere,
as a plugin's own tests give theirs, and a bundled one by name."""

from __future__ import annotations

import shutil

import pytest

from emu.errors import InputError
from emu.testing import SCENARIOS, scenario_simulation


def test_a_scenario_by_path_outside_the_source_tree(tmp_path, monkeypatch) -> None:
    mine = tmp_path / "mine.toml"
    shutil.copy(SCENARIOS / "three-jobs.toml", mine)
    monkeypatch.chdir(tmp_path)
    assert len(scenario_simulation("mine.toml").workload.jobs) == 3
    assert len(scenario_simulation(mine).workload.jobs) == 3


def test_a_bundled_scenario_by_name() -> None:
    assert len(scenario_simulation("three-jobs.toml").workload.jobs) == 3


def test_a_missing_scenario_is_one_error_naming_it(tmp_path) -> None:
    with pytest.raises(InputError, match=r"nothing\.toml"):
        scenario_simulation(tmp_path / "nothing.toml")
