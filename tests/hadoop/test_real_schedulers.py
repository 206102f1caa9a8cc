"""Hadoop's own FifoScheduler, CapacityScheduler and FairScheduler (Apache
Hadoop 3.4.2 from Maven Central) deciding inside emu's RM on the virtual
clock: Hadoop's reference traces replay with every job finished and the same
outputs twice; Capacity in absolute-resource and weight mode; a labelled
partition; a scheduler class compiled here; the errors a user meets."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.hadoop.conftest import TEST_RES, emu
from tests.reference import REFERENCE_DIR, WALL_FIELDS

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hadoop")]

SCHED = "yarn.resourcemanager.scheduler.class"
TRACES = {
    "sls": [
        "--tracetype=SLS",
        f"--tracelocation={TEST_RES / 'inputsls.json'}",
        f"--nodes={TEST_RES / 'nodes.json'}",
    ],
    "synth": ["--tracetype=SYNTH", f"--tracelocation={TEST_RES / 'syn.json'}"],
    "rumen": [
        "--tracetype=RUMEN",
        f"--tracelocation={REFERENCE_DIR / 'sample-data' / '2jobs2min-rumen-jh.json'}",
    ],
}
JOBS = {"sls": 2, "synth": 10, "rumen": 2}


def _sls(conf_dir: Path, out: Path, scheduler: str, trace: str, *extra: str) -> Path:
    done = emu(
        "sls",
        f"--conf-dir={conf_dir}",
        "--scheduler-impl",
        "hadoop",
        "-D",
        f"{SCHED}={scheduler}",
        *TRACES[trace],
        f"--output-dir={out}",
        *extra,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    return out


def _finished(out: Path) -> list[dict]:
    jobs = json.loads((out / "summary.json").read_text())["jobs"]
    assert jobs and all(j["state"] == "FINISHED" for j in jobs), [
        (j["job_id"], j["state"], j.get("diagnostics")) for j in jobs
    ]
    return jobs


# Each scheduler once and each trace format once (the fidelity suite replays
# every format under every scheduler against emu's port).
@pytest.mark.parametrize(
    ("scheduler", "trace"), [("fifo", "rumen"), ("capacity", "sls"), ("fair", "synth")]
)
def test_reference_traces_finish_and_repeat(
    conf_dir: Path, tmp_path: Path, scheduler: str, trace: str
) -> None:
    first = _sls(conf_dir, tmp_path / "a", scheduler, trace)
    second = _sls(conf_dir, tmp_path / "b", scheduler, trace)
    assert len(_finished(first)) == JOBS[trace]
    assert (first / "jobruntime.csv").read_bytes() == (second / "jobruntime.csv").read_bytes()
    for name in ("summary.json", "realtimetrack.json"):
        a = WALL_FIELDS.sub(b"", (first / name).read_bytes())
        b = WALL_FIELDS.sub(b"", (second / name).read_bytes())
        assert a == b, name


@pytest.mark.parametrize("scheduler", ["fifo", "fair"])
def test_container_log_names_locality_and_placement_order(
    conf_dir: Path, tmp_path: Path, scheduler: str
) -> None:
    """Hadoop's containers.csv says which request each placement answered
    (read before the pull: acquiring a container clears its ContainerRequest)
    and lists one heartbeat's placements in the order they were made across
    apps; on the SYNTH sample it equals the port's, row for row."""
    hadoop = _sls(conf_dir, tmp_path / "hadoop", scheduler, "synth", "--container-log")
    port = emu(
        "sls",
        f"--conf-dir={conf_dir}",
        "-D",
        f"{SCHED}={scheduler}",
        *TRACES["synth"],
        f"--output-dir={tmp_path / 'port'}",
        "--container-log",
    )
    assert port.returncode == 0, port.stderr[-2000:]
    rows = (hadoop / "containers.csv").read_text().splitlines()
    assert any(",RACK_LOCAL," in row for row in rows)
    assert rows == (tmp_path / "port" / "containers.csv").read_text().splitlines()


def _scenario(tmp_path: Path, config: dict[str, str], jobs: str, cluster: str = "") -> Path:
    conf = "\n".join(f'"{k}" = "{v}"' for k, v in config.items())
    text = (
        textwrap.dedent(
            """\
            name = "case"
            seed = 3
            [cluster]
            racks = 2
            nodes_per_rack = 2
            node_memory_mb = 8192
            node_vcores = 8
            """
        )
        + cluster
        + "\n[config]\n"
        + conf
        + "\n"
        + textwrap.dedent(jobs)
    )
    path = tmp_path / "case.toml"
    path.write_text(text)
    return path


