"""`emu sweep` end to end: an SLS grid that resizes a nodes file, resumes
without rerunning finished points and reruns an errored one; the README's
"Sweeps" commands run as written, locally and on real `dask scheduler` and
`dask worker` processes on loopback, one worker killed mid-sweep."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emu.cli import main

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "scenarios" / "fidelity" / "cases" / "cap-preemption"

SPEC = f"""
[sweep]
name = "sls-grid"
seeds = [3]
scale = [0.5, 1]
objective = "makespan_s"
[[trace]]
name = "preempt"
type = "SLS"
files = ["{CASE / "trace.json"}"]
nodes_file = "{CASE / "nodes.json"}"
[[config]]
name = "capacity"
conf_dir = "{CASE / "conf"}"
[[config]]
name = "broken"
scheduler = "no-such-scheduler"
[target]
metric = "turnaround_p90_s"
queue = "root.interactive"
max = 1000
"""


def read_table(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_sls_sweep_resizes_resumes_and_reports(tmp_path, capsys):
    spec = tmp_path / "grid.toml"
    spec.write_text(SPEC)
    out = tmp_path / "sweep"
    argv = ["sweep", str(spec), "-o", str(out), "-j", "2", "--progress", "always"]
    assert main(argv) == 1  # the broken config's points errored
    printed = capsys.readouterr()
    assert "4/4 points" in printed.err
    rows = {r["point"]: r for r in read_table(out / "results.csv")}
    assert set(rows) == {
        "preempt_capacity_n2_s3", "preempt_capacity_n4_s3",
        "preempt_broken_n2_s3", "preempt_broken_n4_s3",
    }  # fmt: skip
    ok = rows["preempt_capacity_n4_s3"]
    assert ok["status"] == "ok" and ok["scheduler"] == "" and ok["scale"] == "1.0"
    assert int(ok["preemptions"]) > 0 and int(ok["jobs"]) == 2
    assert float(ok["root.interactive:turnaround_p90_s"]) > 0
    assert float(rows["preempt_capacity_n2_s3"]["makespan_s"]) > float(ok["makespan_s"])
    assert rows["preempt_broken_n2_s3"]["status"] == "error"
    assert "no-such-scheduler" in rows["preempt_broken_n2_s3"]["error"]
    summary = json.loads((out / "points/preempt_capacity_n2_s3/out/summary.json").read_text())
    assert summary["cluster"]["nodes"] == 2
    assert "smallest cluster meeting root.interactive:turnaround_p90_s <= 1000" in printed.out

    def stamps() -> dict[str, int]:
        return {p: (out / "points" / p / "result.json").stat().st_mtime_ns for p in rows}

    before = stamps()
    assert main(argv) == 1
    after = stamps()
    assert [p for p in rows if before[p] != after[p]] == [
        "preempt_broken_n2_s3",
        "preempt_broken_n4_s3",
    ]
    assert "2 already done" in capsys.readouterr().err

    report = tmp_path / "r.html"
    assert main(["report", str(out), "-o", str(report)]) == 0
    page = report.read_text()
    assert 'id="points"' in page and 'id="sizing"' in page and "<svg" in page
    data = re.search(r'id="emu-sweep-data">(.*?)</script>', page, re.S)
    assert data is not None and len(json.loads(data.group(1))["rows"]) == 4


def test_a_bad_spec_is_one_line_naming_the_file_and_key(tmp_path, capsys):
    spec = tmp_path / "bad.toml"
    spec.write_text('[sweep]\nseeds = [1, "2"]\n')
    assert main(["sweep", str(spec), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"emu: error: {spec}: sweep.seeds[1]: expected a positive integer, got '2'\n"
    )
    assert not (tmp_path / "out").exists()


def test_dask_missing_is_one_error_line(tmp_path, capsys, monkeypatch):
    spec = tmp_path / "grid.toml"
    spec.write_text(SPEC)
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    argv = ["sweep", str(spec), "-o", str(tmp_path / "out"), "--dask", "tcp://127.0.0.1:1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "emu: error: --dask: tcp://127.0.0.1:1: needs Dask's distributed scheduler: "
        "pip install 'emu[dask]'\n"
    )


def sweeps_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Sweeps")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def sh_lines(block_index: int) -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", sweeps_section(), re.S)
    lines = blocks[block_index].replace("\\\n", " ").splitlines()
    return [" ".join(line.split("#", 1)[0].split()) for line in lines if line.strip()]


@pytest.fixture
def in_checkout_copy(tmp_path, monkeypatch):
    """A directory with the checkout's scenarios, so the README's relative
    paths work and outputs land in a temporary directory."""
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    return tmp_path


def check_three_schedulers(out: Path) -> list[dict[str, str]]:
    rows = read_table(out / "results.csv")
    assert len(rows) == 18 and len({r["point"] for r in rows}) == 18
    assert {r["status"] for r in rows} == {"ok"}
    assert {(r["scheduler"], r["nodes"]) for r in rows} == {
        (s, n) for s in ("fifo", "capacity", "fair") for n in ("2", "4", "8")
    }
    return rows


@pytest.mark.slow
def test_readme_sweep_commands_run_as_written(in_checkout_copy, capsys):
    cmds = sh_lines(0)
    assert [c.split()[:2] for c in cmds] == [["emu", "sweep"], ["emu", "report"]], cmds
    for cmd in cmds:
        assert main(shlex.split(cmd)[1:]) == 0, cmd
    out = capsys.readouterr().out
    assert "smallest cluster meeting every queue's turnaround_p90_s <= 360" in out
    check_three_schedulers(in_checkout_copy / shlex.split(cmds[0])[-1])
    report = in_checkout_copy / shlex.split(cmds[1])[-1]
    assert 'id="sizing"' in report.read_text()


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the scheduler binds
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _tool(argv0: str) -> str:
    """A console script of this environment (the venv's bin may not be on PATH)."""
    here = Path(sys.executable).parent / argv0
    return str(here) if here.exists() else shutil.which(argv0) or argv0


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_readme_dask_sweep_survives_a_killed_worker(in_checkout_copy):
    distributed = pytest.importorskip("distributed")
    cmds = sh_lines(1)
    sched_cmd, worker_cmd, sweep_cmd = (shlex.split(c) for c in cmds)
    assert (sched_cmd[:2], worker_cmd[:2], sweep_cmd[:2]) == (
        ["dask", "scheduler"],
        ["dask", "worker"],
        ["emu", "sweep"],
    ), cmds
    address = sweep_cmd[sweep_cmd.index("--dask") + 1]
    if not _port_free(int(address.rsplit(":", 1)[1])):
        pytest.skip(f"{address} is in use on this machine")
    logs = in_checkout_copy / "logs"
    logs.mkdir()
    # The killed worker cannot remove its point's working directory: keep it here.
    scratch = in_checkout_copy / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    procs: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], name: str) -> subprocess.Popen[bytes]:
        with (logs / name).open("wb") as log:
            p = subprocess.Popen([_tool(argv[0]), *argv[1:]], stdout=log, stderr=log, env=env)
        procs.append(p)
        return p

    try:
        start(sched_cmd, "scheduler.log")
        workers = [start(worker_cmd, f"worker{k}.log") for k in (1, 2)]
        with distributed.Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=30)
            pids = client.run(os.getpid)  # worker address -> its process id
            sweep = start(sweep_cmd, "sweep.log")
            killed, running, deadline = None, set(), time.monotonic() + 60
            while killed is None and time.monotonic() < deadline:
                busy = [w for w, keys in client.processing().items() if keys]
                for w in busy:
                    victim = next((p for p in workers if p.pid == pids.get(w)), None)
                    if victim is not None:
                        time.sleep(0.5)  # the point's emu process is under way
                        running = {str(k) for k in client.processing().get(w, ())}
                        if not running:
                            continue
                        victim.send_signal(signal.SIGKILL)
                        victim.wait()
                        killed = w
                        break
                time.sleep(0.1)
            assert killed is not None, "no worker was seen running a point"
            assert sweep.wait(timeout=100) == 0, (logs / "sweep.log").read_text()[-3000:]
        out = in_checkout_copy / sweep_cmd[sweep_cmd.index("-o") + 1]
        rows = check_three_schedulers(out)
        # The points the killed worker held ran again on the other worker.
        rerun = [r for r in rows if any(f"-{r['point']}-" in key for key in running)]
        assert rerun and {r["worker"] for r in rerun} != {killed}
        assert all(r["worker"] != killed for r in rerun)
        results = list((out / "points").glob("*/result.json"))
        assert len(results) == 18
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
