"""`emu report`: one trace under FIFO, Capacity and Fair, drawn into one HTML
file whose numbers are checked against the runs' own outputs; and Hadoop
SLS's realtimetrack.json."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from emu.cli import main
from emu.metrics.timeline import jain_index

SCENARIO = "scenarios/compare-schedulers.toml"
SCHEDULERS = ("fifo", "capacity", "fair")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("runs")
    out = {}
    for s in SCHEDULERS:
        out[s] = base / s
        args = ["run", SCENARIO, "-D", f"yarn.resourcemanager.scheduler.class={s}"]
        assert main([*args, "-o", str(out[s]), "--progress", "never"]) == 0
    return out


def _table(page: str) -> list[dict[str, str]]:
    body = page.split('<table id="comparison">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    head = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", rows[0])]
    return [
        dict(zip(head, [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", r)], strict=True))
        for r in rows[1:]
    ]


def _data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="emu-report-data">(.*?)</script>', page)
    assert m is not None
    return json.loads(m.group(1))


def test_jain_index():
    assert jain_index([]) is None
    assert jain_index([0.3, 0.3, 0.3]) == pytest.approx(1.0)
    assert jain_index([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert jain_index([0.0, 0.0]) == 1.0


def test_the_timeline_in_summary_json_is_deterministic(runs, tmp_path):
    again = tmp_path / "fair"
    args = ["run", SCENARIO, "-D", "yarn.resourcemanager.scheduler.class=fair"]
    assert main([*args, "-o", str(again), "--progress", "never"]) == 0
    assert (again / "summary.json").read_bytes() == (runs["fair"] / "summary.json").read_bytes()
    tl = json.loads((again / "summary.json").read_text())["timeline"]
    assert tl["scheduler"] == "fair" and tl["every_s"] == 1
    assert set(tl["queues"]) >= {"root.prod", "root.dev"}
    n = len(tl["t_ms"])
    assert all(len(v) == n for q in tl["queues"].values() for v in q.values())
    # Allocation per queue adds up to the cluster's, sample by sample.
    for k in range(n):
        assert sum(q["memory"][k] for q in tl["queues"].values()) == tl["memory_used"][k]


def test_report_over_three_schedulers_matches_their_outputs(runs, tmp_path):
    report = tmp_path / "report.html"
    assert main(["report", *(str(runs[s]) for s in SCHEDULERS), "-o", str(report)]) == 0
    page = report.read_text()
    assert "<script src=" not in page and not re.search(r'(src|href)="https?:', page)
    assert "Chart.js v4" in page

    rows = _table(page)
    data = _data(page)
    assert [r["run"] for r in rows] == list(SCHEDULERS)
    assert [r["scheduler"] for r in rows] == list(SCHEDULERS)
    for row, run in zip(rows, data["runs"], strict=True):
        summary = json.loads((runs[row["run"]] / "summary.json").read_text())
        jobs = summary["jobs"]
        assert int(row["jobs"]) == len(jobs)
        assert int(row["jobs finished"]) == sum(j["state"] == "FINISHED" for j in jobs)
        assert float(row["makespan s"]) == summary["simulated_ms"] / 1000
        turnaround = sorted(j["turnaround_ms"] / 1000 for j in jobs)
        mean = sum(turnaround) / len(turnaround)
        assert float(row["turnaround mean s"]) == pytest.approx(mean, abs=0.05)
        assert float(row["turnaround mean s"]) == pytest.approx(
            summary["turnaround_ms"]["mean"] / 1000, abs=0.05
        )
        assert float(row["turnaround p90 s"]) == round(summary["turnaround_ms"]["p90"] / 1000, 1)
        assert float(row["wait max s"]) == round(summary["wait_ms"]["max"] / 1000, 1)
        util = summary["cluster"]["utilization"]
        assert float(row["memory utilization %"]) == round(100 * util["memory"], 1)
        assert run["cdf"] == turnaround
        jain = [x for x in summary["timeline"]["jain_dominant_share"] if x is not None]
        assert float(row["Jain index mean"]) == round(sum(jain) / len(jain), 3)
        waits: dict[str, list[float]] = {}
        for j in jobs:
            waits.setdefault(j["queue"], []).append(j["wait_ms"] / 1000)
        assert run["wait_by_queue"] == {
            q: round(sum(w) / len(w), 1) for q, w in sorted(waits.items())
        }
    by = {r["run"]: r for r in rows}
    # FIFO: one queue, nothing to be unfair between; prod waits behind dev.
    assert float(by["fifo"]["Jain index mean"]) == 1.0
    assert float(by["fair"]["wait mean s"]) < float(by["fifo"]["wait mean s"])
    fair_q = data["runs"][2]["queues"]["root.prod"]
    assert max(fair_q["share_gb"]) > 0  # the fair share is drawn beside the allocation


def test_report_renders_an_sls_realtimetrack_json(tmp_path):
    records = [
        {
            "time": 1_700_000_000_000 + 1000 * t,
            "cluster.allocated.memory": 2.0 * t,
            "cluster.available.memory": 10.0 - 2.0 * t,
            "cluster.allocated.vcores": t,
            "cluster.available.vcores": 10 - t,
            "queue.root.default.allocated.memory": 2.0 * t,
            "running.applications": 1,
        }
        for t in range(6)
    ]
    sls_out = tmp_path / "sls-out"
    sls_out.mkdir()
    (sls_out / "realtimetrack.json").write_text(json.dumps(records))
    partial = tmp_path / "partial.json"  # SLS writes it as it goes: no closing bracket yet
    partial.write_text(json.dumps(records)[:-1] + ",")
    report = tmp_path / "r.html"
    assert main(["report", str(sls_out), str(partial), "-o", str(report)]) == 0
    data = _data(report.read_text())
    for run in data["runs"]:
        assert run["source"] == "sls realtimetrack.json"
        assert run["t_s"] == [0, 1, 2, 3, 4, 5]
        assert run["memory_pct"] == [0, 20, 40, 60, 80, 100]
        assert run["queues"]["root.default"]["allocated_gb"] == [0, 2, 4, 6, 8, 10]


def test_report_input_errors_name_the_path(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope"), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("emu: error: ") and "nope" in err and err[-1] == "\n"
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.json").write_text("{broken")
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert "summary.json" in capsys.readouterr().err


def test_why_pending_names_the_reasons_in_summary_and_report(runs, tmp_path):
    cap = json.loads((runs["capacity"] / "summary.json").read_text())
    fifo = json.loads((runs["fifo"] / "summary.json").read_text())
    reasons = {e[1] for j in cap["jobs"] for e in j.get("why_pending", {}).get("before_start", [])}
    assert "queue at max capacity" in reasons
    # FIFO: prod jobs wait behind dev's; the scheduler never offers them a node.
    prod = [j for j in fifo["jobs"] if j["job_id"].startswith("prod")]
    assert all(j["wait_ms"] > 60_000 for j in prod)
    assert all(
        j["why_pending"]["before_start"][0][1].startswith("not offered a node") for j in prod
    )
    started = [j for j in fifo["jobs"] if j["wait_ms"] <= 1000]
    assert all("before_start" not in j.get("why_pending", {}) for j in started)
    report = tmp_path / "r.html"
    assert main(["report", str(runs["capacity"]), str(runs["fifo"]), "-o", str(report)]) == 0
    page = report.read_text()
    table = page.split('<table id="why-pending">', 1)[1].split("</table>", 1)[0]
    assert "queue at max capacity" in table and "prod_1" in table
