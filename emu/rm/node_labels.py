"""The RM's node labels (RMNodeLabelsManager over CommonNodeLabelsManager):
the cluster's labels and their exclusivity, which host or node carries
which, and the checks and wording of Hadoop's refusals when an operator
changes them (`yarn rmadmin -addToClusterNodeLabels`,
`-removeFromClusterNodeLabels`, `-replaceLabelsOnNode`).

A label is put on a host (`node1=gpu`: every NM on it, now and later) or on
one NM (`node1:8041=gpu`); an NM's own label, when it has one, wins over its
host's, as in Hadoop. Labels a topology file gives a node seed the store
when the node registers (Hadoop's centralized store holds them from the
start). Changes reach the scheduler as NODE_LABELS_UPDATE, with each
changed registered node's new label ("": the default partition).

The parsing helpers take `yarn rmadmin`'s argument syntax
(YarnClientUtils.buildNodeLabelsFromStr, RMAdminCLI's
buildNodeLabelNamesFromStr and buildNodeLabelsMapFromStr); they raise
ValueError with Hadoop's message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from emu.rm.scheduler.javahash import hash_order, node_id_hash, string_hash

ENABLED = "yarn.node-labels.enabled"
NOT_ENABLED = f"Node-label-based scheduling is disabled. Please check {ENABLED}"
NO_LABELS = "No cluster node-labels are specified"
NO_MAPPINGS = "No node-to-labels mappings are specified"
ADD_FORMAT = (
    "Input format for adding node-labels is not correct, it should be "
    "labelName1[(exclusive=true/false)],LabelName2[] .."
)
_LABEL = re.compile(r"[0-9a-zA-Z][0-9a-zA-Z\-_]*")
_MAX_LENGTH = 255


def parse_add(text: str) -> list[tuple[str, bool]]:
    """`label1(exclusive=true),label2(exclusive=false),label3` as
    (name, exclusive) pairs; exclusivity defaults to true."""
    out: list[tuple[str, bool]] = []
    for p in text.split(","):
        if not p.strip():
            continue
        name, exclusive = p, True
        left, right = p.find("("), p.find(")")
        if (left == -1) != (right == -1):
            raise ValueError(ADD_FORMAT)
        if left > 0 and right > 0:
            if left > right:
                raise ValueError(ADD_FORMAT)
            prop = p[left + 1 : right]
            if "=" in prop:
                key, value = prop.split("=", 1)
                if key.strip() != "exclusive" or value.strip() not in ("true", "false"):
                    raise ValueError(ADD_FORMAT)
                exclusive = value.strip() == "true"
            elif prop.strip():
                raise ValueError(ADD_FORMAT)
        if "(" in name:
            name = name[: name.index("(")].strip()
        out.append((name.strip(), exclusive))
    if not out:
        raise ValueError(NO_LABELS)
    return out


def parse_names(text: str) -> list[str]:
    """`label1,label2`: the label names, each once."""
    names = list(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))
    if not names:
        raise ValueError(NO_LABELS)
    return names


def parse_mapping(text: str) -> list[tuple[str, str]]:
    """`node1[:port]=label1 node2[:port]=label2 node3=` as (node, label)
    pairs, label "" to take a node's label off; one label per node at most."""
    found: dict[str, list[str]] = {}
    for entry in re.split(r"[ \n]", text):
        entry = entry.strip()
        if not entry or entry.startswith("#"):
            continue
        splits = entry.split("=")
        node, start = splits[0], 0
        if len(splits) == 2:
            splits = splits[1].split(",")
        elif "," in node:
            splits = entry.split(",")
            node, start = splits[0], 1
        else:
            splits = []
        if not node.strip():
            raise ValueError("node name cannot be empty")
        node = _node_name(node.strip())
        labels = list(dict.fromkeys(s.strip() for s in splits[start:] if s.strip()))
        if len(labels) > 1:
            raise ValueError(
                f"{len(labels)} labels specified on host={node}, please note that we do "
                "not support specifying multiple labels on a single host for now."
            )
        found[node] = labels
    if not found:
        raise ValueError(NO_MAPPINGS)
    return [(node, labels[0] if labels else "") for node, labels in found.items()]


def _node_name(text: str) -> str:
    """A node named as ConverterUtils.toNodeIdWithDefaultPort reads it:
    `host` or `host:port` (a port that is not a number is refused)."""
    if ":" not in text:
        return text
    host, port = text.rsplit(":", 1)
    if not port.isdigit() or not host:
        raise ValueError(f"Invalid NodeId [{text}]. Expected host:port")
    return f"{host}:{int(port)}"


