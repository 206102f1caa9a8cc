"""The SLS witness's pure-Python parts: comparing jobruntime.csv files,
SLS's own format normalised, the conf directory, and FIFO refused without
starting a JVM."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from emu.fidelity import sls_oracle as so
from emu.fidelity import suite
from emu.fidelity.compare import JobDeltas

HEADER = "JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time"


def _csv(path: Path, rows: list[tuple[str, int, int]]) -> Path:
    path.write_text("\n".join([HEADER, *(f"{j},{s},{e},{s},{e}" for j, s, e in rows)]) + "\n")
    return path


RES = Path(__file__).resolve().parents[1] / "data" / "hadoop" / "test-resources"
SCHEDULERS = "org.apache.hadoop.yarn.server.resourcemanager.scheduler."


def _case(name: str, scheduler: str, sls: bool = True) -> suite.Case:
    return suite.Case(
        name=name,
        what=name,
        traces=(RES / "inputsls.json",),
        nodes=RES / "nodes.json",
        conf=RES,
        properties={suite.SCHEDULER: SCHEDULERS + scheduler},
        sls=sls,
    )


def test_a_file_against_itself_has_no_deltas(tmp_path: Path) -> None:
    f = _csv(tmp_path / "a.csv", [("job_1", 0, 20050), ("job_2", 105204, 130270)])
    d = so.compare_jobruntime(f, f)
    assert d == JobDeltas(2, 0, 0, 0, 0, 0)
    assert d.identical


def test_deltas_max_p95_and_missing(tmp_path: Path) -> None:
    a = _csv(tmp_path / "a.csv", [("j1", 0, 1000), ("j2", 500, 3000), ("j3", 900, 900)])
    b = _csv(tmp_path / "b.csv", [("j1", 0, 1000), ("j2", 700, 2000), ("j4", 1, 2)])
    d = so.compare_jobruntime(a, b)
    assert (d.jobs, d.differing, d.max_start_ms, d.max_end_ms) == (2, 1, 200, 1000)
    assert d.p95_end_ms == 1000
    assert d.missing == ("j3", "j4")
    assert d.worst == "j2"


def test_application_ids_are_matched_in_submission_order(tmp_path: Path) -> None:
    emu = _csv(tmp_path / "emu.csv", [("job_2", 105204, 130270), ("job_1", 0, 20050)])
    sls = _csv(
        tmp_path / "sls.csv",
        [("application_17_0002", 105210, 133206), ("application_17_0001", 1, 24006)],
    )
    d = so.compare_jobruntime(emu, sls)
    assert (d.jobs, d.missing, d.max_start_ms, d.max_end_ms) == (2, (), 6, 3956)
    explicit = so.compare_jobruntime(
        emu, sls, ids={"application_17_0001": "job_1", "application_17_0002": "job_2"}
    )
    assert explicit == d


def test_sls_jobruntime_normalised_to_trace_ids_and_simulated_ms(tmp_path: Path) -> None:
    raw = tmp_path / "jobruntime.csv"
    raw.write_text(
        HEADER + "\n"
        "application_1795642930024_0001,0,95375,1795642933113,1795642957119\n"
        "application_1795642930024_0002,105204,197256,1795643038316,1795643066318\n"
    )
    (tmp_path / "sls-start-ms").write_text("1795642933112\n")
    (tmp_path / "jobids.csv").write_text(
        "job_id,app_id\njob_1,application_1795642930024_0001\n"
        "job_2,application_1795642930024_0002\n"
    )
    dest = tmp_path / "n.csv"
    n = so.normalize_jobruntime(raw, dest, tmp_path / "sls-start-ms", tmp_path / "jobids.csv")
    assert n == 2
    assert dest.read_text().splitlines()[1:] == [
        "job_1,0,95375,1,24007",
        "job_2,105204,197256,105204,133206",
    ]
    # Without the launcher's files: application ids kept, zero estimated.
    so.normalize_jobruntime(raw, dest, tmp_path / "none", tmp_path / "none.csv")
    assert dest.read_text().splitlines()[1:] == [
        "application_1795642930024_0001,0,95375,1,24007",
        "application_1795642930024_0002,105204,197256,105204,133206",
    ]


def test_fifo_is_refused_without_java(tmp_path: Path) -> None:
    run = so.run_sls(_case("fifo", "fifo.FifoScheduler"), tmp_path, timeout_s=1)
    assert run.status == "no-fifo" and "SLS has no FIFO" in run.reason
    assert not any(tmp_path.iterdir())


def test_conf_dir_writes_properties_and_ephemeral_ports(tmp_path: Path) -> None:
    case = _case("capacity", "capacity.CapacityScheduler")
    conf, notes = so.conf_dir(case, tmp_path / "conf")

    def props(name: str) -> dict[str, str]:
        root = ET.parse(conf / name).getroot()
        return {p.findtext("name") or "": p.findtext("value") or "" for p in root}

    yarn = props("yarn-site.xml")
    assert yarn[suite.SCHEDULER].endswith("capacity.CapacityScheduler")
    assert yarn["yarn.resourcemanager.address"] == "localhost:0"
    assert yarn[so.RESERVATIONS] == "false"
    assert props("sls-runner.xml")["yarn.sls.metrics.web.address.port"] == "0"
    assert (conf / "log4j.properties").is_file()
    assert any("reservation" in n for n in notes)


def test_table_lists_fifo_cases_and_renders(tmp_path: Path) -> None:
    cases = [
        _case("fifo", "fifo.FifoScheduler", sls=False),
        _case("fair", "fair.FairScheduler", sls=False),
    ]
    assert [c.name for c in so.sls_cases(cases)] == ["fifo"]
    rows = so.sls_table(cases, tmp_path, {})
    text = so.render_markdown(rows)
    assert "| fifo | SLS has no FIFO" in text


def test_markdown_row_for_a_measured_case() -> None:
    run = so.SlsOracleRun("c", "ok", wall_s=152.4, notes=("run by SlsLauncher",))
    noise = JobDeltas(2, 1, 3, 1995, 3, 1995)
    vs = (JobDeltas(2, 2, 4, 5958, 4, 5958, worst="job_1"), JobDeltas(2, 2, 1, 3963, 1, 3963))
    row = so.SlsRow("c", "capacity", (run, run), noise, vs, 0.42)
    text = so.render_markdown([row])
    cells = "152 / 152 | 0.0 / 2.0 / 2.0 | 1/2 | 0.0 / 0.0 | 6.0 / 4.0 | 6.0 / 4.0 | 2/2 / 2/2"
    assert f"| c | {cells} | 0.42 |" in text
    assert "SLS was run with: run by SlsLauncher" in text
