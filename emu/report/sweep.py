"""`emu report SWEEP_DIR`: one self-contained HTML page over a sweep.

For each trace, small charts draw a few figures (the spec's objective first)
against the cluster size, one line per configuration, each point the mean
over the seeds; the sizing answer (the smallest cluster of the grid meeting
the spec's target) follows, then every point in one table ranked by the
objective. The charts are inline SVG and the rows travel in a
`<script type="application/json" id="emu-sweep-data">` block, so the file
works offline and its numbers can be read back out.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from emu.sweep import table

CHARTED = ("makespan_s", "turnaround_p90_s", "memory_utilization_pct", "jain_mean")
SHOWN = (
    "point", "trace", "config", "nodes", "seed", "status", "makespan_s", "turnaround_mean_s",
    "turnaround_p90_s", "wait_mean_s", "memory_utilization_pct", "jain_mean", "preemptions",
    "failed_jobs",
)  # fmt: skip
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def is_sweep_dir(path: Path) -> bool:
    return table.is_sweep_dir(path)


def write_sweep_report(sweep_dir: Path, out: Path) -> int:
    manifest = table.read_manifest(sweep_dir)
    rows = table.rows(sweep_dir, manifest)
    out.write_text(render(manifest, rows))
    print(f"wrote {out} (sweep {manifest['name']}, {len(rows)} points)")
    return 0


def _cell(v: Any) -> str:
    return "-" if v is None or v == "" else html.escape(str(v))


def _mean_by(rows: list[dict[str, Any]], metric: str, config: str) -> list[tuple[int, float]]:
    by: dict[int, list[float]] = {}
    for r in rows:
        v = r.get(metric)
        if (
            r["config"] == config
            and r.get("status") in table.FINISHED
            and isinstance(v, int | float)
        ):
            by.setdefault(int(r["nodes"] or 0), []).append(float(v))
    return [(n, sum(vs) / len(vs)) for n, vs in sorted(by.items())]


def _chart(rows: list[dict[str, Any]], metric: str, configs: list[str]) -> str:
    w, h, left, bottom, pad = 320, 200, 48, 28, 10
    series = {c: _mean_by(rows, metric, c) for c in configs}
    xs = sorted({n for s in series.values() for n, _ in s})
    ys = [y for s in series.values() for _, y in s]
    title = f"<h4>{html.escape(metric)}</h4>"
    if not xs or not ys:
        return f'<div class="chart">{title}<p>no values</p></div>'
    lo, hi = min(0.0, min(ys)), max(ys) or 1.0

    def px(n: int) -> float:
        k = xs.index(n)
        return left + (w - left - pad) * (k / (len(xs) - 1) if len(xs) > 1 else 0.5)

    def py(y: float) -> float:
        return pad + (h - bottom - pad) * (1 - (y - lo) / ((hi - lo) or 1.0))

    parts = [
        f'<line x1="{left}" y1="{h - bottom}" x2="{w - pad}" y2="{h - bottom}" stroke="#999"/>',
        f'<line x1="{left}" y1="{pad}" x2="{left}" y2="{h - bottom}" stroke="#999"/>',
        f'<text x="{left - 4}" y="{pad + 4}" text-anchor="end">{hi:.4g}</text>',
        f'<text x="{left - 4}" y="{h - bottom}" text-anchor="end">{lo:.4g}</text>',
        f'<text x="{(w + left) / 2}" y="{h - 2}" text-anchor="middle">nodes</text>',
    ]
    for n in xs:
        parts.append(f'<text x="{px(n):.1f}" y="{h - bottom + 12}" text-anchor="middle">{n}</text>')
    for k, (config, pts) in enumerate(series.items()):
        color = COLORS[k % len(COLORS)]
        coords = " ".join(f"{px(n):.1f},{py(y):.1f}" for n, y in pts)
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{coords}">')
        parts.append(f"<title>{html.escape(config)}</title></polyline>")
        for n, y in pts:
            parts.append(
                f'<circle cx="{px(n):.1f}" cy="{py(y):.1f}" r="3" fill="{color}">'
                f"<title>{html.escape(config)}, {n} nodes: {y:.4g}</title></circle>"
            )
    svg = f'<svg width="{w}" height="{h}" font-size="10">{"".join(parts)}</svg>'
    return f'<div class="chart">{title}{svg}</div>'


def render(manifest: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    objective, goal = manifest["objective"], manifest["goal"]
    configs = list(dict.fromkeys(r["config"] for r in rows))
    legend = " ".join(
        f'<span style="color:{COLORS[k % len(COLORS)]}">&#9632; {html.escape(c)}</span>'
        for k, c in enumerate(configs)
    )
    charted = [objective, *(m for m in CHARTED if m != objective)]
    sections = []
    for trace in dict.fromkeys(r["trace"] for r in rows):
        mine = [r for r in rows if r["trace"] == trace]
        charts = "".join(_chart(mine, m, configs) for m in charted)
        sections.append(f"<h3>trace {html.escape(trace)}</h3><div class='charts'>{charts}</div>")
    sizing = ""
    target = manifest.get("target")
    if target:
        items = "".join(
            f"<tr><td>{_cell(a['trace'])}</td><td>{_cell(a['config'])}</td>"
            f"<td>{html.escape(table.answer(a))}</td></tr>"
            for a in table.sizing(rows, target)
        )
        sizing = (
            f"<h2>Smallest cluster meeting {html.escape(target['description'])}</h2>"
            "<p>For every seed of the grid.</p>"
            '<table id="sizing"><tr><th>trace</th><th>config</th><th>smallest cluster</th></tr>'
            f"{items}</table>"
        )
    best = table.ranked(rows, objective, goal)
    rest = [r for r in rows if r not in best]
    cols = [*SHOWN, *([objective] if objective not in SHOWN else [])]
    head = "<tr><th>rank</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"
    body = "".join(
        f"<tr><td>{k + 1 if k < len(best) else '-'}</td>"
        + "".join(f"<td>{_cell(r.get(c))}</td>" for c in cols)
        + "</tr>"
        for k, r in enumerate(best + rest)
    )
    data = json.dumps({"manifest": manifest, "rows": rows}, separators=(",", ":"))
    data = data.replace("</", "<\\/")
    name = html.escape(manifest["name"])
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>emu sweep {name}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
table {{ border-collapse: collapse; font-size: 12px; }}
td, th {{ border: 1px solid #ccc; padding: 2px 6px; text-align: right; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 1em; }}
.chart h4 {{ margin: 0.2em 0; font-weight: normal; }}
</style></head><body>
<h1>Sweep {name}</h1>
<p>{len(rows)} points; ranked by <b>{html.escape(objective)}</b> ({
        "lower" if goal == "min" else "higher"
    } is better). Charts: the mean over seeds against the cluster size. {legend}</p>
{"".join(sections)}
{sizing}
<h2>Points</h2>
<table id="points">{head}{body}</table>
<script type="application/json" id="emu-sweep-data">{data}</script>
</body></html>
"""