TWO_QUEUE_JOBS = """
[[jobs]]
id = "a"
type = "mapreduce"
submit_ms = 0
queue = "a"
user = "ann"
  [[jobs.tasks]]
  type = "map"
  count = 20
  duration_ms = 30000
  memory_mb = 2048
[[jobs]]
id = "b"
type = "mapreduce"
submit_ms = 0
queue = "b"
user = "bob"
  [[jobs.tasks]]
  type = "map"
  count = 20
  duration_ms = 30000
  memory_mb = 2048
"""


def _run(scenario: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return emu("run", str(scenario), "--scheduler-impl", "hadoop", "-o", str(out), *extra)


def _jobs(out: Path) -> dict[str, dict]:
    return {j["job_id"]: j for j in _finished(out)}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param("[memory=24576,vcores=24]", "[memory=8192,vcores=8]", id="absolute"),
        pytest.param("3w", "1w", id="weights"),
    ],
)
def test_capacities_in_resources_and_weights(tmp_path: Path, a: str, b: str) -> None:
    """Absolute-resource and weight capacities (3:1): queue a, guaranteed three
    quarters of the cluster, finishes its equal job well before b."""
    config = {
        SCHED: "capacity",
        "yarn.scheduler.capacity.root.queues": "a,b",
        "yarn.scheduler.capacity.root.a.capacity": a,
        "yarn.scheduler.capacity.root.b.capacity": b,
        "yarn.scheduler.capacity.root.a.maximum-capacity": "100" if "w" in a else a,
        "yarn.scheduler.capacity.root.b.maximum-capacity": "100" if "w" in b else b,
    }
    scenario = _scenario(tmp_path, config, TWO_QUEUE_JOBS)
    done = _run(scenario, tmp_path / "out")
    assert done.returncode == 0, done.stderr[-2000:]
    jobs = _jobs(tmp_path / "out")
    assert jobs["a"]["queue"].endswith("a") and jobs["b"]["queue"].endswith("b")
    assert jobs["a"]["finish_ms"] < jobs["b"]["finish_ms"] - 20_000, jobs
    again = tmp_path / "again"
    assert _run(scenario, again).returncode == 0
    assert (again / "jobruntime.csv").read_bytes() == (
        tmp_path / "out" / "jobruntime.csv"
    ).read_bytes()


