"""Headless Chromium driven over the DevTools protocol on a pipe
(`--remote-debugging-pipe`: JSON messages ended by NUL on fds 3 and 4), so
a test can load a page at a given viewport size and evaluate JavaScript in
it, e.g. to measure the laid-out page, with no WebSocket client needed."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, profile: Path) -> None:
        assert CHROMIUM is not None
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds_3_and_4() -> None:
            # dup first: os.pipe's fds are not inherited, and either may already be 3 or 4
            r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            preexec_fn=fds_3_and_4,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._ids = 0
        self.session = ""

    def __enter__(self) -> Browser:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.call("Browser.close", session=False)
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self._to_chrome)
            os.close(self._from_chrome)

    def call(
        self, method: str, session: bool = True, timeout: float = 30, **params: Any
    ) -> dict[str, Any]:
        """Send one command and wait for its result (events are skipped)."""
        deadline = time.monotonic() + timeout
        self._ids += 1
        msg: dict[str, Any] = {"id": self._ids, "method": method, "params": params}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._ids:
                    assert "error" not in reply, reply
                    return reply["result"]
            ready, _, _ = select.select([self._from_chrome], [], [], 0.5)
            assert time.monotonic() < deadline, f"chromium did not answer {method}"
            if not ready:
                continue
            chunk = os.read(self._from_chrome, 1 << 16)
            assert chunk, "chromium went away"
            self._buf += chunk

    def open(self, url: str, width: int, height: int) -> None:
        """Load `url` in a `width` x `height` viewport."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def eval(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        """Poll `expression` until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            assert time.monotonic() < deadline, f"timed out waiting for {expression}"
            time.sleep(0.1)
