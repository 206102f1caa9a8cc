"""The RM's node-label store (RMNodeLabelsManager's semantics): a host entry
labels every NM on the host and wins over an NM's own label only until the
NM is labelled again; an entry that changes nothing is no change (not even
refused with labels disabled); Hadoop's checks come in Hadoop's order."""

from __future__ import annotations

from emu.rm.node_labels import NOT_ENABLED, NodeLabels


def _store() -> NodeLabels:
    s = NodeLabels(enabled=True)
    for nm in ("h:8041", "h:8042", "g:8041"):
        assert s.registered(nm, nm.split(":")[0], ()) == ()
    assert s.add([("gpu", True), ("spare", False)]) is None
    return s


def test_a_host_entry_labels_all_its_nms_and_a_port_entry_one():
    s = _store()
    assert s.replace([("h", "gpu")]) == (None, {"h:8041": "gpu", "h:8042": "gpu"})
    assert s.replace([("h:8042", "spare")]) == (None, {"h:8042": "spare"})
    assert s.label_of("h:8041") == "gpu" and s.label_of("h:8042") == "spare"
    # The host again: its NMs' own labels give way.
    assert s.replace([("h", "")]) == (None, {"h:8041": "", "h:8042": ""})
    assert s.nodes_of() == {}


def test_a_registering_nm_takes_its_hosts_label_and_topology_labels_seed_the_store():
    s = _store()
    assert s.replace([("k", "spare")]) == (None, {})  # no NM on k yet
    assert s.registered("k:1", "k", ()) == ("spare(exclusive=false)",)
    fresh = NodeLabels(enabled=True)
    assert fresh.registered("n1", "n1", ("fpga(exclusive=false)",)) == ("fpga(exclusive=false)",)
    assert fresh.exclusive == {"fpga": False} and fresh.nodes_of() == {"fpga": ["n1"]}


def test_refusals_in_hadoops_order_and_words():
    s = _store()
    assert s.replace([("h", "gpu"), ("g", "nope")])[0] == (
        "Not all labels being replaced contained by known label collections, "
        "please check, new labels=[nope]"
    )
    assert s.label_of("h:8041") == ""  # nothing applied
    # A host with an NM is known; an NM port that never registered is not
    # (listed in the order of Hadoop's HashMap of NodeIds).
    assert s.unknown_nodes([("h", "gpu"), ("x:1", ""), ("h:9", "")]) == (
        "Failed to replace labels as there are unknown nodes:[x:1, h:9]"
    )
    assert s.unknown_nodes([("h", "gpu"), ("h:8042", "")]) is None
    assert s.add([("a b", True)]) == (
        "label name should only contains {0-9, a-z, A-Z, -, _} and should not started "
        "with {-,_}, now it is=a b"
    )
    assert s.add([("", True)]) == "label added is empty or exceeds 255 character(s)"
    using = s.remove(["spare"], lambda label: "root.b" if label == "spare" else None)
    assert using == (
        "Cannot remove label=spare, because queue=root.b is using this label. "
        "Please remove label on queue before remove the label",
        {},
    )


def test_with_labels_disabled_only_a_change_is_refused():
    s = NodeLabels(enabled=False)
    s.registered("h", "h", ())
    assert s.add([("gpu", True)]) == NOT_ENABLED
    assert s.replace([("h", "")]) == (None, {})  # changes nothing: accepted
    assert s.replace([("h", "gpu")])[0] == NOT_ENABLED
