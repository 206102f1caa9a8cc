"""The contract between emu's Python scheduler and the Java driver, held
together without a JVM: the Java interface (SchedulerBackend.java, read as
text) and the Python Protocols (emu.hadoop.contract) must declare the same
methods, parameters and reply fields; the driver must expose nothing else;
mypy must refuse a call the Protocol lacks; and the decoder must turn
columns into records in the order the scheduler produced them."""

from __future__ import annotations

import array
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from emu.hadoop import classpath as hcp
from emu.hadoop import contract

ROOT = Path(__file__).resolve().parents[2]

JAVA_TYPES = {
    "long": "int",
    "int": "int",
    "boolean": "bool",
    "void": "None",
    "String": "str",
    "String[]": "Sequence[str]",
    "long[]": "Sequence[int]",
    "int[]": "Sequence[int]",
    "boolean[]": "Sequence[bool]",
    "long[][]": "Sequence[Sequence[int]]",
    "Reply": "Reply",
    "Partitions": "Partitions",
    "Capability": "Capability",
}
"""A Java parameter's or return type's Python annotation. A reference type
may also be None in Python (Java does not say which may be null)."""

PRIMITIVE_ARRAYS = ("long[]", "int[]", "boolean[]")
"""Read back from Java, a primitive array is a buffer (copied whole)."""


@dataclass
class JavaSide:
    methods: dict[str, tuple[str, list[tuple[str, str]]]] = field(default_factory=dict)
    """name: (return type, [(parameter type, parameter name)])"""
    classes: dict[str, dict[str, str]] = field(default_factory=dict)
    """nested class: {public field: type}"""


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _split_depth(body: str) -> tuple[str, dict[str, str]]:
    """`body`'s own text (nested blocks left out) and its nested classes' bodies."""
    own: list[str] = []
    nested: dict[str, str] = {}
    depth = 0
    start = block_start = 0
    name: str | None = None
    for i, ch in enumerate(body):
        if ch == "{":
            if depth == 0:
                m = re.search(r"class\s+(\w+)\s*$", body[start:i])
                own.append(body[start:i] + ";")
                block_start, name = i + 1, m.group(1) if m else None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if name is not None:
                    nested[name] = body[block_start:i]
                start = i + 1
    own.append(body[start:])
    return "".join(own), nested


def parse_java(source: str) -> JavaSide:
    """The interface's methods and its nested classes' public fields."""
    text = _strip_comments(source)
    body = text[text.index("{", text.index("interface SchedulerBackend")) + 1 : text.rindex("}")]
    own, nested = _split_depth(body)
    side = JavaSide()
    for decl in own.split(";"):
        m = re.fullmatch(
            r"\s*([\w\[\]]+)\s+(\w+)\s*\(([^)]*)\)\s*(throws\s+[\w\s,]+)?\s*", decl, flags=re.S
        )
        if m is None:
            continue
        params = [tuple(p.split()) for p in m.group(3).split(",") if p.strip()]
        side.methods[m.group(2)] = (m.group(1), [(t, n) for t, n in params])
    for name, cls_body in nested.items():
        fields_text, _ = _split_depth(cls_body)
        side.classes[name] = {
            f: t for t, f in re.findall(r"public\s+([\w\[\]]+)\s+(\w+)\s*(?:=[^;]*)?;", fields_text)
        }
    return side


def _matches(java: str, python: str, field_type: bool = False) -> bool:
    want = "Buffer" if field_type and java in PRIMITIVE_ARRAYS else JAVA_TYPES.get(java)
    if want is None:
        return False
    if java in ("long", "int", "boolean", "void"):
        return python == want
    return python.replace(" | None", "") == want


