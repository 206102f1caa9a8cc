"""Hadoop's federation policies, ported: the decisions Hadoop 3.4.2's own
classes made on the same inputs and seeds (recorded from them, see
emu/federation/hadoop_policies.py for the live comparison)."""

from __future__ import annotations

import pytest

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.federation import policies as fp
from emu.scenario.java_random import JavaRandom

IDS = ["SC-1", "SC-2", "SC-3", "SC-4"]
MACHINES = [
    ("node1", "SC-1", "rack1"),
    ("node2", "SC-1", "rack1"),
    ("node3", "SC-2", "rack2"),
    ("node4", "SC-2", "rack3"),
    ("node5", "SC-3", "rack3"),
    ("node6", "SC-4", "rack4"),
]
# Hadoop's toByteBuffer of weights {SC-1: .2, SC-2: .3, SC-3: .5, SC-4: 1} (HashMap order).
WEIGHTS = fp.WeightedPolicyInfo(
    {"SC-1": fp._f32(0.2), "SC-2": fp._f32(0.3), "SC-3": fp._f32(0.5), "SC-4": 1.0},
    {"SC-1": fp._f32(0.2), "SC-2": fp._f32(0.3), "SC-3": fp._f32(0.5), "SC-4": 1.0},
)
ACTIVE = fp.Membership(["SC-1", "SC-2", "SC-3"], {"SC-1": 1000, "SC-2": 5000, "SC-3": 3000})


def draws(shared: int = 42, uniform: int = 7, multicast: int = 99) -> fp.Draws:
    return fp.Draws(JavaRandom(shared), JavaRandom(uniform), JavaRandom(multicast), JavaRandom(0))


def router(
    name: str, info: fp.WeightedPolicyInfo = WEIGHTS, d: fp.Draws | None = None
) -> fp.RouterPolicy:
    return fp.ROUTER_POLICIES[name](info, d or draws(), fp.Resolver.of(MACHINES))


def test_hashmap_orders_are_javas() -> None:
    assert fp.sized_map_order(["SC-1", "SC-2", "SC-3"], 3) == ["SC-2", "SC-3", "SC-1"]
    assert fp.default_map_order(IDS) == ["SC-4", "SC-2", "SC-3", "SC-1"]
    ten = [f"SC-{i}" for i in range(1, 11)]
    assert fp.default_map_order(ten) == [
        "SC-10", "SC-8", "SC-9", "SC-6", "SC-7", "SC-4", "SC-5", "SC-2", "SC-3", "SC-1"
    ]  # fmt: skip


def test_weighted_random_draws_as_hadoop() -> None:
    rand = JavaRandom(42)
    got = [fp.weighted_random(rand, [fp._f32(0.2), fp._f32(0.3), fp._f32(0.5)]) for _ in range(10)]
    assert got == [2, 0, 2, 0, 1, 2, 1, 2, 2, 0]


def test_locality_router_without_am_asks_routes_by_weight() -> None:
    r = router("LocalityRouterPolicy")
    got = [r.home("default", None, ACTIVE) for _ in range(20)]
    assert " ".join(got) == (
        "SC-3 SC-2 SC-3 SC-2 SC-3 SC-1 SC-2 SC-3 SC-3 SC-2 SC-1 SC-3 SC-3 SC-3 SC-2 SC-3 "
        "SC-3 SC-3 SC-3 SC-1"
    )
    r = router("LocalityRouterPolicy")
    got = [r.home("default", None, ACTIVE, ["SC-3"]) for _ in range(20)]
    assert " ".join(got) == (
        "SC-1 SC-2 SC-1 SC-2 SC-2 SC-1 SC-2 SC-1 SC-1 SC-2 SC-1 SC-2 SC-2 SC-2 SC-2 SC-1 "
        "SC-2 SC-1 SC-1 SC-1"
    )


def test_locality_router_follows_the_am_node_ask() -> None:
    r = router("LocalityRouterPolicy")
    assert r.home("default", [("node3", 1), ("rack2", 1), ("*", 1)], ACTIVE) == "SC-2"
    # node6 is in SC-4, not active: the weighted fallback's first draw.
    assert r.home("default", [("node6", 1), ("rack4", 1), ("*", 1)], ACTIVE) == "SC-3"


def test_uniform_hash_priority_reject_load_based() -> None:
    r = router("UniformRandomRouterPolicy")
    got = [r.home("default", None, ACTIVE) for _ in range(12)]
    assert " ".join(got) == "SC-3 SC-1 SC-2 SC-3 SC-3 SC-3 SC-3 SC-1 SC-2 SC-2 SC-2 SC-2"
    h = router("HashBasedRouterPolicy")
    assert h.home("q", None, ACTIVE) == "SC-3"
    assert h.home("default", None, ACTIVE) == "SC-1"
    assert h.home("default", None, ACTIVE, ["SC-1"]) == "SC-3"
    p = router("PriorityRouterPolicy")
    assert p.home("default", None, ACTIVE) == "SC-3"
    assert p.home("default", None, ACTIVE, ["SC-3"]) == "SC-2"
    with pytest.raises(fp.PolicyError, match=r"\(q1\) reject all routing requests"):
        router("RejectRouterPolicy").home("q1", None, ACTIVE)
    ones = fp.WeightedPolicyInfo({"SC-1": 1.0, "SC-2": 0.0, "SC-3": 1.0, "SC-4": 1.0}, {})
    assert router("LoadBasedRouterPolicy", ones).home("default", None, ACTIVE) == "SC-3"
    with pytest.raises(fp.PolicyError, match="No active SubCluster available"):
        p.home("default", None, ACTIVE, ["SC-1", "SC-2", "SC-3"])
    with pytest.raises(fp.PolicyError, match="Zero active subclusters"):
        p.home("default", None, fp.Membership([]))


