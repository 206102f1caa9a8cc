"""`emu admin`: the operator's side of a running RM, as `yarn rmadmin`.

    emu admin refresh-queues --rm HOST [--file capacity-scheduler.xml] [-D NAME=VALUE ...]
    emu admin decommission --rm HOST NODE
    emu admin update-node-resource --rm HOST NODE --memory-mb M --vcores V
    emu admin add-node-labels --rm HOST "gpu(exclusive=true),spare(exclusive=false)"
    emu admin remove-node-labels --rm HOST "gpu,spare"
    emu admin replace-labels-on-node --rm HOST "node1=gpu node2:8041=spare node3="
        [--fail-on-unknown-nodes]

`refresh-queues` without `--file` or `-D` has the RM re-read its own
configuration files from disk, as `yarn rmadmin -refreshQueues` does (the
CapacityScheduler its capacity-scheduler.xml, the FairScheduler its
allocation file). `--file` sends either a Hadoop XML file's properties (e.g.
an edited capacity-scheduler.xml, with `-D` overrides) or, for a
FairScheduler, an allocation file (fair-scheduler.xml). The RM applies them
or refuses with the reason and keeps its running configuration. Exit 0 when
applied, 1 when refused or unreachable, 2 for a bad file.

The node-label commands take `yarn rmadmin`'s arguments (-addToClusterNodeLabels,
-removeFromClusterNodeLabels, -replaceLabelsOnNode [-failOnUnknownNodes]) and
need yarn.node-labels.enabled=true on the RM. A node named without a port
means every NM on that host; `node=` takes its label off. The RM refuses as
Hadoop's does (a label must exist before it goes on a node, one label per
node, a label a queue may use cannot be removed); exit 2 for an argument
that does not parse.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from xml.etree import ElementTree

from emu import security
from emu.config.hadoop_xml import load_xml
from emu.errors import InputError
from emu.processes import common as C
from emu.rm import node_labels

T = TypeVar("T")


def add_parser(sub: argparse._SubParsersAction) -> None:
    admin = sub.add_parser(
        "admin",
        help="administer a running RM (refresh queues, decommission, node resources, node labels)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    asub = admin.add_subparsers(dest="admin_command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--rm", required=True, metavar="HOST[:PORT_BASE]", help="the ResourceManager"
        )
        p.add_argument(
            "--keys", metavar="DIR", help="CURVE keys directory (default: no encryption)"
        )
        p.add_argument(
            "--timeout", type=float, default=10.0, help="seconds to wait for the RM (default 10)"
        )

    refresh = asub.add_parser("refresh-queues", help="apply queue configuration changes")
    common(refresh)
    refresh.add_argument(
        "--file",
        metavar="XML",
        help="Hadoop XML with the new properties (default: the RM re-reads its own "
        "configuration files, as yarn rmadmin -refreshQueues does)",
    )
    refresh.add_argument(
        "-D",
        dest="overrides",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a property to change (repeatable; default: none)",
    )
    refresh.set_defaults(func=C.command(refresh_queues))

    decom = asub.add_parser("decommission", help="take a node out of service")
    common(decom)
    decom.add_argument("node", help="node id (its host name)")
    decom.set_defaults(func=C.command(decommission))

    upd = asub.add_parser("update-node-resource", help="change a node's total resource")
    common(upd)
    upd.add_argument("node", help="node id (its host name)")
    upd.add_argument("--memory-mb", type=int, required=True, help="the node's new memory (MB)")
    upd.add_argument("--vcores", type=int, required=True, help="the node's new vcores")
    upd.set_defaults(func=C.command(update_node_resource))

    add = asub.add_parser("add-node-labels", help="add labels to the cluster")
    common(add)
    add.add_argument("labels", help='e.g. "gpu(exclusive=true),spare(exclusive=false)"')
    add.set_defaults(func=C.command(add_node_labels))

    rem = asub.add_parser("remove-node-labels", help="remove labels from the cluster")
    common(rem)
    rem.add_argument("labels", help='e.g. "gpu,spare"')
    rem.set_defaults(func=C.command(remove_node_labels))

    rep = asub.add_parser("replace-labels-on-node", help="put labels on nodes")
    common(rep)
    rep.add_argument("mapping", help='e.g. "node1=gpu node2:8041=spare node3="')
    rep.add_argument(
        "--fail-on-unknown-nodes",
        "-failOnUnknownNodes",
        dest="fail_on_unknown",
        action="store_true",
        help="refuse if a node named has never registered (default: accept)",
    )
    rep.set_defaults(func=C.command(replace_labels_on_node))


def _call(args: argparse.Namespace, mtype: str, **fields: object) -> dict:
    rm = C.rm_addresses(args.rm)
    keys = security.load(args.keys, serving=False) if args.keys else None
    with C.SyncClient(rm.admin, keys.client if keys else None) as client:
        return client.call(mtype, timeout=args.timeout, **fields)


def _report(reply: dict, done: str) -> int:
    if reply["type"] == "error":
        C.warn(f"error: refused: {reply['code']}: {reply['message']}")
        return 1
    if not reply.get("ok", True):
        C.warn(f"error: refused: {reply.get('reason') or 'no reason given'}")
        return 1
    C.say(done)
    return 0


def refresh_queues(args: argparse.Namespace) -> int:
    """Send properties (a Hadoop configuration file, -D) or a FairScheduler
    allocation file; with neither, the RM re-reads its own files."""
    properties: dict[str, str] = {}
    fields: dict[str, object] = {}
    done = "queues refreshed from the RM's configuration files"
    if args.file and _root_element(args.file) == "allocations":
        if args.overrides:
            raise InputError("-D", None, "cannot be combined with an allocation file")
        fields["allocations"] = Path(args.file).read_text(encoding="utf-8")
        done = f"queues refreshed from {args.file}"
    elif args.file:
        conf = load_xml(args.file)
        properties.update({name: conf.get(name) or "" for name in conf})
    properties.update(C.parse_overrides(args.overrides, "-D"))
    if properties:
        fields["properties"] = properties
        done = f"queues refreshed ({len(properties)} properties)"
    reply = _call(args, "refresh_queues", **fields)
    return _report(reply, done)


def _root_element(path: str) -> str | None:
    """The name of an XML file's root element (None if it is not XML);
    load_xml reports the details of a broken file."""
    try:
        for _, element in ElementTree.iterparse(path, events=("start",)):
            return element.tag
    except (ElementTree.ParseError, OSError):
        return None
    return None


def decommission(args: argparse.Namespace) -> int:
    reply = _call(args, "decommission_node", node_id=args.node)
    return _report(reply, f"{args.node} decommissioned")


def update_node_resource(args: argparse.Namespace) -> int:
    resource = {"memory-mb": args.memory_mb, "vcores": args.vcores}
    reply = _call(args, "update_node_resource", node_id=args.node, resource=resource)
    return _report(reply, f"{args.node} now has {args.memory_mb} MB, {args.vcores} vcores")


def _parsed(parse: Callable[[str], T], text: str, what: str) -> T:
    try:
        return parse(text)
    except ValueError as e:
        raise InputError(what, None, str(e)) from None


def add_node_labels(args: argparse.Namespace) -> int:
    labels = _parsed(node_labels.parse_add, args.labels, "labels")
    reply = _call(args, "add_node_labels", labels=[list(p) for p in labels])
    return _report(reply, f"cluster node labels added: {', '.join(n for n, _ in labels)}")


def remove_node_labels(args: argparse.Namespace) -> int:
    names = _parsed(node_labels.parse_names, args.labels, "labels")
    reply = _call(args, "remove_node_labels", names=names)
    return _report(reply, f"cluster node labels removed: {', '.join(names)}")


def replace_labels_on_node(args: argparse.Namespace) -> int:
    mapping = _parsed(node_labels.parse_mapping, args.mapping, "mapping")
    reply = _call(
        args,
        "replace_labels_on_node",
        mapping=[list(p) for p in mapping],
        fail_on_unknown=args.fail_on_unknown,
    )
    shown = " ".join(f"{n}={label}" for n, label in mapping)
    return _report(reply, f"labels replaced: {shown}")
