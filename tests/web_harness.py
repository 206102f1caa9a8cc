"""A replay with the web server on, in a thread, for tests that talk to it."""

from __future__ import annotations

import io
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from emu import sls
from emu.watch import Watch
from tests.reference import REFERENCE_DIR

TEST_RES = REFERENCE_DIR / "test-resources"


def sls_conf_dir(d: Path) -> Path:
    """Hadoop's SLS test configuration, unchanged: the FairScheduler with
    queues sls_queue_1..3."""
    for name in ("sls-runner.xml", "yarn-site.xml", "capacity-scheduler.xml", "fair-scheduler.xml"):
        shutil.copy(TEST_RES / name, d / name)
    return d


class Run:
    """`emu sls` on Hadoop's inputsls.json (130 simulated s) in a thread, on
    scaled wall time so there is time to talk to it, with the web server on."""

    def __init__(self, conf_dir: Path, out: Path, rate: float) -> None:
        self.watch = Watch(progress="never", web_port=0)
        self.opts = sls.SlsOptions(
            tracetype="SLS",
            traces=[str(TEST_RES / "inputsls.json")],
            output_dir=out,
            nodes_file=str(TEST_RES / "nodes.json"),
            conf_dir=str(conf_dir),
            rate=rate,
            watch=self.watch,
        )
        self.done: sls.SlsRun | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.done = sls.run(self.opts, stdout=io.StringIO())
        except BaseException as e:
            self.error = e

    def start(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while self.watch.live is None or self.watch.live.latest is None or not self.url:
            assert time.monotonic() < deadline, "the web server did not come up"
            assert self.error is None, self.error
            time.sleep(0.02)
        return self.url

    @property
    def url(self) -> str:
        return self.watch.server.url if self.watch.server is not None else ""

    def wait_until(self, what: Any, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not what():
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.05)

    def served_to_the_end(self) -> tuple[str, sls.SlsRun, dict[str, Any]]:
        """Run it whole with `--keep-serving`: (the /track page as served
        while it ran, the finished run, the whole run's /ws/v1/emu/track)."""
        self.watch.keep_serving = True
        url = self.start()
        try:
            with httpx.Client(base_url=url) as http:
                html = http.get("/track").text
                done = self.join()
                track = http.get("/ws/v1/emu/track").json()
        finally:
            assert self.watch.server is not None
            self.watch.server.stop()
        return html, done, track

    def join(self) -> sls.SlsRun:
        self.thread.join(timeout=120)
        assert self.error is None, self.error
        assert self.done is not None
        return self.done
