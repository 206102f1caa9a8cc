"""`emu sls` and `emu rumen2sls` end to end, through the CLI's main function,
on Hadoop's own SLS sample traces and configuration (FIFO scheduler)."""

from __future__ import annotations

import csv
import itertools
import json
import re
import shutil
from pathlib import Path

import pytest

from emu.cli import main
from emu.metrics.outputs import JOBRUNTIME_HEADER
from emu.resources import Resource
from emu.scenario import read_trace
from tests.reference import REFERENCE_DIR

TEST_RES = REFERENCE_DIR / "test-resources"
RUMEN = REFERENCE_DIR / "sample-data" / "2jobs2min-rumen-jh.json"
FIFO = ["-D", "yarn.resourcemanager.scheduler.class=fifo"]

RECORD_KEYS = {
    "time",
    "jvm.free.memory",
    "jvm.max.memory",
    "jvm.total.memory",
    "running.applications",
    "running.containers",
    "cluster.allocated.memory",
    "cluster.allocated.vcores",
    "cluster.available.memory",
    "cluster.available.vcores",
    "queue.root.default.allocated.memory",
    "queue.root.default.allocated.vcores",
    "scheduler.allocate.timecost",
    "scheduler.handle.timecost",
    "scheduler.handle-NODE_UPDATE.timecost",
    "scheduler.handle-APP_ADDED.timecost",
}
METRIC_FILES = {
    "variable.running.application.csv",
    "variable.running.container.csv",
    "variable.cluster.allocated.memory.csv",
    "variable.cluster.available.vcores.csv",
    "variable.jvm.total.memory.csv",
    "counter.queue.root.default.allocated.memory.csv",
    "counter.queue.root.default.allocated.cores.csv",
    "sampler.scheduler.operation.allocate.timecost.csv",
    "sampler.scheduler.operation.handle.NODE_UPDATE.timecost.csv",
    "counter.scheduler.operation.allocate.csv",
}


@pytest.fixture(scope="module")
def conf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Hadoop's SLS test configuration, unchanged (its yarn-site picks the
    FairScheduler; the runs below override the scheduler to FIFO)."""
    d = tmp_path_factory.mktemp("conf")
    for name in ("sls-runner.xml", "yarn-site.xml", "capacity-scheduler.xml", "fair-scheduler.xml"):
        shutil.copy(TEST_RES / name, d / name)
    return d


def sls(conf_dir: Path, out: Path, *args: str) -> int:
    return main(
        ["sls", f"--conf-dir={conf_dir}", *FIFO, f"--output-dir={out}", "--invariants", *args]
    )


def check_outputs(
    out: Path, jobs: int, extra_keys: set[str] = frozenset(), virtual: bool = True
) -> list[dict]:
    """Every output exists and has SLS's shape; returns the realtimetrack records."""
    assert sorted(p.name for p in out.iterdir()) == [
        "jobruntime.csv",
        "metrics",
        "realtimetrack.json",
        "summary.json",
    ]
    lines = (out / "jobruntime.csv").read_text().splitlines()
    assert lines[0] == JOBRUNTIME_HEADER
    assert len(lines) == 1 + jobs
    for row in csv.reader(lines[1:]):
        assert len(row) == 5
        start, end = int(row[3]), int(row[4])
        assert 0 <= start < end

    summary = json.loads((out / "summary.json").read_text())
    assert [j["state"] for j in summary["jobs"]] == ["FINISHED"] * jobs

    records = json.loads((out / "realtimetrack.json").read_text())
    assert isinstance(records, list) and len(records) >= 2
    keys = set(records[0])
    assert RECORD_KEYS | extra_keys <= keys
    times = [r["time"] for r in records]
    if virtual:  # one record per simulated second, from 0
        assert times == list(range(0, 1000 * len(records), 1000))
    else:
        assert all(b - a >= 990 for a, b in itertools.pairwise(times))
    for r in records:
        assert set(r) == keys
        assert all(isinstance(v, int | float) for v in r.values())
        assert r["running.containers"] >= 0 and r["cluster.available.vcores"] >= 0
    assert max(r["running.containers"] for r in records) > 0
    total = records[-1]["cluster.allocated.memory"] + records[-1]["cluster.available.memory"]
    assert total == summary["cluster"]["total"]["memory-mb"] / 1024

    metrics = out / "metrics"
    names = {p.name for p in metrics.iterdir()}
    assert names >= METRIC_FILES
    for p in metrics.iterdir():
        rows = p.read_text().splitlines()
        assert rows[0] == "time,value", p.name
        assert len(rows) == 1 + len(records), p.name
        t, v = rows[-1].split(",")
        int(t), float(v)
    return records