def test_labelled_partition_keeps_queue_b_off_the_gpu_nodes(tmp_path: Path) -> None:
    """node1 and node2 carry the exclusive label gpu. Queue b's containers may
    not go there: its job runs on two nodes' worth, so it takes twice as long
    as on an unlabelled cluster, while queue a (default label gpu) runs on the
    gpu nodes beside it."""
    nodes = tmp_path / "nodes.json"
    nodes.write_text(
        json.dumps(
            [
                {
                    "rack": "r1",
                    "nodes": [
                        {"node": "node1", "labels": "gpu"},
                        {"node": "node2", "labels": "gpu"},
                    ],
                },
                {"rack": "r2", "nodes": [{"node": "node3"}, {"node": "node4"}]},
            ]
        )
    )
    plain = tmp_path / "plain.json"
    plain.write_text(
        json.dumps(
            [
                {"rack": "r1", "nodes": [{"node": "node1"}, {"node": "node2"}]},
                {"rack": "r2", "nodes": [{"node": "node3"}, {"node": "node4"}]},
            ]
        )
    )
    trace = tmp_path / "trace.json"
    tasks = [
        {
            "container.start.ms": 1000,
            "container.end.ms": 31000,
            "container.priority": 20,
            "container.type": "map",
            "container.memory-mb": 2048,
        }
        for _ in range(12)
    ]
    trace.write_text(
        "\n".join(
            json.dumps(
                {
                    "am.type": "mapreduce",
                    "job.start.ms": 0,
                    "job.end.ms": 31000,
                    "job.queue.name": q,
                    "job.id": f"job_{q}",
                    "job.user": q,
                    "job.tasks": tasks,
                }
            )
            for q in ("a", "b")
        )
    )
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "yarn-site.xml").write_text(
        _xml(
            {
                SCHED: "capacity",
                "yarn.node-labels.enabled": "true",
                "yarn.scheduler.minimum-allocation-mb": "1024",
            }
        )
    )
    cs = {
        "yarn.scheduler.capacity.root.queues": "a,b",
        "yarn.scheduler.capacity.root.a.capacity": "50",
        "yarn.scheduler.capacity.root.b.capacity": "50",
        "yarn.scheduler.capacity.root.a.maximum-capacity": "100",
        "yarn.scheduler.capacity.root.b.maximum-capacity": "100",
        "yarn.scheduler.capacity.root.accessible-node-labels": "*",
        "yarn.scheduler.capacity.root.accessible-node-labels.gpu.capacity": "100",
        "yarn.scheduler.capacity.root.a.accessible-node-labels": "gpu",
        "yarn.scheduler.capacity.root.a.accessible-node-labels.gpu.capacity": "100",
        "yarn.scheduler.capacity.root.a.default-node-label-expression": "gpu",
        "yarn.scheduler.capacity.maximum-am-resource-percent": "0.5",
    }
    (conf / "capacity-scheduler.xml").write_text(_xml(cs))
    (conf / "sls-runner.xml").write_text(_xml({}))
    # On a cluster without the label, the same queues without their label
    # settings: YARN refuses an app whose queue's default label the cluster
    # does not have, so it is not the same configuration there.
    plain_conf = tmp_path / "plain-conf"
    plain_conf.mkdir()
    for name in ("yarn-site.xml", "sls-runner.xml"):
        (plain_conf / name).write_text((conf / name).read_text())
    unlabelled_cs = {k: v for k, v in cs.items() if "node-label" not in k}
    (plain_conf / "capacity-scheduler.xml").write_text(_xml(unlabelled_cs))

    def run(nodes_file: Path, out: Path, conf: Path = conf) -> dict[str, float]:
        done = emu(
            "sls",
            f"--conf-dir={conf}",
            "--scheduler-impl",
            "hadoop",
            "--tracetype=SLS",
            f"--tracelocation={trace}",
            f"--nodes={nodes_file}",
            f"--output-dir={out}",
        )
        assert done.returncode == 0, done.stderr[-2000:]
        rows = list(csv.reader((out / "jobruntime.csv").read_text().splitlines()[1:]))
        return {r[0]: (int(r[4]) - int(r[3])) / 1000 for r in rows}

    labelled = run(nodes, tmp_path / "labelled")
    unlabelled = run(plain, tmp_path / "plain", plain_conf)
    assert set(labelled) == {"job_a", "job_b"}
    # b: 12 tasks of 2 GB on 2 nodes (and its AM) take two rounds of 30 s
    assert labelled["job_b"] >= 60, labelled
    assert labelled["job_a"] >= 60, labelled
    assert unlabelled["job_b"] < labelled["job_b"], (labelled, unlabelled)


def _xml(props: dict[str, str]) -> str:
    body = "".join(
        f"<property><name>{k}</name><value>{v}</value></property>\n" for k, v in props.items()
    )
    return f"<?xml version='1.0'?>\n<configuration>\n{body}</configuration>\n"


NEWEST_FIRST = """\
package emu.test;

import java.util.Collections;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;

/** FIFO that serves the newest application first: FifoScheduler visits its
 *  applications in the order of this map, oldest id first; here it is reversed. */
public class NewestFirstScheduler extends FifoScheduler {
  @Override
  public void serviceInit(Configuration conf) throws Exception {
    super.serviceInit(conf);
    this.applications = new ConcurrentSkipListMap<>(Collections.reverseOrder());
  }
}
"""


