"""The /track live page: one chart per `--track-jobs` job fed by per-job
series in /ws/v1/emu/track (the values realtimetrack.json records), and a
layout that fits the window (measured in headless Chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from emu.timing import YARN
from emu.web.live import LiveView
from emu.web.server import WebServer
from tests.headless import CHROMIUM, Browser
from tests.web_harness import Run, sls_conf_dir

JOBS = ["job_1", "job_2"]

# Whether anything is wider than the window: the page's scroll width, and
# every element outside a scrolling table box ending within the viewport.
OVERFLOW = """(() => {
  const w = window.innerWidth;
  const wide = [...document.querySelectorAll("body *")]
    .filter(e => !(e.parentElement && e.parentElement.closest(".table-box"))
      && e.getBoundingClientRect().right > w + 0.5)
    .map(e => e.tagName + (e.id ? "#" + e.id : ""));
  return {scroll: document.documentElement.scrollWidth, inner: w, wide: wide};
})()"""


def trace(path: Path) -> Path:
    """Two jobs whose tasks run long enough to be seen at a wall-second
    sample: job_1 from 5 s to 90 s, job_2 from 45 s to 115 s (simulated)."""

    def task(node: str, start: int, end: int) -> dict[str, object]:
        return {
            "container.host": f"/rack1/{node}",
            "container.start.ms": start,
            "container.end.ms": end,
            "container.priority": 20,
            "container.type": "map",
        }

    jobs = [
        {
            "am.type": "mapreduce",
            "job.start.ms": 0,
            "job.end.ms": 95_000,
            "job.queue.name": "sls_queue_1",
            "job.id": "job_1",
            "job.user": "default",
            "job.tasks": [task(f"node{i}", 5_000, 90_000) for i in (1, 2, 3)],
        },
        {
            "am.type": "mapreduce",
            "job.start.ms": 40_000,
            "job.end.ms": 120_000,
            "job.queue.name": "sls_queue_2",
            "job.id": "job_2",
            "job.user": "default",
            "job.tasks": [task(f"node{i}", 45_000, 115_000) for i in (1, 2)],
        },
    ]
    path.write_text("\n".join(json.dumps(j) for j in jobs))
    return path


def tracked_run(tmp_path: Path, rate: float) -> Run:
    run = Run(sls_conf_dir(tmp_path), tmp_path / "out", rate=rate)
    run.opts.traces = [str(trace(tmp_path / "trace.json"))]
    run.opts.track_jobs = list(JOBS)
    # YARN's timing: a job ends when the RM finishes it, its AM container
    # released, so its last point reads all zeros (SLS's ends it at the AM's
    # unregistration, a heartbeat before the AM container is reported gone).
    run.opts.timing = YARN
    return run


def test_tracked_jobs_have_live_series_and_one_chart_each(tmp_path):
    run = tracked_run(tmp_path, rate=30)
    html, done, track = run.served_to_the_end()
    charts = re.findall(r'<canvas class="job-chart" id="job-\d+" data-job="([^"]+)">', html)
    assert charts == JOBS
    assert track["finished"]
    assert [t["job"] for t in track["trackedJobs"]] == JOBS
    assert all(t["appId"].startswith("application_") for t in track["trackedJobs"])
    history = track["history"]
    assert len(history) >= 3
    job_1 = [p["jobs"]["job_1"] for p in history]
    # job_1 (3 maps and its AM) runs from the start and is over by the end
    assert len({v["usage.memory"] for v in job_1}) > 1, job_1
    assert max(v["live.containers"] for v in job_1) == 4
    assert job_1[-1] == dict.fromkeys(job_1[-1], 0)
    assert max(p["jobs"]["job_2"]["usage.vcores"] for p in history) > 0
    # Each point holds what realtimetrack.json recorded at the same tick: the
    # last record at or before the point (on scaled wall time the clock moves
    # on while the snapshot is taken, with no event handled in between).
    records = json.loads((tmp_path / "out" / "realtimetrack.json").read_text())
    for point in history:
        at = done.epoch_ms + point["time"]
        rec = max((r for r in records if r["time"] <= at), key=lambda r: r["time"])
        for job in JOBS:
            values = point["jobs"][job]
            assert values["usage.memory"] == rec[f"job.{job}.usage.memory"] * 1024
            assert values["demand.vcores"] == rec[f"job.{job}.demand.vcores"]
            assert values["live.containers"] == rec[f"job.{job}.live.containers"]


def test_track_page_without_tracked_jobs_says_how_to_track():
    server = WebServer(LiveView(), port=0)
    try:
        with httpx.Client(base_url=server.start()) as http:
            html = http.get("/track").text
            assert "job-chart" not in html and "--track-jobs" in html
            assert http.get("/ws/v1/emu/track").json()["trackedJobs"] == []
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_track_page_fits_the_window_and_draws_job_charts_in_headless_chromium(tmp_path):
    run = tracked_run(tmp_path, rate=15)
    url = run.start()
    run.wait_until(lambda: len(run.watch.live.history) >= 2)
    with Browser(tmp_path / "profile") as browser:
        for width in (1400, 1000):
            browser.open(f"{url}/track", width, 1000)
            points = browser.wait_for(
                "(() => { const c = [...document.querySelectorAll('canvas.job-chart')];"
                " return c.length && c.every(e => +e.dataset.points > 0)"
                " && document.querySelectorAll('#queue-table tr').length > 1"
                " && c.map(e => +e.dataset.points); })()"
            )
            assert len(points) == len(JOBS)
            fit = browser.eval(OVERFLOW)
            assert fit["scroll"] <= fit["inner"] == width, fit
            assert fit["wide"] == [], fit
    run.join()
