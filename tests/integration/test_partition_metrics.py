"""Per-partition figures of a labelled cluster: realtimetrack.json's and
metrics/'s `partition.<p>.` gauges, the Python API's partition tables,
`emu report`'s node-label section and the /track page's partition charts,
on the cap-node-labels fidelity case (two exclusive `gpu` nodes only the
gpu job g_1 runs on, one non-exclusive `spare` node, two unlabelled ones).
A run without labels has none of them."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from emu import sls
from emu.api import Result
from emu.cli import main
from tests.fidelity_runs import case_dir, sls_options
from tests.headless import CHROMIUM, Browser
from tests.integration.test_web_track import OVERFLOW
from tests.web_harness import Run

CASE = case_dir("cap-node-labels")
PARTITIONS = ["<DEFAULT_PARTITION>", "gpu", "spare"]
QUEUES = ["root.a", "root.b"]


def labelled_options(out: Path, **extra: object) -> sls.SlsOptions:
    return sls_options(CASE, out, **extra)


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, sls.SlsRun]:
    out = tmp_path_factory.mktemp("labelled")
    done = sls.run(labelled_options(out, track_jobs=["g_1"]), stdout=io.StringIO())
    return out, done


def records(out: Path) -> list[dict]:
    return json.loads((out / "realtimetrack.json").read_text())


def test_each_partition_has_its_cluster_and_queue_gauges_in_every_record(labelled):
    out, _ = labelled
    recs = records(out)
    keys = [k for k in recs[0] if k.startswith("partition.")]
    expected = []
    for p in PARTITIONS:
        expected += [
            f"partition.{p}.cluster.{f}.{r}"
            for f in ("allocated", "available")
            for r in ("memory", "vcores")
        ]
        expected += [
            f"partition.{p}.queue.{q}.{f}.{r}"
            for q in QUEUES
            for f in ("allocated", "pending")
            for r in ("memory", "vcores")
        ]
    assert sorted(keys) == sorted(expected)
    assert all(list(r) == list(recs[0]) for r in recs)


def test_the_gpu_partition_holds_exactly_the_gpu_jobs_containers(labelled):
    out, _ = labelled
    recs = records(out)
    gpu = [r["partition.gpu.cluster.allocated.memory"] for r in recs]
    # g_1 (AM and 2 GB maps, asking for gpu) is the only job the exclusive
    # gpu nodes take: the partition's allocation is g_1's at every second.
    assert gpu == [r["job.g_1.usage.memory"] for r in recs]
    assert max(gpu) == 15.0 and gpu[-1] == 0
    assert [r["partition.gpu.queue.root.a.allocated.memory"] for r in recs] == gpu
    assert all(r["partition.gpu.queue.root.b.allocated.memory"] == 0 for r in recs)
    assert all(
        r["partition.gpu.cluster.available.memory"] + g == 16.0
        for r, g in zip(recs, gpu, strict=True)
    )
    # what g_1 still asks for is queue a's pending in gpu, nobody else's
    assert [r["partition.gpu.queue.root.a.pending.memory"] for r in recs] == [
        r["job.g_1.demand.memory"] - r["job.g_1.usage.memory"] for r in recs
    ]
    assert max(r["partition.gpu.queue.root.a.pending.memory"] for r in recs) > 0
    default_a = [r["partition.<DEFAULT_PARTITION>.queue.root.a.pending.memory"] for r in recs]
    assert max(default_a) > 0 and default_a[0] == 0  # d_2 (from 10 s) asks for no label
    # the spare node is lent to default-partition jobs while idle, then s_1's
    assert max(r["partition.spare.cluster.allocated.memory"] for r in recs) == 8.0


def test_partitions_add_up_to_the_cluster_and_queues(labelled):
    out, _ = labelled
    for r in records(out):
        for what in ("allocated", "available"):
            for res in ("memory", "vcores"):
                parts = sum(r[f"partition.{p}.cluster.{what}.{res}"] for p in PARTITIONS)
                assert parts == r[f"cluster.{what}.{res}"], (r["time"], what, res)
        for p in PARTITIONS:
            queues = sum(r[f"partition.{p}.queue.{q}.allocated.memory"] for q in QUEUES)
            assert queues == r[f"partition.{p}.cluster.allocated.memory"]
        for q in QUEUES:
            over = sum(r[f"partition.{p}.queue.{q}.allocated.memory"] for p in PARTITIONS)
            assert over == r[f"queue.{q}.allocated.memory"]


def test_the_metric_csvs_carry_the_same_series_in_raw_units(labelled):
    out, _ = labelled
    recs = records(out)

    def series(name: str) -> list[float]:
        with (out / "metrics" / f"{name}.csv").open() as f:
            return [float(row["value"]) for row in csv.DictReader(f)]

    assert series("variable.partition.gpu.cluster.allocated.memory") == [
        r["partition.gpu.cluster.allocated.memory"] * 1024 for r in recs
    ]
    assert series("variable.partition.<DEFAULT_PARTITION>.cluster.available.vcores") == [
        r["partition.<DEFAULT_PARTITION>.cluster.available.vcores"] for r in recs
    ]
    assert series("counter.partition.spare.queue.root.b.allocated.cores") == [
        r["partition.spare.queue.root.b.allocated.vcores"] for r in recs
    ]


def test_the_python_api_lays_the_partitions_out_as_rows(labelled):
    out, done = labelled
    result = Result(done.summary, out)
    recs = records(out)
    rows = result.partition_timeline
    assert len(rows) == len(recs) * len(PARTITIONS)
    assert {r["partition"] for r in rows} == {"", "gpu", "spare"}
    gpu = [r for r in rows if r["partition"] == "gpu"]
    assert [r["memory_used"] for r in gpu] == [
        r["partition.gpu.cluster.allocated.memory"] * 1024 for r in recs
    ]
    assert {r["memory_total"] for r in gpu} == {16384} and {r["vcores_total"] for r in gpu} == {16}
    assert gpu[0]["t_s"] == 0 and gpu[1]["t_s"] == 1
    queue_rows = result.partition_queue_timeline
    assert len(queue_rows) == len(recs) * len(PARTITIONS) * len(QUEUES)
    spare_b = [r for r in queue_rows if r["partition"] == "spare" and r["queue"] == "root.b"]
    assert [r["vcores"] for r in spare_b] == [
        r["partition.spare.queue.root.b.allocated.vcores"] for r in recs
    ]
    assert [r["pending_memory"] for r in spare_b] == [
        r["partition.spare.queue.root.b.pending.memory"] * 1024 for r in recs
    ]
    assert max(r["pending_memory"] for r in spare_b) > 0  # s_1 asks for spare


def test_a_run_without_labels_has_no_partition_figures(tmp_path):
    out = tmp_path / "out"
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"rack": "rack1", "nodes": [{"node": "node1"}, {"node": "node2"}]}))
    opts = labelled_options(out)
    opts.nodes_file = str(nodes)
    opts.traces = [str(tmp_path / "trace.json")]
    job = json.loads((CASE / "trace.json").read_text().split("\n}\n")[0] + "\n}")
    del job["job.label.expression"]
    Path(opts.traces[0]).write_text(json.dumps(job))
    done = sls.run(opts, stdout=io.StringIO())
    assert "partition" not in (out / "realtimetrack.json").read_text()
    assert not [p for p in (out / "metrics").iterdir() if "partition" in p.name]
    result = Result(done.summary, out)
    assert result.partition_timeline == [] and result.partition_queue_timeline == []
    report = tmp_path / "r.html"
    assert main(["report", str(out), "-o", str(report)]) == 0
    assert 'id="partitions"' not in report.read_text()


def test_the_report_draws_each_partition_and_its_queues(labelled, tmp_path):
    out, _ = labelled
    report = tmp_path / "r.html"
    assert main(["report", str(out), "-o", str(report)]) == 0
    page = report.read_text()
    data = json.loads(page.split('id="emu-report-data">', 1)[1].split("</script>", 1)[0])
    run = data["runs"][0]
    recs = records(out)
    assert list(run["partitions"]) == PARTITIONS
    gpu = run["partitions"]["gpu"]
    assert gpu["allocated_gb"] == [r["partition.gpu.cluster.allocated.memory"] for r in recs]
    assert gpu["memory_pct"] == [round(100 * g / 16, 3) for g in gpu["allocated_gb"]]
    assert set(gpu["queues"]) == set(QUEUES)
    assert run["partition_t_s"][:3] == [0, 1, 2]
    for canvas in ("partition-util-0", "partition-0-0", "partition-0-1", "partition-0-2"):
        assert f'<canvas id="{canvas}">' in page
    if CHROMIUM is not None:
        with Browser(tmp_path / "profile") as browser:
            browser.open(report.as_uri(), 1200, 900)
            drawn = browser.eval(
                "[...document.querySelectorAll('canvas[id^=partition]')]"
                ".map(e => +e.dataset.points)"
            )
            assert len(drawn) == 4 and all(n > 0 for n in drawn), drawn


def labelled_live_run(tmp_path: Path, rate: float) -> Run:
    run = Run(CASE / "conf", tmp_path / "out", rate=rate)
    run.opts.traces = [str(CASE / "trace.json")]
    run.opts.nodes_file = str(CASE / "nodes.json")
    return run


def test_the_live_history_holds_what_realtimetrack_json_records(tmp_path):
    run = labelled_live_run(tmp_path, rate=60)
    html, done, track = run.served_to_the_end()
    assert 'id="partition-charts"' in html
    recs = records(tmp_path / "out")
    history = track["history"]
    assert len(history) >= 2
    for point in history:
        assert list(point["partitions"]) == PARTITIONS
        at = done.epoch_ms + point["time"]
        rec = max((r for r in recs if r["time"] <= at), key=lambda r: r["time"])
        for p, values in point["partitions"].items():
            assert (
                values["allocated.memory"] == rec[f"partition.{p}.cluster.allocated.memory"] * 1024
            )
            assert values["available.vcores"] == rec[f"partition.{p}.cluster.available.vcores"]
            for q in QUEUES:
                key = f"queue.{q}.allocated.memory"
                assert values[key] == rec[f"partition.{p}.{key}"] * 1024


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_track_page_draws_one_chart_per_partition_and_fits_the_window(tmp_path):
    run = labelled_live_run(tmp_path, rate=60)
    run.watch.keep_serving = True  # the page reads the whole run's history after it
    url = run.start()
    try:
        run.join()
        with Browser(tmp_path / "profile") as browser:
            for width in (1400, 1000):
                browser.open(f"{url}/track", width, 1000)
                charts = browser.wait_for(
                    "(() => { const c = [...document.querySelectorAll('canvas.partition-chart')];"
                    " return c.length === 3 && c.every(e => +e.dataset.points > 0)"
                    " && !document.getElementById('partitions').hidden"
                    " && c.map(e => e.dataset.partition); })()"
                )
                assert charts == PARTITIONS
                fit = browser.eval(OVERFLOW)
                assert fit["scroll"] <= fit["inner"] == width, fit
                assert fit["wide"] == [], fit
    finally:
        assert run.watch.server is not None
        run.watch.server.stop()
