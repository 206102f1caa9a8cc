"""No tracebacks, clean exits, nothing left behind: the `emu` command run as
a real process on bad output directories, bad trace locations and values,
signals and a closed stdout; plus `--help` and `--version`."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emu import __version__
from emu.cli import build_parser, main
from tests.reference import REFERENCE_DIR

ROOT = Path(__file__).resolve().parents[2]
TRACE = REFERENCE_DIR / "test-resources" / "inputsls.json"
SYN = REFERENCE_DIR / "test-resources" / "syn.json"
CONF = REFERENCE_DIR / "sample-conf"
RUMEN = REFERENCE_DIR / "sample-data" / "2jobs2min-rumen-jh.json"
EMU = (sys.executable, "-m", "emu")


def emu(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EMU, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def start(cwd: Path, *sls_args: str) -> subprocess.Popen[str]:
    """`emu sls` with SLS's sample configuration, writing to `cwd`/out."""
    return subprocess.Popen(
        [*EMU, "sls", f"--conf-dir={CONF}", *sls_args, "--output-dir=out"],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def one_error_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("emu: ")
    return lines[0]


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".emu-*"))


@pytest.mark.parametrize("command", ["sls", "run", "rumen2sls"])
def test_output_dir_that_cannot_be_created_is_one_error_line(command, tmp_path):
    (tmp_path / "a-file").write_text("")
    bad = tmp_path / "a-file" / "out"
    argv = {
        "sls": ["sls", f"--conf-dir={CONF}", "--tracetype=SLS", f"--tracelocation={TRACE}"],
        "run": ["run", ROOT / "scenarios" / "three-jobs.toml"],
        "rumen2sls": ["rumen2sls", f"--rumen-file={RUMEN}"],
    }[command]
    line = one_error_line(emu(*argv, f"--output-dir={bad}", cwd=tmp_path), 2)
    assert line == f"emu: error: --output-dir: {bad}: cannot create it: Not a directory"


def test_bad_trace_location_and_values_are_one_error_line(tmp_path):
    line = one_error_line(
        emu(
            "sls", "--tracetype=SLS", f"--tracelocation={tmp_path}", "--output-dir=o", cwd=tmp_path
        ),
        2,
    )
    assert line == f"emu: error: {tmp_path}: is a directory; give the trace file(s) in it"
    negative = tmp_path / "neg.json"
    negative.write_text(TRACE.read_text().replace('"job.end.ms": 95375', '"job.end.ms": -5'))
    line = one_error_line(
        emu(
            "sls", "--tracetype=SLS", f"--tracelocation={negative}", "--output-dir=o", cwd=tmp_path
        ),
        2,
    )
    assert line.endswith("job 1: job.end.ms: must be >= 0, got -5")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_during_sls_stops_with_one_line_and_no_staging(signum, code, tmp_path):
    """On scaled wall time the run lasts long enough to be interrupted."""
    proc = start(tmp_path, "--tracetype=SYNTH", f"--tracelocation={SYN}", "--rate=1")
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob("out/.emu-sls-staging-*")):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    line = one_error_line(done, code)
    assert line == f"emu: stopped by {signal.Signals(signum).name}; no outputs written"
    assert not (tmp_path / "out").exists()


def test_closed_stdout_is_not_an_error(tmp_path):
    """As under `| head`: the reader is gone before emu writes a line."""
    proc = start(tmp_path, "--tracetype=SLS", f"--tracelocation={TRACE}", "--print-simulation")
    with proc:
        proc.stdout.close()
        err = proc.stderr.read()
        proc.wait(timeout=60)
    assert proc.returncode == 128 + signal.SIGPIPE
    assert err == ""
    assert leftovers(tmp_path) == []


def _options(parser: argparse.ArgumentParser, path: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{path} {name}")
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield path, action


def test_every_option_has_help_that_shows_its_default():
    missing = []
    for path, action in _options(build_parser(), "emu"):
        if action.help == argparse.SUPPRESS:
            continue
        flag = "/".join(action.option_strings) or action.dest
        explained = (
            action.required
            or not action.option_strings
            or isinstance(action, argparse._StoreTrueAction)
            or "default" in (action.help or "")
        )
        if not action.help or not explained:
            missing.append(f"{path} {flag}")
    assert missing == []


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    first, *hadoop = capsys.readouterr().out.strip().split("\n")
    assert first.startswith(f"emu {__version__}, ")
    assert first.endswith(")") and ("compiled (" in first or "pure Python (" in first)
    # each pinned release's jars for the real-scheduler backend, or why there are none yet
    assert len(hadoop) == 2
    assert all(line.startswith("Hadoop schedulers") for line in hadoop)
    assert "3.4.2" in hadoop[0] and "3.5.0" in hadoop[1]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--hadoop-classpath", "/tmp"],
            "--hadoop-classpath: emu.hadoop.classpath: Hadoop jars are given but emu's own "
            "scheduler would run",
        ),
        (
            ["-D", "emu.scheduler.impl=java"],
            "-D: emu.scheduler.impl: unknown scheduler implementation",
        ),
        (
            ["-D", "yarn.resourcemanager.scheduler.class=com.example.Mine"],
            "another class runs with --scheduler-impl hadoop",
        ),
    ],
)
def test_real_scheduler_settings_not_acted_on_are_refused(capsys, args, says):
    """Without --scheduler-impl hadoop, nothing that only the real-scheduler
    backend reads is accepted in silence (no JVM needed to say so)."""
    assert main(["run", str(ROOT / "scenarios" / "three-jobs.toml"), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("emu: error: ") and says in err[0], err
