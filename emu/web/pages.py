"""The live pages: `/simulate` and `/track` (as Hadoop SLS serves them on its
web port) and `/cluster` (the page YARN clients probe to find an active RM).

The pages are static HTML plus `static/live.js`, which polls
`/ws/v1/emu/track` every second and draws with Chart.js, vendored in
`static/` with its license so the pages work offline. `/ws/v1/emu/track`
is emu's own endpoint: the run's recent history (one point per published
snapshot: cluster and per-queue allocation, fair shares, running apps and
containers, each `--track-jobs` job's containers, usage and demand
under SLS's tracked-app names, and with node labels each partition's
figures as realtimetrack.json's `partition.<p>.` gauges) and the current
per-queue and running-app tables. `/track` draws one chart per partition
once the history has any.
"""

from __future__ import annotations

from html import escape
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from emu.metrics.timeline import share_memory
from emu.web.live import LiveView
from emu.web.view import Snapshot

STATIC = resources.files("emu.web") / "static"
STATIC_TYPES = {".js": "text/javascript", ".md": "text/plain", ".css": "text/css"}

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>emu — {title}</title>
<link rel="stylesheet" href="/static/live.css">
<script src="/static/chart.umd.js"></script>
<script src="/static/live.js"></script></head>
<body data-page="{page}">
<nav><b>emu</b> <a href="/cluster">cluster</a> <a href="/simulate">simulate</a>
<a href="/track">track</a> <a href="/ws/v1/cluster/metrics">REST</a>
<span id="status">waiting for the run…</span></nav>
{body}
</body></html>
"""

_SIMULATE = """<h1>Simulation</h1>
<div class="grid">
<div class="chart"><h2>Running applications and containers</h2><canvas id="running"></canvas></div>
<div class="chart"><h2>Cluster memory (GB)</h2><canvas id="memory"></canvas></div>
<div class="chart"><h2>Cluster vcores</h2><canvas id="vcores"></canvas></div>
<div class="chart"><h2>Queue allocated memory (GB), dashed: fair share or guarantee</h2>
<canvas id="queues"></canvas></div>
</div>"""

_TRACK = """<h1>Tracking</h1>
<div class="grid">
<div class="chart"><h2>Queue allocated memory (GB), dashed: fair share or guarantee</h2>
<canvas id="queues"></canvas></div>
<div><h2>Queues</h2><div class="table-box"><table id="queue-table"></table></div></div>
</div>
<div id="partitions" hidden>
<h2>Partitions (node labels): memory (GB), dashed: the partition's size</h2>
<div class="grid" id="partition-charts"></div></div>
<h2>Tracked jobs</h2>
{jobs}
<h2>Running applications</h2><div class="table-box"><table id="app-table"></table></div>"""

_NO_TRACKED_JOBS = (
    "<p>No tracked job: <code>emu sls --track-jobs=J1,J2</code> draws each named job's "
    "allocated and demanded memory and vcores here.</p>"
)


def _track_body(track_jobs: tuple[str, ...]) -> str:
    """The /track page with one chart per tracked job, as SLS's track page
    offers each `--track-jobs` job (SLS draws the one picked from a list;
    here they are all drawn, side by side)."""
    if not track_jobs:
        return _TRACK.format(jobs=_NO_TRACKED_JOBS)
    charts = "\n".join(
        f'<div class="chart"><h2>{escape(job)}: memory (GB, left) and vcores (right), '
        f'dashed: demand</h2><canvas class="job-chart" id="job-{i}" data-job="{escape(job)}">'
        "</canvas></div>"
        for i, job in enumerate(track_jobs)
    )
    return _TRACK.format(jobs=f'<div class="grid" id="job-charts">\n{charts}\n</div>')


_CLUSTER = """<h1>Cluster</h1><div class="table-box"><table id="metrics-table"></table></div>
<p>Live pages: <a href="/simulate">/simulate</a>, <a href="/track">/track</a>.
REST API: <a href="/ws/v1/cluster/info">/ws/v1/cluster/info</a>,
<a href="/ws/v1/cluster/metrics">metrics</a>, <a href="/ws/v1/cluster/scheduler">scheduler</a>,
<a href="/ws/v1/cluster/nodes">nodes</a>, <a href="/ws/v1/cluster/apps">apps</a>.</p>"""


def page_routes(live: LiveView) -> list[Route]:
    def page(name: str, title: str, body: str) -> Any:
        html = _PAGE.format(title=title, page=name, body=body)

        async def handler(request: Request) -> HTMLResponse:
            return HTMLResponse(html)

        return handler

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        suffix = "." + name.rsplit(".", 1)[-1]
        f = STATIC / name
        if "/" in name or suffix not in STATIC_TYPES or not f.is_file():
            return Response("not found", status_code=404)
        return Response(f.read_bytes(), media_type=STATIC_TYPES[suffix])

    async def track(request: Request) -> JSONResponse:
        snap = live.latest
        if snap is None:
            return JSONResponse(
                {"running": False, "finished": False, "history": [], "trackedJobs": []}
            )
        return JSONResponse(
            {
                "running": not live.finished,
                "finished": live.finished,
                "time": snap.sim_ms,
                "history": list(live.history),
                "trackedJobs": [
                    {"job": job, "appId": live.job_apps.get(job)} for job in live.track_jobs
                ],
                "metrics": snap.metrics,
                "queues": [
                    _queue_row(q, snap) for q in snap.queues if q.get("type", "leaf") == "leaf"
                ],
                "apps": [_app_row(a) for a in snap.apps if a["state"] == "RUNNING"],
            }
        )

    return [
        Route("/cluster", page("cluster", "cluster", _CLUSTER)),
        Route("/simulate", page("simulate", "simulate", _SIMULATE)),
        Route("/track", page("track", "track", _track_body(live.track_jobs))),
        Route("/static/{name}", static),
        Route("/ws/v1/emu/track", track),
    ]


def _mb(wire: dict[str, int] | None) -> int | None:
    return None if wire is None else wire.get("memory-mb", 0)


def _queue_row(q: dict[str, Any], snap: Snapshot) -> dict[str, Any]:
    kind = snap.scheduler_kind
    share = {"fair": "fairShareMB", "capacity": "guaranteedMB"}.get(kind, "capacityMB")
    return {
        "queue": q["name"],
        "allocatedMB": _mb(q.get("used") or q.get("allocated")),
        share: share_memory(q, snap.metrics["totalMB"], kind),
        "appsRunning": q.get("apps_running", 0),
        "appsPending": q.get("apps_pending", 0),
        "pendingMB": _mb(q.get("pending")),
    }


def _app_row(a: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": a["id"],
        "name": a["name"],
        "queue": a["queue"],
        "user": a["user"],
        "allocatedMB": a["allocatedMB"],
        "allocatedVCores": a["allocatedVCores"],
        "runningContainers": a["runningContainers"],
        "elapsedTime": a["elapsedTime"],
    }
