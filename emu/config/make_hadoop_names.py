"""Regenerate `emu/config/hadoop_names.py` from Hadoop's own jars.

    python -m emu.config.make_hadoop_names [M2_REPOSITORY]

Reads, from the Maven repository (default `~/.m2/repository`) of a Hadoop
3.4.2 build: `yarn-default.xml` and `core-default.xml`, and
`mapred-default.xml` and `hdfs-default.xml` (their properties often sit in
the same files, and must not look like misspelt YARN ones), and the `String` constants of
CapacitySchedulerConfiguration, FairSchedulerConfiguration,
SLSConfiguration and the invariant checkers (their -sources jars). Constants that are whole property
names join the known names; CapacitySchedulerConfiguration's constants that
are queue-relative keys (`maximum-capacity`, `accessible-node-labels`) join
the known queue keys. emu reads only the generated module, so a run needs
neither Java nor Maven.
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree

VERSION = "3.4.2"
OUT = Path(__file__).resolve().parent / "hadoop_names.py"
_JARS = {
    "yarn-default.xml": "hadoop-yarn-common",
    "core-default.xml": "hadoop-common",
    "mapred-default.xml": "hadoop-mapreduce-client-core",
    "hdfs-default.xml": "hadoop-hdfs",
}
_SOURCES = {
    "CapacitySchedulerConfiguration": "hadoop-yarn-server-resourcemanager",
    "FairSchedulerConfiguration": "hadoop-yarn-server-resourcemanager",
    "SLSConfiguration": "hadoop-sls",
    "InvariantsChecker": "hadoop-yarn-server-resourcemanager",
    "MetricsInvariantChecker": "hadoop-yarn-server-resourcemanager",
}
_CONSTANT = re.compile(r"static\s+final\s+String\s+(\w+)\s*=\s*([^;]+);", re.S)
_TERM = re.compile(r'"((?:[^"\\]|\\.)*)"|([A-Za-z_][\w.]*)')
# CapacitySchedulerConfiguration constants that are values, not keys.
_VALUES = frozenset(
    {
        "capacity-scheduler.xml",
        "root",
        "default",
        "fifo",
        "fair",
        "fifo-with-partitions",
        "fifo-for-pending-apps",
        "utilization",
        "priority-utilization",
        "legacy",
        "json",
        "userlimit_first",
        "priority_first",
        "w",
    }
)
# Queue keys Hadoop composes at run time rather than holding as constants:
# the ACLs ("acl_" + the QueueACL, ReservationACL or AccessType name), the
# queue priority, the fair ordering policy's option, and the per-queue
# intra-queue preemption switch.
_COMPOSED_QUEUE_KEYS = frozenset(
    {
        "acl_submit_applications",
        "acl_administer_queue",
        "acl_application_max_priority",
        "acl_administer_reservations",
        "acl_list_reservations",
        "acl_submit_reservations",
        "priority",
        "ordering-policy.fair.enable-size-based-weight",
        "intra-queue-preemption.disable_preemption",
    }
)
_KEY = re.compile(r"^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$", re.I)


def _jar(repo: Path, artifact: str, kind: str = "") -> Path:
    suffix = f"-{kind}" if kind else ""
    return repo / "org/apache/hadoop" / artifact / VERSION / f"{artifact}-{VERSION}{suffix}.jar"


def default_names(repo: Path) -> set[str]:
    """The property names of the `_JARS` default files."""
    names = set()
    for resource, artifact in _JARS.items():
        with zipfile.ZipFile(_jar(repo, artifact)) as z:
            root = ElementTree.fromstring(z.read(resource))
        for prop in root.iter("property"):
            name = (prop.findtext("name") or "").strip()
            if name:
                names.add(name)
    return names


# YarnConfiguration's constants the classes above build on (its sources
# jar is not published, and yarn-default.xml holds the names themselves).
_YARN_CONFIGURATION = {
    "YARN_PREFIX": "yarn.",
    "QUEUE_PLACEMENT_RULES": "yarn.scheduler.queue-placement-rules",
}


def constants(source: str) -> dict[str, str]:
    """A class's String constants whose value is a concatenation of literals
    and other constants of the class (or of `_YARN_CONFIGURATION`), evaluated."""
    exprs = {m.group(1): m.group(2) for m in _CONSTANT.finditer(source)}
    values: dict[str, str] = dict(_YARN_CONFIGURATION)
    for _ in range(len(exprs)):
        for name, expr in exprs.items():
            if name in values:
                continue
            parts = []
            for m in _TERM.finditer(expr):
                if m.group(1) is not None:
                    parts.append(m.group(1))
                    continue
                ref = m.group(2).rsplit(".", 1)[-1]
                if ref not in values:
                    break
                parts.append(values[ref])
            else:
                values[name] = "".join(parts)
    return values


def class_constants(repo: Path, cls: str, artifact: str) -> dict[str, str]:
    with zipfile.ZipFile(_jar(repo, artifact, "sources")) as z:
        path = next(n for n in z.namelist() if n.endswith(f"/{cls}.java"))
        return constants(z.read(path).decode())


def collect(repo: Path) -> tuple[set[str], set[str]]:
    """(known property names, known queue-relative keys of the CapacityScheduler)."""
    names = default_names(repo)
    queue_keys = set(_COMPOSED_QUEUE_KEYS)
    for cls, artifact in _SOURCES.items():
        for value in class_constants(repo, cls, artifact).values():
            if not _KEY.match(value) or value.startswith("org."):
                continue
            if value.startswith(("yarn.", "hadoop.")):
                names.add(value)
            elif cls == "CapacitySchedulerConfiguration" and value not in _VALUES:
                queue_keys.add(value)
    return names, queue_keys


def render(names: set[str], queue_keys: set[str]) -> str:
    lines = [
        f'"""Property names Hadoop {VERSION} knows (generated by',
        "emu/config/make_hadoop_names.py from Hadoop's jars; do not edit).",
        "",
        "`NAMES`: yarn-, core-, mapred- and hdfs-default.xml and the constants of",
        "CapacitySchedulerConfiguration, FairSchedulerConfiguration,",
        "SLSConfiguration and the invariant checkers that are whole names.",
        "`QUEUE_KEYS`: the CapacityScheduler's keys that follow a queue path",
        '(`yarn.scheduler.capacity.<queue path>.<key>`)."""',
        "",
        "NAMES = frozenset(",
        "    {",
        *(f'        "{n}",' for n in sorted(names)),
        "    }",
        ")",
        "QUEUE_KEYS = frozenset(",
        "    {",
        *(f'        "{k}",' for k in sorted(queue_keys)),
        "    }",
        ")",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    repo = Path(argv[0]) if argv else Path.home() / ".m2" / "repository"
    names, queue_keys = collect(repo)
    OUT.write_text(render(names, queue_keys))
    print(f"{OUT}: {len(names)} names, {len(queue_keys)} queue keys")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