TRACES = [
    pytest.param(
        [
            "--tracetype=SLS",
            f"--tracelocation={TEST_RES / 'inputsls.json'}",
            f"--nodes={TEST_RES / 'nodes.json'}",
        ],
        2,
        id="inputsls+nodes",
    ),
    pytest.param(["--tracetype=RUMEN", f"--tracelocation={RUMEN}"], 2, id="rumen-2jobs2min"),
    pytest.param(["--tracetype=SYNTH", f"--tracelocation={TEST_RES / 'syn.json'}"], 10, id="syn"),
    pytest.param(
        ["--tracetype=SYNTH", f"--tracelocation={TEST_RES / 'syn_generic.json'}"],
        10,
        id="syn_generic",
    ),
    pytest.param(
        ["--tracetype=SYNTH", f"--tracelocation={TEST_RES / 'syn_stream.json'}"], 5, id="syn_stream"
    ),
    pytest.param(["--input-sls", str(TEST_RES / "sls_dag.json")], 2, id="sls_dag"),
]


@pytest.mark.parametrize(("args", "jobs"), TRACES)
def test_reference_trace_replays_with_sls_outputs(conf_dir, tmp_path, capsys, args, jobs):
    out = tmp_path / "out"
    assert sls(conf_dir, out, *args) == 0
    check_outputs(out, jobs)
    assert "simulated s per wall s" in capsys.readouterr().out


def test_sls_trace_with_tracking_invariants_and_print_simulation(conf_dir, tmp_path, capsys):
    out = tmp_path / "out"
    ours = tmp_path / "exit.txt"
    ours.write_text(
        "AggregateNodeLocalContainersAllocated + AggregateRackLocalContainersAllocated"
        " + AggregateOffSwitchContainersAllocated == AggregateContainersAllocated\n"
        "AggregateContainersAllocated == 7 && AggregateContainersReleased == 7\n"
        "AppsCompleted == 2 && AppsRunning == 0 && AllocatedMB == 0 && PendingContainers == 0\n"
        "AppAttemptFirstContainerAllocationDelayNumOps == 2\n"
        "AvailableMB == 20 * 100240 && MemHeapUsedM > 0\n"
    )
    rc = sls(
        conf_dir,
        out,
        "--tracetype=SLS",
        f"--tracelocation={TEST_RES / 'inputsls.json'}",
        f"--nodes={TEST_RES / 'nodes.json'}",
        "--track-jobs=job_1,job_2",
        "--print-simulation",
        f"--invariants={TEST_RES / 'ongoing-invariants.txt'}",
        f"--exit-invariants={TEST_RES / 'exit-invariants.txt'}",
        f"--exit-invariants={ours}",
    )
    assert rc == 0
    tracked = {
        f"job.{j}.{f}" for j in ("job_1", "job_2") for f in ("live.containers", "usage.memory")
    }
    records = check_outputs(out, 2, tracked)
    # job_1 has 3 maps plus its AM; it runs at the start, job_2 from 105 s
    assert max(r["job.job_1.live.containers"] for r in records) == 4
    assert records[50]["job.job_2.live.containers"] == 0
    assert max(r["job.job_2.usage.memory"] for r in records) == 3.0
    assert (out / "metrics" / "variable.app.job_1.live.containers.csv").is_file()

    printed = capsys.readouterr().out
    info = printed[: printed.index("job  ")]
    # nodes.json has 20 entries, one without a name (SLS calls it "null")
    assert "# nodes = 20, # racks = 5, capacity of each node 100240 MB memory" in info
    assert "# applications = 2, # total tasks = 5" in info
    assert "job_1\tsls_queue_1\tmapreduce\t95375\t3" in info
    assert "job_2\tsls_queue_2\tmapreduce\t92052\t2" in info
    # yarn-site's RM addresses are not modelled: listed with their source line
    assert "yarn.resourcemanager.address  (" in info and "yarn-site.xml:" in info
    assert "yarn.sls.runner.pool.size: " in info


