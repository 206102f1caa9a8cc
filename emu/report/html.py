"""Rendering runs into one self-contained HTML file.

Chart.js (vendored in `emu/web/static/` with its MIT license) and the
report's script are inlined, and the data travels in a
`<script type="application/json" id="emu-report-data">` block, so the file
opens offline and anyone can read the numbers back out of it. The
side-by-side table is plain HTML (`<table id="comparison">`).
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from emu.report.runs import RunData

STATIC = resources.files("emu.web") / "static"


def _inline_js(text: str) -> str:
    return text.replace("</script", "<\\/script")


def _cell(value: Any) -> str:
    return "-" if value is None else html.escape(str(value))


def _partition_section(runs: list[RunData]) -> str:
    """With node labels (a run whose realtimetrack.json has partition
    gauges): per run, each partition's memory allocated over time, and per
    partition its queues' allocation against its size. Nothing otherwise,
    so a report of unlabelled runs is as before."""
    if not any(r.partitions for r in runs):
        return ""
    charts = []
    for k, r in enumerate(runs):
        if not r.partitions:
            continue
        name = html.escape(r.name)
        charts.append(
            f'<div class="chart"><h3>{name}: memory allocated per partition</h3>'
            f'<canvas id="partition-util-{k}"></canvas></div>'
        )
        charts += [
            f'<div class="chart"><h3>{name}: partition {html.escape(p)}, per queue '
            f'(dashed: the partition\'s size)</h3><canvas id="partition-{k}-{j}"></canvas></div>'
            for j, p in enumerate(r.partitions)
        ]
    body = "\n".join(charts)
    return (
        '<h2 id="partitions">Node-label partitions: allocation over time, and per queue</h2>\n'
        f'<div class="grid">\n{body}\n</div>\n'
    )


def render(runs: list[RunData]) -> str:
    """The report for `runs` (overlaid in charts, one column set per run)."""
    rows = [r.stats() for r in runs]
    keys = list(rows[0])
    table = "<tr>" + "".join(f"<th>{html.escape(k)}</th>" for k in keys) + "</tr>\n"
    for row in rows:
        table += "<tr>" + "".join(f"<td>{_cell(row[k])}</td>" for k in keys) + "</tr>\n"
    payload = {
        "runs": [
            {
                "name": r.name,
                "scheduler": r.scheduler,
                "source": r.source,
                "t_s": r.t_s,
                "memory_pct": r.memory_pct,
                "vcores_pct": r.vcores_pct,
                "jain": r.jain,
                "queues": r.queues,
                "cdf": sorted(j["turnaround_s"] for j in r.jobs if j["turnaround_s"] is not None),
                "wait_by_queue": r.wait_by_queue(),
                "stats": row,
                "partition_t_s": r.partition_t_s,
                "partitions": r.partitions,
            }
            for r, row in zip(runs, rows, strict=True)
        ]
    }
    data = json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")
    per_run = "\n".join(
        f'<div class="chart"><h3>{html.escape(r.name)}'
        f"{' (' + html.escape(r.scheduler) + ')' if r.scheduler else ''}</h3>"
        f'<canvas id="queues-{k}"></canvas></div>'
        for k, r in enumerate(runs)
    )
    sources = "".join(
        f"<li>{html.escape(r.name)}: {html.escape(r.source)}"
        f"{', ' + html.escape(r.scheduler) + ' scheduler' if r.scheduler else ''}</li>"
        for r in runs
    )
    waited = "".join(
        f"<tr><td>{html.escape(r.name)}</td><td>{html.escape(j['job'])}</td>"
        f"<td>{html.escape(j['queue'])}</td><td>{_cell(j['wait_s'])}</td>"
        f"<td>{html.escape('; '.join(j['why']))}</td></tr>\n"
        for r in runs
        for j in r.jobs
        if j["why"]
    )
    partitions = _partition_section(runs)
    chart_js = _inline_js((STATIC / "chart.umd.js").read_text())
    report_js = _inline_js((STATIC / "report.js").read_text())
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>emu report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1em 2em; color: #222; }}
h1 {{ font-size: 1.4em; }} h2 {{ font-size: 1.1em; margin-top: 1.5em; }} h3 {{ font-size: 1em; }}
.grid {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 1em; }}
.chart {{ height: 320px; padding-bottom: 2.5em; }}
table {{ border-collapse: collapse; font-size: .9em; }}
td, th {{ border: 1px solid #ddd; padding: .25em .6em; text-align: right; }}
th {{ background: #f3f3f3; }} td:first-child, th:first-child {{ text-align: left; }}
</style>
<script>{chart_js}</script></head>
<body>
<h1>emu report</h1>
<ul>{sources}</ul>
<h2>Side by side</h2>
<table id="comparison">
{table}</table>
<p>Utilization is time-weighted allocated / capacity over the run. Jain's index is taken
over the dominant shares of the leaf queues that have applications, every sample.</p>
<div class="grid">
<div class="chart"><h2>Cluster memory allocated over time</h2>
<canvas id="utilization"></canvas></div>
<div class="chart"><h2>Jain's fairness index over dominant shares</h2>
<canvas id="jain"></canvas></div>
<div class="chart"><h2>Job turnaround CDF</h2><canvas id="cdf"></canvas></div>
<div class="chart"><h2>Mean wait per queue (submission to start)</h2>
<canvas id="wait"></canvas></div>
</div>
<h2>Why jobs waited to start</h2>
<table id="why-pending">
<tr><th>run</th><th>job</th><th>queue</th><th>wait s</th><th>reasons (first seen first)</th></tr>
{waited}</table>
<h2>Per-queue allocation (solid) against fair share or guarantee (dashed)</h2>
<div class="grid">
{per_run}
</div>
{partitions}<script type="application/json" id="emu-report-data">{data}</script>
<script>{report_js}</script>
</body></html>
"""
