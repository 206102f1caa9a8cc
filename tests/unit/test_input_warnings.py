"""Inputs that run but probably not as meant get one `emu: warning:` line
each on stderr, naming the input: a host listed twice on one rack of a
nodes file, trace hosts the nodes file lacks, a configuration directory
without sls-runner.xml. Inputs that are plainly wrong are refused (the
bad-input corpus in tests/data/bad/ covers those)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from emu.scenario.topology import read_nodes_file
from emu.sls import SlsOptions, prepare
from tests.reference import REFERENCE_DIR

CONF = REFERENCE_DIR / "test-resources"


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("emu: warning: ")]


def _job(host: str) -> dict[str, object]:
    return {
        "am.type": "mapreduce",
        "job.start.ms": 0,
        "job.end.ms": 10000,
        "job.queue.name": "default",
        "job.id": "job_1",
        "job.tasks": [
            {
                "container.host": f"/default-rack/{host}",
                "container.start.ms": 0,
                "container.end.ms": 5000,
                "container.priority": 20,
                "container.type": "map",
            }
        ],
    }


def _nodes(path: Path, *hosts: str) -> str:
    path.write_text(json.dumps({"rack": "default-rack", "nodes": [{"node": h} for h in hosts]}))
    return str(path)


def test_a_host_twice_on_one_rack_is_one_node_with_a_warning(tmp_path, capsys):
    nodes = _nodes(tmp_path / "nodes.json", "node1", "node2", "node1")
    assert [n.host for n in read_nodes_file(nodes)] == ["node1", "node2"]
    (line,) = _warnings(capsys.readouterr().err)
    assert "nodes.json:1: rack entry 1, node 3: host 'node1' is listed twice" in line


def test_trace_hosts_absent_from_the_nodes_file_are_named(tmp_path, capsys):
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(_job("ghost1")))
    opts = SlsOptions(
        tracetype="SLS",
        traces=[str(trace)],
        output_dir=tmp_path / "out",
        nodes_file=_nodes(tmp_path / "nodes.json", "node1", "node2"),
        conf_dir=str(CONF),
    )
    prepare(opts)
    (line,) = _warnings(capsys.readouterr().err)
    assert "trace.json: 1 host(s) the trace asks for are not in" in line
    assert "ghost1" in line


def test_trace_hosts_all_present_no_warning(tmp_path, capsys):
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(_job("node2")))
    opts = SlsOptions(
        tracetype="SLS",
        traces=[str(trace)],
        output_dir=tmp_path / "out",
        nodes_file=_nodes(tmp_path / "nodes.json", "node1", "node2"),
        conf_dir=str(CONF),
    )
    prepare(opts)
    assert _warnings(capsys.readouterr().err) == []


def test_a_conf_dir_without_sls_runner_xml_is_named(tmp_path, capsys):
    conf = tmp_path / "conf"
    conf.mkdir()
    shutil.copy(CONF / "yarn-site.xml", conf)
    shutil.copy(CONF / "capacity-scheduler.xml", conf)
    opts = SlsOptions(
        tracetype="SLS",
        traces=[str(CONF / "inputsls.json")],
        output_dir=tmp_path / "out",
        conf_dir=str(conf),
    )
    prepare(opts)
    (line,) = _warnings(capsys.readouterr().err)
    assert f"{conf}: no sls-runner.xml" in line
    assert "10240" in line