def test_same_trace_and_seed_give_identical_results(conf_dir, tmp_path):
    runs = []
    for i in range(2):
        out = tmp_path / f"run{i}"
        args = ["--tracetype=SYNTH", f"--tracelocation={TEST_RES / 'syn.json'}", "--seed=7"]
        assert sls(conf_dir, out, *args) == 0
        runs.append(out)
    for name in ("jobruntime.csv", "summary.json"):
        assert (runs[0] / name).read_bytes() == (runs[1] / name).read_bytes()
    # the time series match too, except wall-clock measurements
    a, b = (json.loads((r / "realtimetrack.json").read_text()) for r in runs)
    wall = ("jvm.", "scheduler.")
    strip = [{k: v for k, v in r.items() if not k.startswith(wall)} for r in a]
    assert strip == [{k: v for k, v in r.items() if not k.startswith(wall)} for r in b]


def _bad_traces(tmp: Path) -> list[tuple[list[str], str]]:
    good = (TEST_RES / "inputsls.json").read_text()
    truncated = tmp / "truncated.json"
    truncated.write_text(good[:700])
    wrong = tmp / "wrong-type.json"
    wrong.write_text(good.replace('"container.end.ms": 23707', '"container.end.ms": "late"'))
    negative = tmp / "negative.json"
    negative.write_text(good.replace('"container.end.ms": 23707', '"container.end.ms": 100'))
    rumen = tmp / "rumen-neg.json"
    rumen.write_text(
        RUMEN.read_text().replace(
            '      "finishTime" : 1371222078206', '      "finishTime" : 1371222000000', 1
        )
    )
    return [
        (["--tracetype=SLS", f"--tracelocation={truncated}"], f"{truncated}:25: invalid JSON"),
        (["--tracetype=SLS", f"--tracelocation={wrong}"], "container.end.ms: expected an integer"),
        (["--tracetype=SLS", f"--tracelocation={negative}"], "container.end.ms: 100 is before"),
        (["--tracetype=XML", f"--tracelocation={negative}"], "--tracetype: XML: unknown trace"),
        (["--tracetype=SLS", f"--tracelocation={tmp / 'nope.json'}"], "nope.json: no such file"),
        (["--tracetype=RUMEN", f"--tracelocation={negative}"], "negative.json:1: job 1: jobID"),
        (
            [
                "--tracetype=SLS",
                f"--tracelocation={TEST_RES / 'inputsls.json'}",
                f"--nodes={wrong}",
            ],
            "wrong-type.json:1: rack entry 1: nodes: missing",
        ),
        (
            ["--tracetype=RUMEN", f"--tracelocation={rumen}"],
            "rumen-neg.json:1: job 1 (job_1369942127770_1205), mapTasks[0], attempts[0]: "
            "finishTime: attempt duration must be > 0 ms",
        ),
    ]


def test_bad_inputs_fail_with_one_line_and_no_output(conf_dir, tmp_path, capsys):
    cases = _bad_traces(tmp_path)
    for args, expected in cases:
        out = tmp_path / "out"
        assert sls(conf_dir, out, *args) == 2, args
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        assert len(lines) == 1, captured.err
        assert lines[0].startswith("emu: error: ") and expected in lines[0], lines[0]
        assert not out.exists()


