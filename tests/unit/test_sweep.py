"""The sweep's spec reading, grid expansion, topology resizing, figures and
table (emu/sweep/), without running any point."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from emu.errors import InputError
from emu.scenario import native
from emu.scenario.topology import read_nodes_file
from emu.sweep import figures, points, spec, table

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenarios" / "sweeps" / "three-schedulers.toml"
CASE = ROOT / "scenarios" / "fidelity" / "cases" / "cap-preemption"


def write_spec(tmp_path: Path, text: str) -> Path:
    for name in ("trace.json", "nodes.json"):
        (tmp_path / name).write_bytes((CASE / name).read_bytes())
    (tmp_path / "conf").mkdir(exist_ok=True)
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


SLS = """
[sweep]
seeds = [1, 2]
scale = [0.5, 2]
[[trace]]
name = "t"
type = "SLS"
files = ["trace.json"]
nodes_file = "nodes.json"
[[config]]
scheduler = "capacity"
conf_dir = "conf"
defines = { "yarn.scheduler.minimum-allocation-mb" = 512, "x.flag" = true }
"""


def test_the_bundled_example_is_a_3x3x2_grid():
    s = spec.load(EXAMPLE)
    tasks = points.expand(s)
    assert len(tasks) == 18
    assert {t.point.scheduler for t in tasks} == {"fifo", "capacity", "fair"}
    assert {t.point.nodes for t in tasks} == {2, 4, 8}
    assert len({t.point.id for t in tasks}) == 18
    assert s.target is not None and s.target.per_queue


def test_a_resized_scenario_reads_back_with_its_files(tmp_path):
    s = spec.load(EXAMPLE)
    task = next(t for t in points.expand(s) if t.point.nodes == 8)
    for name, data in task.inputs.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    assert set(task.inputs) == {"scenario.toml", "alloc/compare-schedulers.xml"}
    loaded = native.load(tmp_path / "scenario.toml")
    original = native.load(ROOT / "scenarios" / "compare-schedulers.toml")
    assert len(loaded.nodes) == 8
    assert loaded.workload.jobs == original.workload.jobs
    props = {k: loaded.conf.get(k) for k in loaded.conf}
    assert props.pop(points.ALLOCATION_FILE) == "alloc/compare-schedulers.xml"
    assert props == {k: original.conf.get(k) for k in original.conf if k != points.ALLOCATION_FILE}


def test_an_uneven_size_deals_nodes_over_the_racks():
    topo = points._scenario(ROOT / "scenarios" / "compare-schedulers.toml", 3, None)
    data = tomllib.loads(topo.files["scenario.toml"].decode())
    assert [n["rack"] for n in data["cluster"]["nodes"]] == ["/rack1", "/rack2", "/rack1"]
    assert topo.nodes == 3


def test_sls_points_scale_the_nodes_file_and_ship_the_inputs(tmp_path):
    tasks = points.expand(spec.load(write_spec(tmp_path, SLS)))
    assert [(t.point.nodes, t.point.scale, t.point.seed) for t in tasks] == [
        (2, 0.5, 1),
        (2, 0.5, 2),
        (8, 2.0, 1),
        (8, 2.0, 2),
    ]
    big = tasks[2]
    (tmp_path / "n.json").write_bytes(big.inputs["nodes.json"])
    hosts = [n.host for n in read_nodes_file(tmp_path / "n.json")]
    assert hosts[:4] == ["node1", "node2", "node3", "node4"]
    assert hosts[4:] == ["node1-2", "node2-2", "node3-2", "node4-2"]
    assert "trace/0-trace.json" in big.inputs
    argv = big.argv
    assert argv[:3] == ["sls", "--tracetype=SLS", "--tracelocation=trace/0-trace.json"]
    assert "yarn.resourcemanager.scheduler.class=capacity" in argv
    assert "yarn.scheduler.minimum-allocation-mb=512" in argv
    assert "x.flag=true" in argv
    assert argv[argv.index("--nodes") + 1] == "nodes.json"


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("[sweep]\nsedes = [1]\n", "sweep.sedes", "unknown key"),
        ("[sweep]\n", "trace", "missing"),
        ('[sweep]\nobjective = "speed"\n', "sweep.objective", "expected one of"),
        ("[sweep]\nnodes = [2, 0]\n", "sweep.nodes[1]", "positive integer"),
        ("[sweep]\nnodes = [2]\nscale = [1.0]\n", "sweep.scale", "either nodes or scale"),
        ('[[trace]]\nname = "t"\ntype = "XML"\nfiles = ["trace.json"]\n', "trace[0].type", ""),
        ('[[trace]]\nname = "t"\ntype = "SLS"\nfiles = ["gone.json"]\n', "trace[0].files[0]", ""),
        (
            '[sweep]\nnodes = [2]\n[[trace]]\nname = "t"\ntype = "SLS"\nfiles = ["trace.json"]\n',
            "trace[0].nodes_file",
            "resize",
        ),
        (
            '[[trace]]\nname = "t"\ntype = "SLS"\nfiles = ["trace.json"]\n'
            '[[config]]\nname = "a b"\n',
            "config[0].name",
            "letters",
        ),
        (
            '[[trace]]\nname = "t"\ntype = "SLS"\nfiles = ["trace.json"]\n'
            '[[config]]\nname = "a"\nimpl = "java"\n',
            "config[0].impl",
            "",
        ),
        (
            '[[trace]]\nname = "t"\ntype = "SLS"\nfiles = ["trace.json"]\n'
            '[[config]]\nname = "a"\n[target]\nmetric = "makespan_s"\n',
            "target",
            "either max or min",
        ),
    ],
)
def test_spec_errors_name_the_file_and_the_key(tmp_path, text, key, message):
    p = write_spec(tmp_path, text)
    with pytest.raises(InputError) as err:
        spec.load(p)
    assert err.value.path == str(p)
    assert err.value.where == key
    assert message in err.value.message


def test_figures_per_queue_and_preemptions(tmp_path):
    jobs = [
        {"queue": q, "submit_ms": s, "finish_ms": f, "wait_ms": 1000, "turnaround_ms": f - s,
         "final_status": st, "preempted_am_containers": am, "preempted_non_am_containers": non}
        for q, s, f, st, am, non in [
            ("root.a", 0, 10000, "SUCCEEDED", 0, 2),
            ("root.a", 0, 30000, "SUCCEEDED", 0, 0),
            ("root.b", 5000, 45000, "FAILED", 1, 0),
        ]
    ]  # fmt: skip
    summary = {
        "jobs": jobs,
        "cluster": {"utilization": {"memory": 0.5, "vcores": 0.25}},
        "timeline": {"jain_dominant_share": [None, 1.0, 0.5]},
    }
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    f = figures.read(tmp_path)
    assert f["makespan_s"] == 45.0
    assert f["failed_jobs"] == 1
    assert f["turnaround_p90_s"] == 40.0
    assert f["root.a:turnaround_p90_s"] == 30.0
    assert f["root.b:jobs"] == 1
    assert f["memory_utilization_pct"] == 50.0
    assert f["jain_mean"] == 0.75
    assert f["preemptions"] == 3


def test_sizing_takes_the_smallest_size_every_seed_meets():
    def row(nodes, seed, a, b, status="ok"):
        return {"trace": "t", "config": "c", "nodes": nodes, "seed": seed, "status": status,
                "x": a, "root.a:x": a, "root.b:x": b}  # fmt: skip

    rows = [row(2, 1, 50, 500), row(2, 2, 50, 50), row(4, 1, 40, 90), row(4, 2, 40, 99),
            row(8, 1, 1, 1, "error"), row(8, 2, 1, 1)]  # fmt: skip
    target = {"metric": "x", "bound": 100, "upper": True, "per_queue": True, "queue": None}
    assert table.sizing(rows, target)[0]["smallest_nodes"] == 4
    overall = dict(target, per_queue=False)
    assert table.sizing(rows, overall)[0]["smallest_nodes"] == 2
    unknown = table.sizing(rows, dict(target, bound=10))[0]
    assert unknown["smallest_nodes"] is None and unknown["unfinished"] == 1
    assert table.answer(unknown) == "not known: 1 point did not finish"
    assert table.answer(dict(unknown, unfinished=0)) == "none of [2, 4, 8] nodes"
    assert [r["root.b:x"] for r in table.ranked(rows, "root.b:x", "min")][:2] == [1, 50]


def test_the_table_is_csv_and_parquet_with_pyarrow(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"point": "p", "status": "ok", "nodes": 2, "makespan_s": 1.5, "root.a:jobs": 3}]
    written = table.write(tmp_path, rows)
    assert [p.name for p in written] == ["results.csv", "results.parquet"]
    back = pq.read_table(tmp_path / "results.parquet").to_pylist()
    assert back[0]["makespan_s"] == 1.5 and back[0]["root.a:jobs"] == 3
