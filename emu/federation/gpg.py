"""The Global Policy Generator: on its interval, recomputes per-queue
policies from the sub-clusters' load and writes them to the state store
(Hadoop's `globalpolicygenerator.policygenerator.PolicyGenerator`).

Each run reads the active sub-clusters, the queue names to write policies
for, and each active sub-cluster's metrics (minus
`yarn.federation.gpg.policy.generator.blacklist`), then asks the global
policy to update each queue's policy manager:

- `NoOpGlobalPolicy` (the default) writes nothing;
- `UniformWeightedLocalityGlobalPolicy` gives every active sub-cluster
  weight 1.0 in a WeightedLocalityPolicyManager;
- `LoadBasedGlobalPolicy` weighs sub-clusters down as their pending apps
  pass `load-based.pending.minimum` towards `.maximum` (at most
  `load-based.edit.maximum` of the most loaded, scaled LINEAR, QUADRATIC,
  LOG or NONE, never below `load-based.weight.minimum`).

As in Hadoop 3.4.2, the queue names are those of the non-root *parent*
queues of the sub-clusters that run the CapacityScheduler (the REST
scheduler view's `CapacitySchedulerQueueInfo`s; leaves are another class),
and the Router and AMRMProxy use a queue's own policy only for an app
submitted to a queue of that name: an app in a leaf queue keeps the
federation's default policy. Sub-clusters running another scheduler are
skipped (Hadoop logs a warning).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.federation.policies import PolicyManager, WeightedPolicyInfo, _f32, default_map_order

GPG_PACKAGE = "org.apache.hadoop.yarn.server.globalpolicygenerator.policygenerator"
POLICY_CLASS = "yarn.federation.gpg.policy.generator.class"
INTERVAL_MS = "yarn.federation.gpg.policy.generator.interval-ms"
INTERVAL = "yarn.federation.gpg.policy.generator.interval"
READONLY = "yarn.federation.gpg.policy.generator.readonly"
BLACKLIST = "yarn.federation.gpg.policy.generator.blacklist"
LB = "yarn.federation.gpg.policy.generator.load-based."
GLOBAL_POLICIES = (
    "NoOpGlobalPolicy",
    "UniformWeightedLocalityGlobalPolicy",
    "LoadBasedGlobalPolicy",
)
SCALINGS = ("LINEAR", "QUADRATIC", "LOG", "NONE")


@dataclass
class GlobalPolicy:
    """The configured GlobalPolicy and its parameters."""

    name: str = "NoOpGlobalPolicy"
    min_pending: int = 100
    max_pending: int = 1000
    min_weight: float = 0.0
    max_edit: int = 3
    scaling: str = "LINEAR"

    def update(
        self, queue: str, pending: dict[str, int], manager: PolicyManager | None
    ) -> PolicyManager | None:
        """GlobalPolicy.updatePolicy: the queue's new manager, or None to write nothing."""
        if self.name == "NoOpGlobalPolicy":
            return None
        if manager is not None and manager.name != "WeightedLocalityPolicyManager":
            return manager  # another manager type is left as it is
        if self.name == "UniformWeightedLocalityGlobalPolicy":
            weights = {sid: 1.0 for sid in pending}
            alpha = manager.info.alpha if manager is not None else 0.0
        else:
            if not pending:
                return None
            weights = self.target_weights(pending)
            alpha = 0.0
        return PolicyManager(
            "WeightedLocalityPolicyManager",
            "LocalityRouterPolicy",
            "LocalityMulticastAMRMProxyPolicy",
            WeightedPolicyInfo(dict(weights), dict(weights), alpha),
            f"Global Policy Generator ({self.name}) for queue {queue}",
        )

    def target_weights(self, pending: dict[str, int]) -> dict[str, float]:
        """LoadBasedGlobalPolicy.getTargetWeights."""
        weights = {sid: 1.0 for sid in pending}
        # A stable sort by pending apps, most first, over the HashMap's order.
        ranked = sorted(default_map_order(list(pending)), key=lambda s: -pending[s])
        for sid in ranked[: self.max_edit]:
            p = pending[sid]
            if p <= self.min_pending:
                continue
            if p < self.max_pending:
                w = self._scale(self.max_pending - self.min_pending, p - self.min_pending)
                weights[sid] = _f32(_f32(w * _f32(1 - self.min_weight)) + self.min_weight)
            else:
                weights[sid] = self.min_weight
        if all(w <= 0 for w in weights.values()):
            weights = {sid: 1.0 for sid in pending}
        return weights

    def _scale(self, most: int, value: int) -> float:
        if self.scaling == "NONE":
            return 1.0
        if self.scaling == "QUADRATIC":
            return _f32(float(most * most - value * value) / float(most * most))
        if self.scaling == "LOG":
            return _f32((math.log(most) - math.log(value)) / math.log(most)) if value > 0 else 1.0
        return _f32(float(most - value) / float(most))