def test_failed_run_keeps_previous_result_and_leaves_no_partial_files(conf_dir, tmp_path, capsys):
    out = tmp_path / "out"
    trace = ["--tracetype=SLS", f"--tracelocation={TEST_RES / 'inputsls.json'}"]
    assert sls(conf_dir, out, *trace) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()

    broken = tmp_path / "inv.txt"
    broken.write_text("# at most one finished app\nAppsCompleted <= 1 && AllocatedMB >= 0\n")
    assert sls(conf_dir, out, *trace, f"--invariants={broken}") == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert 'invariant "AppsCompleted <= 1 && AllocatedMB >= 0"' in err[0]
    assert f"{broken}:2" in err[0]
    # job_2 is submitted at 105.2 s and finishes some seconds later
    at = re.search(r"is NOT holding during the run at simulated time (\d+)\.000 s", err[0])
    assert at is not None and 106 <= int(at.group(1)) <= 200, err[0]
    assert "AppsCompleted=2" in err[0]
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert not any(p.name.startswith(".") for p in out.iterdir())

    # a fresh directory is not even created
    fresh = tmp_path / "fresh"
    assert sls(conf_dir, fresh, *trace, f"--exit-invariants={broken}") == 1
    assert "NOT holding at exit" in capsys.readouterr().err
    assert not fresh.exists()


def test_bad_invariant_file_is_an_input_error(conf_dir, tmp_path, capsys):
    bad = tmp_path / "inv.txt"
    bad.write_text("AppsSubmitted >= 0\nNoSuchMetric > 1\n")
    trace = ["--tracetype=SLS", f"--tracelocation={TEST_RES / 'inputsls.json'}"]
    assert sls(conf_dir, tmp_path / "out", *trace, f"--invariants={bad}") == 2
    assert f"{bad}:2: unknown metric 'NoSuchMetric'" in capsys.readouterr().err


def test_rumen2sls_then_sls_replay_matches_rumen_replay(conf_dir, tmp_path, capsys):
    conv = tmp_path / "conv"
    assert main(["rumen2sls", f"--rumen-file={RUMEN}", f"--output-dir={conv}"]) == 0
    jobs_file, nodes_file = conv / "sls-jobs.json", conv / "sls-nodes.json"
    assert jobs_file.is_file() and nodes_file.is_file()
    # converting again refuses to overwrite
    assert main(["rumen2sls", f"--rumen-file={RUMEN}", f"--output-dir={conv}"]) == 2
    assert "already exists" in capsys.readouterr().err

    kw = {
        "container_default": Resource(1024, 1),
        "am_default": Resource(1024, 1),
        "resource_types": (),
    }
    rumen_wl = read_trace("RUMEN", [RUMEN], **kw)
    sls_wl = read_trace("SLS", [jobs_file], **kw)
    assert len(sls_wl.jobs) == len(rumen_wl.jobs) == 2
    for a, b in zip(rumen_wl.jobs, sls_wl.jobs, strict=True):
        assert a.job_id == b.job_id
        assert sorted(t.duration_ms for t in a.tasks) == sorted(t.duration_ms for t in b.tasks)

    a_out, b_out = tmp_path / "rumen", tmp_path / "sls"
    nodes = f"--nodes={nodes_file}"
    assert sls(conf_dir, a_out, "--tracetype=RUMEN", f"--tracelocation={RUMEN}", nodes) == 0
    assert sls(conf_dir, b_out, "--tracetype=SLS", f"--tracelocation={jobs_file}", nodes) == 0
    check_outputs(b_out, 2)
    # same jobs, same tasks, same cluster: the same simulated run
    assert (a_out / "jobruntime.csv").read_bytes() == (b_out / "jobruntime.csv").read_bytes()


def test_scaled_wall_clock_run(conf_dir, tmp_path):
    trace = tmp_path / "short.json"
    trace.write_text(
        json.dumps(
            {
                "job.id": "short",
                "job.start.ms": 0,
                "job.tasks": [
                    {"container.host": "/rack1/n1", "container.duration.ms": 1500, "count": 2}
                ],
            }
        )
    )
    out = tmp_path / "out"
    assert sls(conf_dir, out, "--tracetype=SLS", f"--tracelocation={trace}", "--rate=20") == 0
    records = check_outputs(out, 1, virtual=False)
    _, real_start, real_end, sim_start, sim_end = (
        (out / "jobruntime.csv").read_text().split()[1].split(",")
    )
    # real times are wall-clock ms: the epoch plus simulated time
    assert int(real_start) > 1_500_000_000_000
    assert int(real_end) - int(real_start) == int(sim_end) - int(sim_start)
    assert records[0]["time"] > 1_500_000_000_000