def differences(java: JavaSide) -> list[str]:
    """Every way the Java declaration and emu.hadoop.contract's differ."""
    out: list[str] = []
    proto = contract.SchedulerBackend
    py_methods = {
        n: inspect.signature(f)
        for n, f in vars(proto).items()
        if inspect.isfunction(f) and not n.startswith("_")
    }
    for name in sorted(set(java.methods) | set(py_methods)):
        if name not in py_methods:
            out.append(f"{name}: in SchedulerBackend.java, not in the Protocol")
            continue
        if name not in java.methods:
            out.append(f"{name}: in the Protocol, not in SchedulerBackend.java")
            continue
        ret, jparams = java.methods[name]
        sig = py_methods[name]
        pparams = [p for p in sig.parameters.values() if p.name != "self"]
        if [n for _, n in jparams] != [p.name for p in pparams]:
            out.append(
                f"{name}: parameters {[n for _, n in jparams]} in Java, "
                f"{[p.name for p in pparams]} in Python"
            )
            continue
        for (jtype, pname), p in zip(jparams, pparams, strict=True):
            if not _matches(jtype, str(p.annotation)):
                out.append(f"{name}({pname}): {jtype} in Java, {p.annotation} in Python")
        if not _matches(ret, str(sig.return_annotation)):
            out.append(f"{name}: returns {ret} in Java, {sig.return_annotation} in Python")
    for cls_name, jfields in sorted(java.classes.items()):
        cls = getattr(contract, cls_name, None)
        if cls is None:
            out.append(f"class {cls_name}: in SchedulerBackend.java, not in emu.hadoop.contract")
            continue
        pfields: dict[str, str] = dict(cls.__annotations__)
        if list(jfields) != list(pfields):
            out.append(f"{cls_name}: fields {list(jfields)} in Java, {list(pfields)} in Python")
            continue
        for fname, jtype in jfields.items():
            if not _matches(jtype, pfields[fname], field_type=True):
                out.append(f"{cls_name}.{fname}: {jtype} in Java, {pfields[fname]} in Python")
    return out


def test_the_two_declarations_agree() -> None:
    java = parse_java(hcp.CONTRACT_SOURCE.read_text())
    assert len(java.methods) >= 20 and set(java.classes) == {"Reply", "Partitions", "Capability"}
    assert differences(java) == []


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("Reply removeNode(long now", "Reply dropNode(long now", "dropNode: in SchedulerBackend"),
        ("Reply addAttempt(long now, String attemptId)", "Reply addAttempt(long now)",
         "addAttempt"),
        ("Reply expireContainer(long now, String cid)", "Reply expireContainer(long now, "
         "String containerId)", "expireContainer: parameters"),
        ("Reply update(long now)", "Reply update(String now)", "update(now): String in Java"),
        ("long updateIntervalMs()", "int[] updateIntervalMs()", "updateIntervalMs: returns"),
        ("public String[] placedNode;", "public long[] placedNode;", "Reply.placedNode"),
        ("public int[] pendingVcores;", "", "Partitions: fields"),
    ],
)  # fmt: skip
def test_a_change_on_one_side_only_fails(old: str, new: str, said: str) -> None:
    """The check above, shown to fail when the Java side changes alone."""
    source = hcp.CONTRACT_SOURCE.read_text()
    assert old in source
    found = differences(parse_java(source.replace(old, new, 1)))
    assert found and any(said in d for d in found), found


def test_a_change_to_the_protocol_alone_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """And when the Python side changes alone: a method renamed in the Protocol."""
    members = {
        ("removeNodes" if n == "removeNode" else n): f
        for n, f in vars(contract.SchedulerBackend).items()
        if inspect.isfunction(f)
    }
    monkeypatch.setattr(contract, "SchedulerBackend", type("SchedulerBackend", (), members))
    found = differences(parse_java(hcp.CONTRACT_SOURCE.read_text()))
    assert sorted(found) == [
        "removeNode: in SchedulerBackend.java, not in the Protocol",
        "removeNodes: in the Protocol, not in SchedulerBackend.java",
    ]