def split_node(node: str) -> tuple[str, int]:
    """(host, port) of `host[:port]`; port 0 (Hadoop's wildcard) without one."""
    if ":" in node:
        host, port = node.rsplit(":", 1)
        if port.isdigit():
            return host, int(port)
    return node, 0


def spec_name(spec: str) -> tuple[str, bool]:
    """A topology file's label spec (`gpu`, `spare(exclusive=false)`) as
    (name, exclusive)."""
    name = spec.split("(", 1)[0].strip()
    return name, "exclusive=false" not in spec.replace(" ", "").lower()


class NodeLabels:
    """The label store and the node-to-label mapping."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.exclusive: dict[str, bool] = {}
        """The cluster's labels (addToClusterNodeLabels), by name."""
        self.host_label: dict[str, str] = {}
        """A label put on a host ("" for none), for all its NMs."""
        self.node_label: dict[str, str] = {}
        """A label put on one NM (a node id), winning over its host's."""
        self.hosts: dict[str, str] = {}
        """Each node ever registered: its host, by node id."""
        self.active: set[str] = set()
        """The registered nodes."""
        self.current: dict[str, str] = {}
        """Each registered labelled node's label."""

    # --- registration ---------------------------------------------------------------
    def registered(self, node_id: str, host: str, labels: tuple[str, ...]) -> tuple[str, ...]:
        """A node joins: a label its topology gives seeds the store (the
        label and its exclusivity, the node's mapping) unless an operator
        already mapped the node or its host; returns the labels the node
        has (the topology's spec unchanged when it stands)."""
        self.hosts[node_id] = host
        self.active.add(node_id)
        if labels and node_id not in self.node_label and host not in self.host_label:
            # Seeded where Hadoop's backend puts it: on the host when the
            # node is named by its host alone, else on the NM.
            name, exclusive = spec_name(labels[0])
            self.exclusive.setdefault(name, exclusive)
            if split_node(node_id)[1] == 0:
                self.host_label[host] = name
            else:
                self.node_label[node_id] = name
            self.current[node_id] = name
            return labels
        label = self.label_of(node_id)
        if not label:
            return ()
        self.current[node_id] = label
        # As a topology spec, so whoever reads the node's labels (a
        # scheduler seeing the label first) learns its exclusivity.
        return (label if self.exclusive.get(label, True) else f"{label}(exclusive=false)",)

    def unregistered(self, node_id: str) -> None:
        """A node leaves; it stays known (for -failOnUnknownNodes)."""
        self.active.discard(node_id)
        self.current.pop(node_id, None)

    def restarted(self) -> NodeLabels:
        """The store as a restarted RM reads it back (FileSystemNodeLabelsStore):
        the labels and mappings stay; no node is registered yet."""
        self.active.clear()
        self.current.clear()
        return self

    def label_of(self, node_id: str) -> str:
        label = self.node_label.get(node_id)
        if label is not None:
            return label
        return self.host_label.get(self.hosts.get(node_id, node_id), "")

    # --- admin operations -------------------------------------------------------------
    def add(self, labels: list[tuple[str, bool]]) -> str | None:
        """addToClusterNodeLabels: the refusal, or None when added (a label
        already known with the same exclusivity is left as it is)."""
        if not self.enabled:
            return NOT_ENABLED
        labels = [(n.strip(), e) for n, e in labels]
        clash = [(n, e) for n, e in labels if n in self.exclusive and self.exclusive[n] != e]
        if clash:
            shown = ",".join(f"<{n}:exclusivity={str(e).lower()}>" for n, e in clash)
            return f"Exclusivity cannot be modified for an existing label with : {shown}"
        for name, _ in labels:
            if not name or len(name) > _MAX_LENGTH:
                return f"label added is empty or exceeds {_MAX_LENGTH} character(s)"
            if not _LABEL.fullmatch(name.strip()):
                return (
                    "label name should only contains {0-9, a-z, A-Z, -, _} and should not "
                    f"started with {{-,_}}, now it is={name.strip()}"
                )
        for name, exclusive in labels:
            self.exclusive.setdefault(name, exclusive)
        return None

    def remove(
        self, names: list[str], queue_using: Callable[[str], str | None]
    ) -> tuple[str | None, dict[str, str]]:
        """removeFromClusterNodeLabels: (the refusal, None) or (None, each
        registered node that loses its label, now in the default partition).
        `queue_using` names a queue whose accessible labels hold a label."""
        names = _java_set(n.strip() for n in names)
        for name in names:
            queue = queue_using(name)
            if queue is not None:
                return (
                    f"Cannot remove label={name}, because queue={queue} is using this label. "
                    "Please remove label on queue before remove the label"
                ), {}
        if not self.enabled:
            return NOT_ENABLED, {}
        for name in names:
            if not name:
                return "Label to be removed is null or empty", {}
            if name not in self.exclusive:
                return (
                    f"Node label={name} to be removed doesn't existed in cluster node "
                    "labels collection."
                ), {}
        gone = set(names)
        for table in (self.host_label, self.node_label):
            for key, label in table.items():
                if label in gone:
                    table[key] = ""
        for name in names:
            del self.exclusive[name]
        return None, self._changed()

    def unknown_nodes(self, mapping: list[tuple[str, str]]) -> str | None:
        """AdminService's -failOnUnknownNodes check: the refusal naming the
        nodes never registered (a `host` entry: no NM on that host)."""
        # In the order of the request's HashMap (all its entries) of NodeIds.
        ordered = _java_node_set(split_node(node) for node, _ in mapping)
        unknown = [(h, p) for h, p in ordered if not self._known(f"{h}:{p}" if p else h)]
        if not unknown:
            return None
        shown = ", ".join(f"{h}:{p}" for h, p in unknown)
        return f"Failed to replace labels as there are unknown nodes:[{shown}]"

    def replace(self, mapping: list[tuple[str, str]]) -> tuple[str | None, dict[str, str]]:
        """replaceLabelsOnNode: (the refusal, {}) or (None, each registered
        node whose label changed). A `host` entry is for every NM on the
        host, now and later; `host:port` for that NM alone."""
        effective = [(n, label) for n, label in mapping if self._modifies(n, label)]
        if not effective:
            return None, {}
        if not self.enabled:
            return NOT_ENABLED, {}
        for _, label in effective:
            if label and label.strip() not in self.exclusive:
                return (
                    "Not all labels being replaced contained by known label collections, "
                    f"please check, new labels=[{label.strip()}]"
                ), {}
        for node, label in effective:
            host, port = split_node(node)
            if port == 0:
                self.host_label[host] = label.strip()
                for nid in list(self.node_label):
                    if self.hosts.get(nid, split_node(nid)[0]) == host:
                        del self.node_label[nid]
            else:
                self.node_label[node] = label.strip()
        return None, self._changed()

    def _known(self, node: str) -> bool:
        """An active or inactive node (`host`: any NM on the host)."""
        host, port = split_node(node)
        if port:
            return node in self.hosts
        return host in self.hosts.values() or host in self.hosts

    def _modifies(self, node: str, label: str) -> bool:
        """getModifiedNodeLabelsMappings: whether the entry changes what
        the host (or the NM) has; an unknown host always does."""
        host, port = split_node(node)
        if host not in self.hosts.values() and host not in self.host_label:
            return True
        want = label.strip()
        if port == 0:
            return self.host_label.get(host, "") != want
        if node not in self.node_label:
            return True
        return self.node_label[node] != want

    def _changed(self) -> dict[str, str]:
        """Each registered node whose label is not what it was."""
        changed: dict[str, str] = {}
        for node_id in sorted(self.active):
            label = self.label_of(node_id)
            if label != self.current.get(node_id, ""):
                changed[node_id] = label
                if label:
                    self.current[node_id] = label
                else:
                    self.current.pop(node_id, None)
        return changed

    # --- reports ---------------------------------------------------------------------
    def cluster_labels(self) -> list[tuple[str, bool]]:
        return sorted(self.exclusive.items())

    def nodes_of(self) -> dict[str, list[str]]:
        """Each label's registered nodes."""
        out: dict[str, list[str]] = {}
        for node_id, label in sorted(self.current.items()):
            out.setdefault(label, []).append(node_id)
        return out


def _java_set(items: Iterable[str]) -> list[str]:
    """Strings in the order a HashSet of them iterates."""
    unique = list(dict.fromkeys(items))
    return hash_order(unique, string_hash, len(unique))


def _java_node_set(items: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """NodeIds in the order a HashMap keyed by them iterates."""
    unique = list(dict.fromkeys(items))
    return hash_order(unique, lambda n: node_id_hash(n[0], n[1]), len(unique))
