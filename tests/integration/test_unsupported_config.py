"""Nothing silently ignored: a property either takes effect or is refused by
name (exit 2, one line), `--allow-unsupported` runs without it with one
warning each and lists it in summary.json, likely typos are named, and
`--print-simulation`'s lists say what emu really does with each property."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from emu import api
from emu.cli import main
from emu.config import support
from emu.config.configuration import Configuration
from emu.config.hadoop_names import NAMES
from emu.docs import DOCS
from emu.errors import InputError
from tests.reference import REFERENCE_DIR

ROOT = Path(__file__).resolve().parents[2]

TEST_RES = REFERENCE_DIR / "test-resources"
TRACE = TEST_RES / "inputsls.json"
NODES = TEST_RES / "nodes.json"
CS = "yarn.scheduler.capacity."
QUEUES = {
    CS + "root.queues": "sls_queue_1,sls_queue_2,users",
    CS + "root.sls_queue_1.capacity": "40",
    CS + "root.sls_queue_2.capacity": "40",
    CS + "root.users.capacity": "20",
}
LABEL_SETTINGS = "per-label queue settings besides capacity and maximum-capacity"
FAIR_SITE = {"yarn.resourcemanager.scheduler.class": "fair"}
NO_LABELS = (
    "run Hadoop's own scheduler with --scheduler-impl hadoop, "
    "or pass --allow-unsupported to run without it"
)


def _xml(props: dict[str, str]) -> str:
    body = "".join(
        f"  <property>\n    <name>{k}</name>\n    <value>{v}</value>\n  </property>\n"
        for k, v in props.items()
    )
    return f"<?xml version='1.0'?>\n<configuration>\n{body}</configuration>\n"


def conf_dir(tmp_path: Path, capacity: dict[str, str], site: dict[str, str] | None = None) -> Path:
    d = tmp_path / "conf"
    d.mkdir()
    (d / "capacity-scheduler.xml").write_text(_xml({**QUEUES, **capacity}))
    (d / "yarn-site.xml").write_text(_xml(site or {}))
    return d


def sls(conf: Path, out: Path, *args: str, nodes: Path = NODES) -> int:
    return main(
        [
            "sls",
            "--tracetype=SLS",
            f"--tracelocation={TRACE}",
            f"--nodes={nodes}",
            f"--conf-dir={conf}",
            f"--output-dir={out}",
            *args,
        ]
    )


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("emu: error:")]


REFUSED = [
    pytest.param(
        {CS + "root.sls_queue_1.maximum-application-lifetime": "2"},
        "yarn.scheduler.capacity.root.sls_queue_1.maximum-application-lifetime",
        "application lifetimes",
        id="application-lifetime",
    ),
    pytest.param(
        {CS + "root.sls_queue_1.accessible-node-labels.gpu.maximum-am-resource-percent": "0.5"},
        "yarn.scheduler.capacity.root.sls_queue_1.accessible-node-labels.gpu."
        "maximum-am-resource-percent",
        LABEL_SETTINGS,
        id="per-label-am-percent",
    ),
]


@pytest.mark.parametrize(("props", "name", "feature"), REFUSED)
def test_what_emu_does_not_emulate_is_refused_by_name(tmp_path, capsys, props, name, feature):
    out = tmp_path / "out"
    assert sls(conf_dir(tmp_path, props), out) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1
    assert "capacity-scheduler.xml:" in lines[0]
    assert f": {name}: emu's CapacityScheduler does not emulate {feature}; {NO_LABELS}" in lines[0]
    assert not out.exists()


def test_node_labels_in_the_nodes_file_are_refused_by_the_fair_scheduler(tmp_path, capsys):
    """The CapacityScheduler emulates node labels; the FairScheduler has none."""
    nodes = tmp_path / "nodes.json"
    nodes.write_text('{"rack": "r1", "nodes": [{"node": "n1"}, {"node": "n2", "labels": "gpu"}]}\n')
    assert sls(conf_dir(tmp_path, {}, FAIR_SITE), tmp_path / "out", nodes=nodes) == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert line == (
        f"emu: error: {nodes}: node n2: labels: emu's FairScheduler does not emulate "
        f"node labels; {NO_LABELS}"
    )
    (tmp_path / "cs").mkdir()
    labels_on = {"yarn.node-labels.enabled": "true"}
    assert sls(conf_dir(tmp_path / "cs", {}, labels_on), tmp_path / "cs" / "out", nodes=nodes) == 0


def test_allow_unsupported_warns_once_each_and_lists_them_in_the_summary(tmp_path, capsys):
    am_percent = CS + "root.sls_queue_1.accessible-node-labels.gpu.maximum-am-resource-percent"
    props = {
        CS + "root.sls_queue_1.maximum-application-lifetime": "2",
        CS + "root.accessible-node-labels.gpu.capacity": "100",
        CS + "root.sls_queue_1.accessible-node-labels": "gpu",
        CS + "root.sls_queue_1.accessible-node-labels.gpu.capacity": "100",
        am_percent: "0.5",
    }
    nodes = tmp_path / "nodes.json"
    nodes.write_text('{"rack": "r1", "nodes": [{"node": "n1", "labels": "gpu"}, {"node": "n2"}]}\n')
    out = tmp_path / "out"
    site = {"yarn.node-labels.enabled": "true"}
    assert sls(conf_dir(tmp_path, props, site), out, "--allow-unsupported", nodes=nodes) == 0
    err = capsys.readouterr().err.splitlines()
    warnings = [line for line in err if "not emulated, running without it" in line]
    assert len(warnings) == 2
    assert all(w.startswith("emu: warning:") for w in warnings)
    summary = json.loads((out / "summary.json").read_text())
    listed = {(u["property"], u["feature"]) for u in summary["unsupported"]}
    assert listed == {
        (CS + "root.sls_queue_1.maximum-application-lifetime", "application lifetimes"),
        (am_percent, LABEL_SETTINGS),
    }


def test_a_run_without_unsupported_properties_has_no_unsupported_key(tmp_path, capsys):
    out = tmp_path / "out"
    assert sls(conf_dir(tmp_path, {}), out) == 0
    assert "unsupported" not in json.loads((out / "summary.json").read_text())
    assert "not emulated" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("define", "likely"),
    [
        (
            "yarn.scheduler.capacity.root.sls_queue_1.maximum-capacty=10",
            "yarn.scheduler.capacity.root.sls_queue_1.maximum-capacity",
        ),
        ("yarn.resourcemanager.scheduler.clas=fifo", "yarn.resourcemanager.scheduler.class"),
    ],
)
def test_a_misspelt_property_gets_a_warning_with_the_likely_name(tmp_path, capsys, define, likely):
    assert sls(conf_dir(tmp_path, {}), tmp_path / "out", "-D", define) == 0
    err = capsys.readouterr().err
    name = define.split("=")[0]
    assert (
        f"emu: warning: -D: {name}: not a property Hadoop or emu knows; did you mean {likely}?"
        in (err)
    )


def test_print_simulation_lists_are_true(tmp_path, capsys):
    site = {
        "yarn.resourcemanager.scheduler.monitor.enable": "true",
        "yarn.resourcemanager.scheduler.monitor.policies": "org.apache.hadoop.yarn.server."
        "resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy",
        "yarn.resourcemanager.webapp.address": "localhost:8088",
        "yarn.scheduler.fair.preemption": "true",
    }
    props = {CS + "root.users.auto-create-child-queue.management-policy": "x"}
    assert sls(conf_dir(tmp_path, props, site), tmp_path / "out", "--print-simulation") == 0
    printed = capsys.readouterr().out
    info = printed[printed.index("configuration properties") : printed.index("job  ")]
    ignored, _, no_effect = info.partition("accepted, without effect in emu")
    assert "yarn.resourcemanager.scheduler.monitor" not in info  # read: preemption runs
    assert "yarn.resourcemanager.webapp.address  (" in ignored
    assert "yarn.scheduler.fair.preemption: only the FairScheduler reads it" in no_effect
    assert "auto-create-child-queue.management-policy: legacy auto-created" in no_effect


def test_with_hadoops_scheduler_nothing_is_refused():
    conf = Configuration(
        {
            "emu.scheduler.impl": "hadoop",
            CS + "root.a.accessible-node-labels": "gpu",
            CS + "root.a.maximum-application-lifetime": "2",
        }
    )
    assert support.check(conf, support.CAPACITY, warn=lambda line: None) == []
    assert support.check_labels(conf, support.CAPACITY, "nodes.json", "node n1", "labels") == []


def test_the_python_api_refuses_or_runs_without(tmp_path):
    props = {CS + "root.sls_queue_1.maximum-application-lifetime": "2"}
    conf = conf_dir(tmp_path, props)
    with pytest.raises(InputError, match="does not emulate application lifetimes"):
        api.replay(TRACE, nodes=NODES, conf_dir=conf, output_dir=tmp_path / "a")
    result = api.replay(
        TRACE, nodes=NODES, conf_dir=conf, output_dir=tmp_path / "b", allow_unsupported=True
    )
    assert result.summary["unsupported"] == [
        {
            "property": CS + "root.sls_queue_1.maximum-application-lifetime",
            "source": f"{conf / 'capacity-scheduler.xml'}:19",
            "feature": "application lifetimes",
        }
    ]


def test_emu_run_refuses_and_allows_the_same_way(tmp_path, capsys):
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "capacity-preemption.toml"
    lifetime = "-Dyarn.scheduler.capacity.root.a.maximum-application-lifetime=2"
    assert main(["run", str(scenario), lifetime]) == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert line.startswith(
        "emu: error: -D: yarn.scheduler.capacity.root.a.maximum-application-lifetime: "
        "emu's CapacityScheduler does not emulate application lifetimes"
    )
    out = tmp_path / "out"
    assert main(["run", str(scenario), lifetime, "--allow-unsupported", "-o", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unsupported"][0]["feature"] == "application lifetimes"


def test_emulated_names_in_the_table_are_hadoops_or_emus():
    """A misspelt name in the table would be 'emulated' and read by nothing."""
    for rule in support.RULES:
        if rule.status == support.EMULATED and "<" not in rule.pattern:
            assert rule.pattern in NAMES or rule.pattern.startswith(("emu.", "yarn.sls.", CS)), (
                rule.pattern
            )


def test_configuration_doc_is_current():
    path = DOCS / "configuration.md"
    assert path.read_text() == support.markdown(), f"{path} is stale: run `make docs`"


def test_print_simulation_names_fair_elements_without_effect(tmp_path, capsys):
    conf = conf_dir(tmp_path, {}, {"yarn.resourcemanager.scheduler.class": "fair"})
    (conf / "fair-scheduler.xml").write_text(
        "<?xml version='1.0'?>\n<allocations>\n"
        "  <reservation-agent>x.Agent</reservation-agent>\n"
        "  <queue name='sls_queue_1'><aclSubmitReservations>*</aclSubmitReservations></queue>\n"
        "</allocations>\n"
    )
    assert sls(conf, tmp_path / "out", "--print-simulation") == 0
    printed = capsys.readouterr().out
    assert "fair-scheduler.xml:3: <reservation-agent>: emu's inputs submit no reservations" in (
        printed
    )
    assert "fair-scheduler.xml:4: <aclSubmitReservations>: " in printed


def test_a_rule_that_can_never_apply_is_a_table_error():
    shadowed = (
        support.Rule("yarn.scheduler.capacity.<queue>.*", support.EMULATED),
        support.Rule("yarn.scheduler.capacity.<queue>.capacity", support.EMULATED),
    )
    with pytest.raises(ValueError, match="shadowed"):
        support._check_table(shadowed)
    with pytest.raises(ValueError, match="names no feature"):
        support._check_table((support.Rule("a.b", support.REFUSED),))


def test_a_queue_refresh_is_checked_before_the_run(tmp_path):
    changes = tmp_path / "changes.toml"
    changes.write_text(
        '[[changes]]\nat_ms = 20000\nkind = "refresh_queues"\nproperties = { '
        '"yarn.scheduler.capacity.root.sls_queue_1.maximum-application-lifetime" = 2 }\n'
    )
    conf = conf_dir(tmp_path, {})
    kw = {"nodes": NODES, "conf_dir": conf, "changes": changes}
    with pytest.raises(InputError) as refused:
        api.replay(TRACE, output_dir=tmp_path / "a", **kw)
    assert str(refused.value).startswith(
        f"{changes}: changes[0]: yarn.scheduler.capacity.root.sls_queue_1."
        "maximum-application-lifetime: emu's CapacityScheduler does not emulate application "
        "lifetimes"
    )
    assert not (tmp_path / "a").exists()
    result = api.replay(TRACE, output_dir=tmp_path / "b", allow_unsupported=True, **kw)
    assert [u["source"] for u in result.summary["unsupported"]] == [f"{changes}: changes[0]"]


def test_a_job_label_expression_in_the_trace_is_refused_by_the_fair_scheduler(tmp_path, capsys):
    trace = tmp_path / "trace.json"
    trace.write_text(
        TRACE.read_text().replace('"am.type"', '"job.label.expression": "gpu",\n  "am.type"', 1)
    )
    out = tmp_path / "out"
    rc = main(
        ["sls", "--tracetype=SLS", f"--tracelocation={trace}", f"--nodes={NODES}",
         f"--conf-dir={conf_dir(tmp_path, {}, FAIR_SITE)}", f"--output-dir={out}"]
    )  # fmt: skip
    assert rc == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert line.startswith(
        f"emu: error: {trace}: job job_1: job.label.expression: emu's FairScheduler "
        "does not emulate node labels"
    )


LAZY = CS + "lazy-preemption-enabled"
LAZY_REFUSED = (
    f"{LAZY}: emu's CapacityScheduler does not emulate lazy preemption; run Hadoop's "
    "own scheduler with --scheduler-impl hadoop, or pass --allow-unsupported to run without it"
)


def test_every_entry_point_refuses_in_the_same_words(tmp_path, capsys):
    """`emu sls`, `emu run`, the Python API, `emu rm` and `emu cluster up`
    share one preflight (`emu.preflight`): each refuses what emu does not
    emulate in the same words, naming where the property was set."""
    conf = conf_dir(tmp_path, {})
    scenario = ROOT / "scenarios" / "capacity-preemption.toml"
    sls_argv = ["sls", f"--tracelocation={TRACE}", "--tracetype=SLS", f"--conf-dir={conf}"]
    for argv in (
        [*sls_argv, f"--output-dir={tmp_path / 'out'}", "-D", f"{LAZY}=true"],
        ["run", str(scenario), "-D", f"{LAZY}=true"],
    ):
        assert main(argv) == 2
        assert error_lines(capsys.readouterr().err) == [f"emu: error: -D: {LAZY_REFUSED}"]
    with pytest.raises(InputError) as replayed:
        api.replay(TRACE, conf_dir=conf, properties={LAZY: True}, output_dir=tmp_path / "o")
    with pytest.raises(InputError) as ran:
        api.run_scenario(scenario, properties={LAZY: True})
    assert [str(replayed.value), str(ran.value)] == [
        f"-D: {LAZY_REFUSED}",
        f"properties: {LAZY_REFUSED}",
    ]
    for command in (["rm", "--web-port=-1", "--port-base=1"], ["cluster", "up", "--nodes=1"]):
        argv = [*command, f"--conf-dir={conf}", "--conf", f"{LAZY}=true"]
        done = subprocess.run(
            [sys.executable, "-m", "emu", *argv], capture_output=True, text=True, check=False
        )
        assert done.returncode == 2, done.stderr
        assert error_lines(done.stderr) == [f"emu: error: --conf: {LAZY_REFUSED}"]