def test_help_says_what_pool_size_means(capsys):
    with pytest.raises(SystemExit):
        main(["sls", "--help"])
    text = capsys.readouterr().out
    assert "yarn.sls.runner.pool.size" in text and "--tracelocation" in text


def test_missing_scheduler_is_reported_before_running(tmp_path, capsys):
    rc = main(
        [
            "sls",
            "--conf-dir",
            str(tmp_path),
            "-D",
            "yarn.resourcemanager.scheduler.class=no.such.Scheduler",
            f"--input-sls={TEST_RES / 'inputsls.json'}",
            f"--output-dir={tmp_path / 'out'}",
        ]
    )
    assert rc == 2
    assert "unknown scheduler 'no.such.Scheduler'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_hadoop_invariant_checker_properties_and_metrics_switch(conf_dir, tmp_path, capsys):
    trace = ["--tracetype=SLS", f"--tracelocation={TEST_RES / 'inputsls.json'}"]
    broken = tmp_path / "inv.txt"
    broken.write_text("AppsSubmitted < 2\n")
    checker = [
        "-D",
        "yarn.resourcemanager.scheduler.monitor.policies="
        "org.apache.hadoop.yarn.server.resourcemanager.monitor.invariants.MetricsInvariantChecker",
        "-D",
        f"yarn.resourcemanager.invariant-checker.file={broken}",
    ]
    assert sls(conf_dir, tmp_path / "a", *trace, *checker) == 1
    assert 'invariant "AppsSubmitted < 2"' in capsys.readouterr().err

    out = tmp_path / "b"
    assert sls(conf_dir, out, *trace, "-D", "yarn.sls.metrics.switch=OFF") == 0
    assert sorted(p.name for p in out.iterdir()) == ["jobruntime.csv", "summary.json"]


def test_jobs_whose_am_gave_up_are_counted_as_failed_final_status(conf_dir, tmp_path, capsys):
    """Asks above the maximum allocation are refused; each AM unregisters with
    final status FAILED, which YARN shows as state FINISHED: the summary line
    must not read as if every job succeeded."""
    trace = ["--tracetype=SLS", f"--tracelocation={TEST_RES / 'inputsls.json'}"]
    small_max = ["-D", "yarn.scheduler.maximum-allocation-mb=1000"]
    small_max += ["-D", "yarn.scheduler.minimum-allocation-mb=256"]
    small_max += ["-D", "yarn.sls.am.container.memory=512"]
    assert sls(conf_dir, tmp_path / "out", *trace, *FIFO, *small_max) == 1
    out = capsys.readouterr().out
    assert "jobs 2 finished (2 with final status FAILED), 0 failed, 0 killed" in out


def test_a_task_key_that_is_no_resource_type_is_read_as_slsrunner_reads_it(
    conf_dir, tmp_path, capsys
):
    """Hadoop's SLS (AMDefinitionSLS) takes a task's number of containers
    from `count` and its resources only from `container.<type>` for the
    types ResourceUtils knows (memory-mb, vcores, yarn.resource-types), so
    `container.count` changes nothing: the job runs its `count` containers
    of the default size, and emu says once which key it left out."""
    task = {"count": 2, "container.count": 5, "container.duration.ms": 4000}
    job = {"job.id": "j", "job.queue.name": "sls_queue_1", "job.tasks": [task]}
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(job))
    out = tmp_path / "out"
    args = ["sls", f"--conf-dir={conf_dir}", f"--input-sls={trace}", f"--output-dir={out}"]
    assert main([*args, *FIFO, f"--nodes={TEST_RES / 'nodes.json'}", "--container-log"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "container.count" in line]
    assert len(warnings) == 1 and "not a declared resource type" in warnings[0]
    with (out / "containers.csv").open() as f:
        allocated = [r for r in csv.DictReader(f) if r["event"] == "allocated"]
    assert len(allocated) == 3  # the AM and two tasks
    assert {(r["memory_mb"], r["vcores"]) for r in allocated} == {("1024", "1")}
    summary = json.loads((out / "summary.json").read_text())
    assert [j["state"] for j in summary["jobs"]] == ["FINISHED"]
