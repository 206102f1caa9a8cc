"""Scheduler and Fair policy plugins (docs/plugins.md): the example package
installs into a virtualenv with pip and its own tests pass there, selecting
the plugins by entry point and by import path; a plugin that cannot load is
refused before the run, and one that raises during the run fails it with
its name and message, not a traceback."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fidelity_runs import sls_argv

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "emu-sjf"
CASE = "cap-max-capacity"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv that sees emu and its dependencies (a .pth file) and has
    the example plugin package installed by pip."""
    where = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    host = [str(ROOT), *site.getsitepackages()]
    (Path(purelib) / "emu-host.pth").write_text("\n".join(host) + "\n")
    # pip builds the package in its source tree (build/, *.egg-info): a copy of
    # its own, so no other build of the example can collide with this one.
    source = where.parent / "emu-sjf"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-build-isolation", "--no-index", str(source)],
        check=True,
    )  # fmt: skip
    return python


def _emu(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(python), "-m", "emu", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


def test_the_example_package_passes_its_own_tests_installed(venv: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(venv), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def _sls(python: Path, out: Path, *props: str) -> subprocess.CompletedProcess[str]:
    defines = [f"-D{p}" for p in props]
    return _emu(python, *sls_argv(CASE, out, *defines, conf=False), cwd=out.parent)


def test_an_unloadable_plugin_is_refused_before_the_run(venv: Path, tmp_path: Path) -> None:
    for name, why in (
        ("no_such_module:Sched", "cannot import 'no_such_module'"),
        ("json:JSONDecoder", "is not a scheduler"),
        ("emu_sjf:Nothing", "has no 'Nothing'"),
    ):
        done = _sls(venv, tmp_path / "out", f"yarn.resourcemanager.scheduler.class={name}")
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("emu: error:"), done.stderr
        assert "yarn.resourcemanager.scheduler.class" in lines[0] and why in lines[0]
        assert not (tmp_path / "out").exists()


def test_a_plugin_that_raises_fails_the_run_naming_it(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "broken_plugin.py").write_text(
        "from emu.rm.scheduler.fifo import FifoScheduler\n\n"
        "class Broken(FifoScheduler):\n"
        "    def app_order(self, apps):\n"
        "        if apps and apps[0].used.memory > 0:\n"
        "            raise ValueError('no order for you')\n"
        "        return apps\n"
    )
    env_python = venv
    out = tmp_path / "out"
    done = subprocess.run(
        [str(env_python), "-m", "emu",
         *sls_argv(CASE, out, "-Dyarn.resourcemanager.scheduler.class=broken_plugin:Broken",
                   conf=False)],
        capture_output=True, text=True, cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
             "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("emu: error:")]
    assert len(error) == 1
    assert "scheduler plugin broken_plugin:Broken" in error[0]
    assert "ValueError: no order for you" in error[0]
    failure = json.loads((out / "failure.json").read_text())
    assert failure["failed"] == "scheduler plugin broken_plugin:Broken"
    assert failure["error"].startswith("ValueError: no order for you (broken_plugin.py:")
    assert failure["simulated_ms"] > 0


def test_the_readmes_plugin_example_runs(venv: Path) -> None:
    """The README's commands, with the virtualenv standing in for .venv (its
    pip install is what the fixture did)."""
    section = (ROOT / "README.md").read_text().split("## Scheduler plugins", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    install, run = block.strip().splitlines()
    assert install == ".venv/bin/pip install -e examples/emu-sjf"
    assert run.startswith(".venv/bin/emu run ")
    done = _emu(venv, *run.split()[1:], cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "jobs 3 finished" in done.stdout
