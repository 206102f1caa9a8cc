"""The Global Policy Generator: LoadBasedGlobalPolicy's weights, the
per-queue policies it writes, and which policy then decides for a queue."""

from __future__ import annotations

import pytest

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.federation import gpg as G
from emu.federation import policies as fp
from emu.scenario.java_random import JavaRandom


def test_load_based_weights_fall_as_pending_apps_pass_the_minimum() -> None:
    p = G.GlobalPolicy("LoadBasedGlobalPolicy", 100, 1000, 0.0, 3, "LINEAR")
    w = p.target_weights({"SC-1": 50, "SC-2": 550, "SC-3": 2000})
    assert w == {"SC-1": 1.0, "SC-2": 0.5, "SC-3": 0.0}
    q = G.GlobalPolicy("LoadBasedGlobalPolicy", 100, 1000, 0.2, 3, "QUADRATIC")
    # (900^2 - 450^2) / 900^2 = 0.75, then 0.75 * 0.8 + 0.2
    assert q.target_weights({"SC-2": 550})["SC-2"] == pytest.approx(0.8)
    one = G.GlobalPolicy("LoadBasedGlobalPolicy", 100, 1000, 0.0, 1, "LINEAR")
    assert one.target_weights({"SC-1": 900, "SC-2": 2000}) == {"SC-1": 1.0, "SC-2": 0.0}
    # Every weight at zero: all back to 1.
    assert p.target_weights({"SC-1": 5000}) == {"SC-1": 1.0}


def test_the_generator_writes_parent_queue_policies_the_facade_then_uses() -> None:
    stored: dict[str, fp.PolicyManager] = {}
    default = fp.manager_from_conf(Configuration(), "f")
    gen = G.PolicyGenerator(G.GlobalPolicy("LoadBasedGlobalPolicy"), False, [], stored)
    gen.run(0, ["SC-1", "SC-2"], lambda: {"a"}, {"SC-1": 0, "SC-2": 5000}.__getitem__)
    assert stored["a"].name == "WeightedLocalityPolicyManager"
    assert stored["a"].info.router == {"SC-1": 1.0, "SC-2": 0.0}
    assert gen.writes == [(0, "a", {"SC-1": 1.0, "SC-2": 0.0})]
    gen.run(1000, ["SC-1", "SC-2"], lambda: {"a"}, {"SC-1": 0, "SC-2": 5000}.__getitem__)
    assert len(gen.writes) == 1, "an unchanged policy is not written again"
    draws = fp.Draws(JavaRandom(1), JavaRandom(2), JavaRandom(3), JavaRandom(4))
    facade = fp.PolicyFacade(default, stored, draws, fp.Resolver(), Configuration())
    members = fp.Membership(["SC-1", "SC-2"])
    assert isinstance(facade.router("a"), fp.LocalityRouterPolicy)
    assert {facade.router("a").home("a", None, members) for _ in range(30)} == {"SC-1"}
    assert isinstance(facade.router("a1"), fp.UniformRandomRouterPolicy)
    assert len({facade.router("a1").home("a1", None, members) for _ in range(30)}) == 2


def test_a_readonly_generator_writes_nothing_and_bad_settings_are_refused() -> None:
    stored: dict[str, fp.PolicyManager] = {}
    gen = G.PolicyGenerator(G.GlobalPolicy("UniformWeightedLocalityGlobalPolicy"), True, [], stored)
    gen.run(0, ["SC-1"], lambda: {"a"}, lambda s: 0)
    assert stored == {}
    conf = Configuration()
    conf.set(G.POLICY_CLASS, "NoSuchPolicy", "f.toml: federation")
    with pytest.raises(InputError, match="unknown global policy"):
        G.global_policy(conf, "f.toml")
    conf = Configuration()
    conf.set(G.POLICY_CLASS, "LoadBasedGlobalPolicy", "f")
    conf.set(G.LB + "pending.minimum", "2000", "f")
    with pytest.raises(InputError, match=r"pending\.minimum"):
        G.global_policy(conf, "f.toml")
    conf = Configuration()
    conf.set(G.INTERVAL, "5m", "f")
    assert G.global_policy(conf, "f")[1] == 300_000