REQS = [
    (1, "node3", 2), (1, "rack2", 2), (1, "*", 2), (2, "rack3", 4), (2, "*", 4), (3, "nodeX", 1),
    (3, "*", 1), (4, "*", 10), (5, "node6", 3), (5, "*", 3), (6, "*", 0),
]  # fmt: skip


def split(alpha: float, headroom: list[tuple[str, int]], timed_out: list[str]) -> str:
    info = fp.WeightedPolicyInfo(WEIGHTS.router, WEIGHTS.amrm, alpha)
    lm = fp.LocalityMulticastAMRMProxyPolicy(
        info, draws(), fp.Resolver.of(MACHINES), "SC-1", Configuration()
    )
    for sid, mb in headroom:
        lm.notify(sid, mb)
    asks = [
        {"allocation_request_id": a, "resource_name": n, "num_containers": c} for a, n, c in REQS
    ]
    out = lm.split(asks, ACTIVE, timed_out)
    return " ".join(
        f"{sid}=[" + "".join(
            f"{x['allocation_request_id']}:{x['resource_name']}:{x['num_containers']} " for x in xs
        ) + "]"
        for sid, xs in out.items()
    )  # fmt: skip


def test_locality_multicast_splits_as_hadoop() -> None:
    assert split(0.0, [], []) == (
        "SC-1=[5:node6:3 4:*:2 5:*:3 ] SC-2=[1:node3:2 1:rack2:2 2:rack3:4 1:*:2 2:*:1 4:*:3 ] "
        "SC-3=[2:rack3:4 3:nodeX:1 2:*:3 3:*:1 4:*:5 ]"
    )
    hr = [("SC-2", 8192), ("SC-3", 2048)]
    assert split(0.0, hr, []) == (
        "SC-1=[5:node6:3 4:*:2 5:*:3 ] "
        "SC-2=[1:node3:2 1:rack2:2 2:rack3:4 1:*:2 2:*:1 4:*:3 6:*:0 ] "
        "SC-3=[2:rack3:4 3:nodeX:1 2:*:3 3:*:1 4:*:5 6:*:0 ]"
    )
    assert split(1.0, hr, []) == (
        "SC-1=[5:node6:3 2:*:2 4:*:3 5:*:3 ] SC-2=[1:node3:2 1:rack2:2 2:rack3:4 1:*:2 2:*:2 4:*:6 "
        "6:*:0 ] SC-3=[3:nodeX:1 3:*:1 4:*:1 6:*:0 ]"
    )
    assert split(1.0, hr, ["SC-2"]) == (
        "SC-1=[1:node3:2 1:rack2:2 1:*:2 2:*:2 4:*:5 ] SC-2=[6:*:0 ] SC-3=[2:rack3:4 3:nodeX:1 "
        "5:node6:3 2:*:2 3:*:1 4:*:5 5:*:3 6:*:0 ]"
    )


def test_weighted_policy_info_round_trips_hadoops_json() -> None:
    text = (
        '{"routerPolicyWeights":{"entry":[{"key":{"id":"SC-2"},"value":"0.3"},{"key":{"id":"SC-1"},'
        '"value":"0.7"}]},"amrmPolicyWeights":{"entry":[{"key":{"id":"SC-2"},"value":"0.4"},'
        '{"key":{"id":"SC-1"},"value":"0.6"}]},"headroomAlpha":"0.5"}'
    )
    info = fp.WeightedPolicyInfo.parse(text)
    assert info.router == {"SC-2": fp._f32(0.3), "SC-1": fp._f32(0.7)}
    assert info.alpha == 0.5
    assert info.to_json() == text


def conf(**props: str) -> Configuration:
    c = Configuration()
    for k, v in props.items():
        c.set(k, v, f"test: {k}")
    return c


def test_bad_managers_and_weights_are_refused_by_name() -> None:
    with pytest.raises(InputError, match="unknown policy manager 'NoSuchManager'"):
        fp.manager_from_conf(conf(**{fp.POLICY_MANAGER: "NoSuchManager"}), "f.toml")
    weighted = {fp.POLICY_MANAGER: "WeightedLocalityPolicyManager"}
    with pytest.raises(InputError, match="do not parse: JSON expression can not be empty"):
        fp.manager_from_conf(conf(**weighted), "f.toml")
    with pytest.raises(InputError, match="Weight vector cannot be null/empty"):
        fp.manager_from_conf(conf(**weighted, **{fp.POLICY_PARAMS: "{}"}), "f.toml")
    zero = (
        '{"routerPolicyWeights":{"entry":{"key":{"id":"SC-1"},"value":"0"}},'
        '"amrmPolicyWeights":{"entry":{"key":{"id":"SC-1"},"value":"1"}}}'
    )
    with pytest.raises(InputError, match="every weight is zero"):
        fp.manager_from_conf(conf(**weighted, **{fp.POLICY_PARAMS: zero}), "f.toml")
    m = fp.manager_from_conf(conf(), "f.toml")
    assert (m.router_name, m.amrm_name) == ("UniformRandomRouterPolicy", "BroadcastAMRMProxyPolicy")
