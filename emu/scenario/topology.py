"""The cluster topology file (`--nodes`), read as SLS's `parseNodesFromNodeFile`.

A stream of concatenated JSON objects, one per rack:

    {"rack": "rack1",
     "nodes": [{"node": "node1", "memory-mb": 2048, "vcores": 6},
               {"node": "node3", "labels": "label1, label2(exclusive=false)"}]}

- The rack name gets a leading `/` (`rack1` -> `/rack1`); a rack object
  without `rack` is `/default-rack`.
- A node's resource amounts sit directly on the node (`memory-mb`, `vcores`
  and any other resource type name), each over the NodeManager default
  (`yarn.sls.nm.memory.mb` / `vcores`); a node without any keeps
  `resource=None`, meaning the cluster default.
- `labels` is YARN's node-label list, `name[(exclusive=true|false)]` separated
  by commas; NodeSpec keeps each name, with `(exclusive=false)` after a
  non-exclusive one.
- A node entry without `node` is named `null`, exactly as SLS names it (Java
  string concatenation of a missing value): SLS's own test file `nodes.json`
  has such an entry, and SLS runs it as a node, so the cluster size matches.

The same host listed twice with the same rack and size is one node, as SLS
keeps a set, with a warning naming it (a copy-paste slip drops a node that
was meant); listed twice with another size or on another rack, it is an
error.
"""

from __future__ import annotations

import os
import re

from emu.errors import warn_input
from emu.resources import MEMORY, VCORES, Resource
from emu.scenario.sls import JsonFields, iter_json_objects
from emu.workload import NodeSpec

_LABEL = re.compile(r"^\s*([^()]+?)\s*(?:\(\s*exclusive\s*=\s*(true|false)\s*\))?\s*$", re.I)
_NODE_KEYS = frozenset({"node", "labels"})
NON_EXCLUSIVE = "(exclusive=false)"
"""How a node's label list marks a non-exclusive label (`name(exclusive=false)`,
as SLS writes it and Hadoop's backend reads it); an exclusive one is its name."""


def read_nodes_file(
    path: str | os.PathLike[str], *, nm_default: Resource | None = None
) -> list[NodeSpec]:
    """The nodes of a topology file, in file order.

    `nm_default` is the NodeManager size that per-node amounts override
    (SlsSettings.nm_resource; SLS's defaults 10240 MB / 10 vcores if None).
    """
    base = nm_default if nm_default is not None else Resource(10240, 10)
    file = os.fspath(path)
    nodes: dict[str, NodeSpec] = {}
    for number, (line, obj) in enumerate(iter_json_objects(file), start=1):
        rack_fields = JsonFields(file, line, obj, f"rack entry {number}")
        rack = "/" + rack_fields.string("rack", "default-rack").strip().strip("/")
        node_list = rack_fields.array("nodes")
        if node_list is None:
            raise rack_fields.error("nodes", "missing: a rack entry lists its nodes")
        for i, raw_node in enumerate(node_list, start=1):
            node = rack_fields.child(raw_node, f"node {i}")
            spec = NodeSpec(
                host=node.string("node", "null"),
                rack=rack,
                resource=_resource(node, base),
                labels=_labels(node),
            )
            known = nodes.get(spec.host)
            if known is None:
                nodes[spec.host] = spec
            elif known.rack != rack:
                raise node.error("node", f"host {spec.host!r} is already on rack {known.rack}")
            elif known != spec:
                raise node.error(
                    "node", f"host {spec.host!r} is listed twice on rack {rack} with other amounts"
                )
            else:
                warn_input(
                    file,
                    node.line,
                    f"{node.what}: host {spec.host!r} is listed twice on rack {rack}; "
                    "it is one node (as SLS keeps it)",
                )
    return list(nodes.values())


def _resource(node: JsonFields, base: Resource) -> Resource | None:
    amounts = {
        key: node.integer(key, 0) for key in node.obj if key not in _NODE_KEYS and node.has(key)
    }
    if not amounts:
        return None
    memory = amounts.pop(MEMORY, base.memory)
    vcores = amounts.pop(VCORES, base.vcores)
    res = Resource(memory, vcores, {**dict(base.extra), **amounts})
    if res.any_negative():
        raise node.error(None, f"negative resource {res!r}")
    if res.memory == 0 or res.vcores == 0:
        raise node.error(
            MEMORY if res.memory == 0 else VCORES, f"a node needs memory and vcores, got {res!r}"
        )
    return res


def _labels(node: JsonFields) -> tuple[str, ...]:
    try:
        return parse_labels(node.string("labels", ""))
    except ValueError as e:
        raise node.error("labels", str(e)) from None


def parse_labels(text: str) -> tuple[str, ...]:
    """A node's label list, `name[(exclusive=true|false)]` separated by
    commas, as NodeSpec keeps it; ValueError names a malformed label."""
    names = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = _LABEL.match(part)
        if m is None:
            raise ValueError(
                f"bad label {part.strip()!r}: expected name or name(exclusive=true|false)"
            )
        exclusive = (m.group(2) or "true").lower() == "true"
        names.append(m.group(1) if exclusive else f"{m.group(1)}{NON_EXCLUSIVE}")
    return tuple(names)