def _compile(tmp_path: Path, name: str, source: str) -> Path:
    from emu.hadoop import classpath

    cp = classpath.resolve()
    src = tmp_path / "src" / "emu" / "test" / f"{name}.java"
    src.parent.mkdir(parents=True)
    src.write_text(source)
    classes = tmp_path / "classes"
    javac = classpath.java_home_tool("javac")
    assert javac is not None
    done = subprocess.run(
        [javac, "-nowarn", "-cp", cp.text(), "-d", str(classes), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return classes


def _with(cp_extra: Path) -> str:
    from emu.hadoop import classpath

    return ":".join([str(cp_extra), *classpath.resolve().entries])


THREE_JOBS = Path(__file__).resolve().parents[2] / "scenarios" / "three-jobs.toml"


def test_a_scheduler_class_compiled_here_runs(tmp_path: Path) -> None:
    """Bring your own scheduler build: a FifoScheduler subclass whose
    application order is newest first (FifoScheduler keeps its applications
    in a map ordered by id; the subclass reverses it), compiled with javac
    against the fetched jars and named by class: the later jobs start first."""
    source = NEWEST_FIRST
    classes = _compile(tmp_path, "NewestFirstScheduler", source)
    scenario = _scenario(tmp_path, {SCHED: "fifo"}, _burst_jobs(3))
    base = _run(scenario, tmp_path / "fifo")
    assert base.returncode == 0, base.stderr[-2000:]
    mine = _run(
        scenario,
        tmp_path / "mine",
        "-D",
        f"{SCHED}=emu.test.NewestFirstScheduler",
        "--hadoop-classpath",
        _with(classes),
    )
    assert mine.returncode == 0, mine.stderr[-2000:]
    fifo, newest = _jobs(tmp_path / "fifo"), _jobs(tmp_path / "mine")
    assert fifo["j1"]["finish_ms"] < fifo["j3"]["finish_ms"]
    assert newest["j3"]["finish_ms"] < newest["j1"]["finish_ms"]


def _burst_jobs(n: int) -> str:
    return "".join(
        f"""
[[jobs]]
id = "j{i}"
type = "mapreduce"
submit_ms = {i * 10}
user = "u{i}"
  [[jobs.tasks]]
  type = "map"
  count = 16
  duration_ms = 40000
  memory_mb = 4096
"""
        for i in range(1, n + 1)
    )


FAILING = """\
package emu.test;

import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/** Throws on the first node heartbeat after 30 simulated seconds. */
public class FailingScheduler extends FifoScheduler {
  @Override
  public void handle(SchedulerEvent event) {
    if (event.getType() == SchedulerEventType.NODE_UPDATE
        && getClock().getTime() - 1_000_000_000_000L > 30_000) {
      throw new IllegalStateException("queue state corrupted (test)");
    }
    super.handle(event);
  }
}
"""


def test_a_java_exception_fails_the_run_with_its_message_and_time(tmp_path: Path) -> None:
    classes = _compile(tmp_path, "FailingScheduler", FAILING)
    out = tmp_path / "out"
    done = emu(
        "run",
        str(THREE_JOBS),
        "--scheduler-impl",
        "hadoop",
        "-o",
        str(out),
        "-D",
        f"{SCHED}=emu.test.FailingScheduler",
        "--hadoop-classpath",
        _with(classes),
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "\tat " not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert re.match(
        r"emu: error: Hadoop's scheduler failed at simulated time 30\.\d+ s: "
        r"java.lang.IllegalStateException: queue state corrupted \(test\)$",
        line,
    ), done.stderr
    failure = json.loads((out / "failure.json").read_text())
    assert failure["error"].endswith("queue state corrupted (test)")
    assert 30_000 < failure["simulated_ms"] <= 31_000
    assert (out / "events.jsonl").stat().st_size > 0


def test_a_java_exception_fails_an_sls_replay_too(tmp_path: Path, conf_dir: Path) -> None:
    """The same through `emu sls`: exit 1, one line, and `failure.json` beside
    the SLS metrics recorded until then."""
    classes = _compile(tmp_path, "FailingScheduler", FAILING)
    out = tmp_path / "out"
    done = emu(
        "sls",
        f"--conf-dir={conf_dir}",
        *TRACES["sls"],
        f"--output-dir={out}",
        "--scheduler-impl",
        "hadoop",
        "-D",
        f"{SCHED}=emu.test.FailingScheduler",
        "--hadoop-classpath",
        _with(classes),
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "queue state corrupted (test)" in lines[0], done.stderr
    failure = json.loads((out / "failure.json").read_text())
    assert 30_000 < failure["simulated_ms"] <= 31_000
    assert (out / "realtimetrack.json").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-D", f"{SCHED}=java.lang.String"], "java.lang.String is not a YARN ResourceScheduler"),
        (
            ["-D", f"{SCHED}=org.example.Missing"],
            "org.example.Missing is not on the Hadoop classpath",
        ),
        (["--hadoop-classpath", "/nonexistent/dir"], "--hadoop-classpath: no jars or directories"),
        (
            [
                "-D",
                f"{SCHED}=capacity",
                "-D",
                "yarn.scheduler.capacity.root.queues=a",
                "-D",
                "yarn.scheduler.capacity.root.a.capacity=50",
            ],
            "CapacityScheduler refused",
        ),
    ],
)
def test_refusals_are_one_line_and_exit_2(args: list[str], says: str) -> None:
    done = emu("run", str(THREE_JOBS), "--scheduler-impl", "hadoop", *args)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("emu: error: "), done.stderr
    assert says in lines[0], lines[0]


def test_version_names_the_hadoop_release() -> None:
    done = emu("--version")
    assert done.returncode == 0
    assert "Hadoop schedulers (--scheduler-impl hadoop): " in done.stdout
    assert "hadoop-yarn-server-resourcemanager" in done.stdout


SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.mark.parametrize(
    ("scenario", "switch"),
    [
        ("fair-preemption.toml", "yarn.scheduler.fair.preemption=false"),
        ("capacity-preemption.toml", "yarn.resourcemanager.scheduler.monitor.enable=false"),
    ],
)
def test_preemption_runs_on_the_virtual_clock(tmp_path: Path, scenario: str, switch: str) -> None:
    """Fair's FSPreemptionThread and Capacity's preemption policy do their work
    without their threads: the second queue's job starts within seconds of its
    submission at 60 s by taking containers back, and waits minutes without."""
    on, off = tmp_path / "on", tmp_path / "off"
    assert _run(SCENARIOS / scenario, on).returncode == 0
    assert _run(SCENARIOS / scenario, off, "-D", switch).returncode == 0
    waited_on = max(j["wait_ms"] for j in _finished(on))
    waited_off = max(j["wait_ms"] for j in _finished(off))
    assert waited_on < 30_000 < 100_000 < waited_off, (waited_on, waited_off)


def test_a_jobs_label_expression_keeps_it_on_the_labelled_node(tmp_path: Path) -> None:
    """`job.label.expression` of an SLS job is its submission context's node
    label expression: its AM and its off-switch asks may use only node1 (the
    one gpu node, SLS's default 10 GB), so its twelve 2 GB tasks of 30 s take
    three rounds there, four at a time beside the AM, instead of one on the
    three unlabelled nodes."""
    nodes = tmp_path / "nodes.json"
    nodes.write_text(
        json.dumps(
            {
                "rack": "r1",
                "nodes": [
                    {"node": "node1", "labels": "gpu"},
                    {"node": "node2"},
                    {"node": "node3"},
                    {"node": "node4"},
                ],
            }
        )
    )
    tasks = [
        {
            "container.start.ms": 1000,
            "container.end.ms": 31000,
            "container.priority": 20,
            "container.type": "map",
            "container.memory-mb": 2048,
        }
        for _ in range(12)
    ]

    def job(label: str | None) -> str:
        fields = {
            "am.type": "mapreduce",
            "job.start.ms": 0,
            "job.end.ms": 31000,
            "job.queue.name": "default",
            "job.id": "job_1",
            "job.user": "u",
            "job.tasks": tasks,
        }
        if label:
            fields["job.label.expression"] = label
        return json.dumps(fields)

    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "yarn-site.xml").write_text(
        _xml({SCHED: "capacity", "yarn.node-labels.enabled": "true"})
    )
    (conf / "capacity-scheduler.xml").write_text(
        _xml(
            {
                "yarn.scheduler.capacity.root.queues": "default",
                "yarn.scheduler.capacity.root.default.capacity": "100",
                "yarn.scheduler.capacity.root.accessible-node-labels": "*",
                "yarn.scheduler.capacity.root.accessible-node-labels.gpu.capacity": "100",
                "yarn.scheduler.capacity.root.default.accessible-node-labels": "gpu",
                "yarn.scheduler.capacity.root.default.accessible-node-labels.gpu.capacity": "100",
                "yarn.scheduler.capacity.maximum-am-resource-percent": "0.5",
            }
        )
    )
    (conf / "sls-runner.xml").write_text(_xml({}))

    def runtime(label: str | None, out: Path) -> float:
        trace = tmp_path / f"trace-{label}.json"
        trace.write_text(job(label))
        done = emu(
            "sls",
            f"--conf-dir={conf}",
            "--scheduler-impl",
            "hadoop",
            "--tracetype=SLS",
            f"--tracelocation={trace}",
            f"--nodes={nodes}",
            f"--output-dir={out}",
        )
        assert done.returncode == 0, done.stderr[-2000:]
        row = (out / "jobruntime.csv").read_text().splitlines()[1].split(",")
        return (int(row[4]) - int(row[3])) / 1000

    on_gpu = runtime("gpu", tmp_path / "gpu")
    anywhere = runtime(None, tmp_path / "any")
    assert anywhere < 60 < 90 <= on_gpu, (anywhere, on_gpu)
