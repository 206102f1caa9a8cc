"""The live pages in a real browser: headless Chromium opens /simulate while a
replay runs, the charts fill with data points, and the screenshot is kept."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.web_harness import Run, sls_conf_dir

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(os.environ.get("EMU_TEST_ARTIFACTS", "out/test-artifacts"))


def chromium(*args: str, timeout: float = 60) -> str:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True).stdout


def test_pages_and_their_script_are_served_from_the_package(tmp_path):
    run = Run(sls_conf_dir(tmp_path), tmp_path / "out", rate=40)
    url = run.start()
    with httpx.Client(base_url=url) as http:
        for page in ("/simulate", "/track", "/cluster"):
            html = http.get(page).text
            assert '<script src="/static/chart.umd.js"></script>' in html
            assert "cdn" not in html.lower() and "https://" not in html
        js = http.get("/static/chart.umd.js")
        assert js.status_code == 200 and "Chart.js v4" in js.text[:200]
        assert "MIT" in http.get("/static/chart.js-LICENSE.md").text
        assert http.get("/static/..%2Fapi.py").status_code == 404
        track = http.get("/ws/v1/emu/track").json()
        assert track["history"] and {"allocatedMB", "availableMB", "queues"} <= set(
            track["history"][0]
        )
    run.join()


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_simulate_page_draws_charts_with_data_in_headless_chromium(tmp_path):
    run = Run(sls_conf_dir(tmp_path), tmp_path / "out", rate=10)
    url = run.start()
    run.wait_until(lambda: len(run.watch.live.history) >= 3)
    budget = ["--virtual-time-budget=4000", "--window-size=1400,1000"]
    dom = chromium(*budget, "--dump-dom", f"{url}/simulate")
    points = dict(re.findall(r'<canvas id="(\w+)"[^>]*data-points="(\d+)"', dom))
    assert set(points) == {"running", "memory", "vcores", "queues"}, dom[:2000]
    assert all(int(n) > 0 for n in points.values()), points
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "simulate.png"
    chromium(*budget, f"--screenshot={shot.resolve()}", f"{url}/simulate")
    assert shot.stat().st_size > 10_000
    run.join()