def global_policy(conf: Configuration, path: str) -> tuple[GlobalPolicy, int, bool, list[str]]:
    """The GPG's policy, interval (ms; <= 0: never runs), read-only flag and
    blacklist from the federation's properties; InputError names a bad one."""
    name = conf.get_str(POLICY_CLASS, f"{GPG_PACKAGE}.NoOpGlobalPolicy").strip()
    simple = name.rsplit(".", 1)[-1]
    if simple not in GLOBAL_POLICIES or name not in (simple, f"{GPG_PACKAGE}.{simple}"):
        raise InputError(
            conf.sources.get(POLICY_CLASS, path),
            POLICY_CLASS,
            f"unknown global policy {name!r} (Hadoop 3.4.2's: {', '.join(GLOBAL_POLICIES)}, "
            f"in {GPG_PACKAGE})",
        )
    gp = GlobalPolicy(
        simple,
        conf.get_int(LB + "pending.minimum", 100),
        conf.get_int(LB + "pending.maximum", 1000),
        conf.get_float(LB + "weight.minimum", 0.0),
        conf.get_int(LB + "edit.maximum", 3),
        conf.get_str(LB + "scaling", "LINEAR").strip().upper(),
    )
    where = conf.sources.get(POLICY_CLASS, path)
    if gp.min_pending > gp.max_pending:
        raise InputError(where, LB + "pending.minimum", "is above load-based.pending.maximum")
    if not 0.0 <= gp.min_weight < 1.0:
        raise InputError(where, LB + "weight.minimum", "must be in [0, 1)")
    if gp.scaling not in SCALINGS:
        gp.scaling = "NONE"  # Hadoop warns and keeps NONE
    if INTERVAL_MS in conf:
        interval = conf.get_time_ms(INTERVAL_MS, 3_600_000)
    else:
        interval = conf.get_time_ms(INTERVAL, 3_600_000)
    blacklist = (
        [s for s in conf.get_str(BLACKLIST, "").split(",") if s] if BLACKLIST in conf else []
    )
    return gp, interval, conf.get_bool(READONLY, False), blacklist


@dataclass
class PolicyGenerator:
    """One GPG: `run` is one pass (PolicyGenerator.run)."""

    policy: GlobalPolicy
    readonly: bool
    blacklist: list[str]
    policies: dict[str, PolicyManager]
    """The state store's per-queue policies (written here)."""
    writes: list[tuple[int, str, dict[str, float]]] = field(default_factory=list)
    """(simulated ms, queue, router weights) of each policy written."""

    def run(
        self,
        now_ms: int,
        active: list[str],
        parent_queues: Callable[[], set[str]],
        pending: Callable[[str], int],
    ) -> None:
        queues = parent_queues()
        loads = {sid: pending(sid) for sid in active if sid not in self.blacklist}
        for queue in sorted(queues):
            current = self.policies.get(queue)
            new = self.policy.update(queue, loads, current)
            if new is None or self.readonly:
                continue
            if (
                current is not None
                and new.info.to_json() == current.info.to_json()
                and new.name == current.name
            ):
                continue
            self.policies[queue] = new
            self.writes.append((now_ms, queue, dict(new.info.router)))