def test_the_driver_exposes_only_the_contract() -> None:
    """Every public method of SchedulerDriver (but its constructor) is one of
    the interface's: nothing the Python side calls escapes the check."""
    text = _strip_comments((hcp.JAVA / "SchedulerDriver.java").read_text())
    lines = text.splitlines()
    public = [
        (i, m.group(1))
        for i, line in enumerate(lines)
        if (m := re.match(r"  public (?:[\w\[\]<>?, ]+ )?(\w+)\(", line))
    ]
    assert public
    for i, name in public:
        if name == "SchedulerDriver":
            continue
        assert lines[i - 1].strip() == "@Override", f"SchedulerDriver.{name} is not the contract's"


def test_mypy_refuses_a_call_the_protocol_lacks(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "caller.py"
    snippet.write_text(
        "from emu.hadoop.contract import SchedulerBackend\n\n\n"
        "def heartbeat(driver: SchedulerBackend) -> None:\n"
        "    driver.nodeUpdate(0, 'n1', None, None, None, None)\n"
        "    driver.nodeHeartbeat(0, 'n1')\n"
        "    driver.removeNode(0)\n"
    )
    stdout, _, status = api.run(
        [
            str(snippet),
            "--config-file=",
            "--no-incremental",
            "--follow-imports=silent",
            "--python-version=3.11",
        ]
    )
    assert status == 1, stdout
    assert '"SchedulerBackend" has no attribute "nodeHeartbeat"' in stdout
    assert 'Missing positional argument "emuId" in call to "removeNode"' in stdout
    assert stdout.count("error:") == 2, stdout


class FakeReply:
    """A reply as JPype hands it over: strings as sequences, numbers as buffers."""

    def __init__(self, order: str, **columns: object) -> None:
        self.order = order
        self.refusal: str | None = None
        for name, kind in contract.Reply.__annotations__.items():
            if name not in ("order", "refusal"):
                default: object = array.array("q") if kind == "Buffer" else []
                setattr(self, name, columns.get(name, default))
        self.headroomMemory = columns.get("headroomMemory", 0)
        self.headroomVcores = columns.get("headroomVcores", 0)


def test_decode_keeps_the_schedulers_order() -> None:
    reply = FakeReply(
        "PFPCAHX",
        placedContainer=["c1", "c2"],
        placedAttempt=["a1", "a2"],
        placedNode=["n1", "n2"],
        placedMemory=array.array("q", [1024, 2048]),
        placedVcores=array.array("i", [1, 2]),
        placedExtraNames=["gpu"],
        placedExtraValues=array.array("q", [0, 3]),
        placedPriority=array.array("i", [0, 20]),
        placedLocality=["OFF_SWITCH", "NODE_LOCAL"],
        placedAm=array.array("b", [1, 0]),
        finishedContainer=["c0"],
        finishedExitStatus=array.array("i", [-102]),
        finishedDiagnostics=["Container preempted by scheduler"],
        cleanupNode=["n3"],
        cleanupContainer=["c9"],
        acceptedApp=["app1"],
        acceptedQueue=["root.a"],
        headroomMemory=4096,
        headroomVcores=4,
        preempt=["c5"],
    )
    assert contract.decode(reply) == [
        contract.Placed("c1", "a1", "n1", 1024, 1, {"gpu": 0}, 0, "OFF_SWITCH", True),
        contract.Finished("c0", -102, "Container preempted by scheduler"),
        contract.Placed("c2", "a2", "n2", 2048, 2, {"gpu": 3}, 20, "NODE_LOCAL", False),
        contract.CleanUp("n3", "c9"),
        contract.Accepted("app1", "root.a"),
        contract.Headroom(4096, 4),
        contract.Preempt("c5"),
    ]
    assert contract.decode(None) == []
    refused = FakeReply("")
    refused.refusal = "no such label"
    assert contract.decode(refused) == [contract.Refused("no such label")]
