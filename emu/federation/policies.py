"""Hadoop's federation policies: where the Router sends an application, how
the AMRMProxy splits an AM's asks over the sub-clusters.

Ported from `org.apache.hadoop.yarn.server.federation.policies` (3.4.2):
the router policies (uniform random, weighted random, priority, hash,
locality, load-based, reject), the AMRMProxy policies (broadcast, home,
reject, locality-multicast) and the policy managers that pair them, with
their parameters in Hadoop's own serialization (`WeightedPolicyInfo`'s
JSON). Decisions are Hadoop's to the draw: its weights are Java floats
(every sum and product rounded to float32 here), its maps iterate in Java
HashMap order (`_order`), and each of its random sources is a
`java.util.Random` of its own, seeded from the run's seed (`Draws`) where
Hadoop seeds from the wall clock. `emu.federation.hadoop_policies` runs
Hadoop's classes on the same inputs and the same seeds to prove it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.rm.scheduler.javahash import (
    bucket,
    capacity_for,
    concurrent_capacity_for,
    string_hash,
)
from emu.scenario.java_random import JavaRandom

PACKAGE = "org.apache.hadoop.yarn.server.federation.policies"
POLICY_MANAGER = "yarn.federation.policy-manager"
POLICY_PARAMS = "yarn.federation.policy-manager-params"
FAIL_ON_ERROR = "yarn.nodemanager.least-load-policy-selector.fail-on-error"
LEAST_LOAD = "yarn.nodemanager.least-load-policy-selector.enabled"
LEAST_LOAD_BLACKLIST = "yarn.nodemanager.least-load-policy-selector.blacklist-subclusters"
ANY = "*"
DEFAULT_QUEUE = "default"


class PolicyError(Exception):
    """A policy refused a decision (Hadoop's FederationPolicyException and its
    subclasses), with Hadoop's message."""


def _f32(x: float) -> float:
    """`x` rounded to a Java float."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def scid_hash(sid: str) -> int:
    """SubClusterId.hashCode: HashCodeBuilder().append(id) = 17 x 37 + id's hash."""
    h = (629 + string_hash(sid)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _table_size_for(n: int) -> int:
    c = 1
    while c < n:
        c <<= 1
    return c


def _order(keys: Sequence[str], capacity: int) -> list[str]:
    """`keys` (insertion order) in the order a HashMap/HashSet of SubClusterIds
    with `capacity` buckets iterates them."""
    ranked = sorted((bucket(scid_hash(k), capacity), i) for i, k in enumerate(keys))
    return [keys[i] for _, i in ranked]


def default_map_order(keys: Sequence[str]) -> list[str]:
    """A `new HashMap<>()` (or HashSet) filled with `keys` in this order."""
    return _order(keys, capacity_for(len(keys)))


def sized_map_order(keys: Sequence[str], initial: int) -> list[str]:
    """A `new HashMap<>(initial)` filled with `keys` in this order."""
    if not keys:
        return []
    cap = _table_size_for(max(initial, 1))
    while len(keys) > cap * 0.75:
        cap *= 2
    return _order(keys, cap)


def concurrent_map_order(keys: Sequence[str]) -> list[str]:
    """A default ConcurrentHashMap filled with `keys` in this order."""
    cap = concurrent_capacity_for(len(keys))
    return _order(keys, cap)  # spread() is HashMap's hash() but the sign bit


def weighted_random(rand: JavaRandom, weights: Sequence[float]) -> int:
    """FederationPolicyUtils.getWeightedRandom: one nextFloat, float sums."""
    total = 0.0
    for w in weights:
        if w > 0:
            total = _f32(total + w)
    if total == 0:
        return -1
    point = _f32(_f32(rand.next(24) / float(1 << 24)) * total)
    last = 0
    for i, w in enumerate(weights):
        if w > 0:
            if point <= w:
                return i
            last = i
            point = _f32(point - w)
    return last


@dataclass
class Draws:
    """Hadoop's random sources in the federation, each its own
    `java.util.Random` (Hadoop seeds them from the wall clock; a run seeds
    them from its seed so a replay is repeatable):

    - `shared`: FederationPolicyUtils.rand (weighted routing, the
      locality-multicast remainders);
    - `uniform`: UniformRandomRouterPolicy's own;
    - `multicast`: LocalityMulticastAMRMProxyPolicy's (unresolved asks);
    - `facade`: FederationStateStoreFacade's (the Router's new-application
      sub-cluster)."""

    shared: JavaRandom
    uniform: JavaRandom
    multicast: JavaRandom
    facade: JavaRandom

    @classmethod
    def seeded(cls, seed: int) -> Draws:
        return cls(
            JavaRandom(seed), JavaRandom(seed + 1), JavaRandom(seed + 2), JavaRandom(seed + 3)
        )


@dataclass
class WeightedPolicyInfo:
    """Hadoop's WeightedPolicyInfo: router and AMRMProxy weights per
    sub-cluster (in the JSON's entry order; they iterate as a HashMap) and
    the headroom alpha."""

    router: dict[str, float] = field(default_factory=dict)
    amrm: dict[str, float] = field(default_factory=dict)
    alpha: float = 0.0

    @classmethod
    def parse(cls, text: str) -> WeightedPolicyInfo:
        """Read Hadoop's JSON (`WeightedPolicyInfo.toByteBuffer`'s form:
        `{"routerPolicyWeights":{"entry":[{"key":{"id":"SC-1"},"value":"0.7"}, ...]},
        "amrmPolicyWeights":..., "headroomAlpha":"0.5"}`); ValueError says why
        not. As Hadoop's reader does, a map in another shape reads as empty."""
        if not text.strip():
            raise ValueError("JSON expression can not be empty!")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"not JSON: {e}") from None
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        alpha = data.get("headroomAlpha", 0.0)
        try:
            alpha_f = _f32(float(alpha)) if alpha is not None else 0.0
        except (TypeError, ValueError):
            raise ValueError(f"headroomAlpha: {alpha!r} is not a number") from None
        return cls(
            _weights(data.get("routerPolicyWeights"), "routerPolicyWeights"),
            _weights(data.get("amrmPolicyWeights"), "amrmPolicyWeights"),
            alpha_f,
        )

    def to_json(self) -> str:
        """Hadoop's serialization (entries in HashMap order, values as
        strings, one entry as an object, an empty map as null)."""

        def entries(m: dict[str, float]) -> Any:
            if not m:
                return None
            es = [
                {"key": {"id": k}, "value": _java_float_str(m[k])}
                for k in default_map_order(list(m))
            ]
            return {"entry": es[0] if len(es) == 1 else es}

        return json.dumps(
            {
                "routerPolicyWeights": entries(self.router),
                "amrmPolicyWeights": entries(self.amrm),
                "headroomAlpha": _java_float_str(self.alpha),
            },
            separators=(",", ":"),
        )


def _java_float_str(x: float) -> str:
    """Float.toString for the values weights take (shortest repr of the float)."""
    for digits in range(1, 10):
        s = f"{x:.{digits}g}"
        if _f32(float(s)) == x:
            break
    if "e" in s or "E" in s:
        return repr(x)
    return s if "." in s else s + ".0"


def _weights(value: Any, name: str) -> dict[str, float]:
    if value is None or not isinstance(value, dict):
        return {}
    entries = value.get("entry")
    if entries is None:
        return {}
    if isinstance(entries, dict):
        entries = [entries]
    if not isinstance(entries, list):
        raise ValueError(f"{name}.entry: expected an array of entries")
    out: dict[str, float] = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise ValueError(f"{name}.entry[{i}]: expected an object")
        key = e.get("key")
        sid = key.get("id") if isinstance(key, dict) else None
        if not isinstance(sid, str):
            raise ValueError(f"{name}.entry[{i}].key.id: expected a sub-cluster id")
        try:
            out[sid] = _f32(float(e["value"]))
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                f"{name}.entry[{i}].value: {e.get('value')!r} is not a number"
            ) from None
    return out


# --- the inputs a decision sees ---------------------------------------------


@dataclass
class Resolver:
    """Hadoop's DefaultSubClusterResolverImpl: node -> sub-cluster and rack ->
    sub-clusters, names upper-cased (its machine list; here from the
    federation's own nodes, in their order)."""

    nodes: dict[str, str] = field(default_factory=dict)
    racks: dict[str, list[str]] = field(default_factory=dict)
    """Rack -> its sub-clusters in the order first seen (a HashSet: iterate
    with `rack_order`)."""

    @classmethod
    def of(cls, placements: Iterable[tuple[str, str, str]]) -> Resolver:
        """From (host, sub-cluster, rack) lines, as a machine list holds them."""
        r = cls()
        for host, sid, rack in placements:
            r.nodes[host.upper()] = sid
            members = r.racks.setdefault(rack.upper(), [])
            if sid not in members:
                members.append(sid)
        return r

    def node(self, name: str) -> str | None:
        return self.nodes.get(name.upper())

    def rack_order(self, name: str) -> list[str]:
        return default_map_order(self.racks.get(name.upper(), []))


@dataclass
class Membership:
    """What a policy reads of the state store: the active sub-clusters (in
    the store's order), each one's last reported available memory (MB,
    None before its first heartbeat)."""

    active: list[str]
    available_mb: dict[str, int | None] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        self._order = sized_map_order(self.active, len(self.active))

    def active_order(self) -> list[str]:
        """The facade's active map: `new HashMap<>(n)` filled in store order."""
        return self._order


# --- router policies -----------------------------------------------------


class RouterPolicy:
    """FederationRouterPolicy: the home sub-cluster of a submission."""

    name = "RouterPolicy"
    uses_weights = False

    def __init__(self, info: WeightedPolicyInfo, draws: Draws, resolver: Resolver) -> None:
        self.info = info
        self.draws = draws
        self.resolver = resolver

    def home(
        self,
        queue: str | None,
        am_asks: list[tuple[str, int]] | None,
        members: Membership,
        blacklist: Sequence[str] = (),
    ) -> str:
        """AbstractRouterPolicy.getHomeSubcluster; `am_asks` the AM container's
        (resource name, count) requests, None when the submission has none."""
        queue = queue or DEFAULT_QUEUE
        active = _active(members)
        _check_available(active, blacklist)
        candidates = [s for s in active if s not in set(blacklist)]
        return self.choose(queue, candidates, members)

    def choose(self, queue: str, candidates: list[str], members: Membership) -> str:
        raise NotImplementedError


def _active(members: Membership) -> list[str]:
    active = members.active_order()
    if not active:
        raise PolicyError("Zero active subclusters, cannot pick where to send job.")
    return active


def _check_available(active: Sequence[str], blacklist: Sequence[str]) -> None:
    if not active or all(s in set(blacklist) for s in active):
        raise PolicyError("No active SubCluster available to submit the request.")


class UniformRandomRouterPolicy(RouterPolicy):
    name = "UniformRandomRouterPolicy"

    def choose(self, queue: str, candidates: list[str], members: Membership) -> str:
        if not candidates:
            raise PolicyError("No available subcluster to choose from.")
        return candidates[self.draws.uniform.next_int(len(candidates))]


class WeightedRandomRouterPolicy(RouterPolicy):
    name = "WeightedRandomRouterPolicy"
    uses_weights = True

    def choose(self, queue: str, candidates: list[str], members: Membership) -> str:
        ok = set(candidates)
        ids, weights = [], []
        for sid in default_map_order(list(self.info.router)):
            if sid in ok:
                ids.append(sid)
                weights.append(self.info.router[sid])
        i = weighted_random(self.draws.shared, weights)
        if i == -1:
            raise PolicyError("No positive weight found on active subclusters")
        return ids[i]


class PriorityRouterPolicy(RouterPolicy):
    name = "PriorityRouterPolicy"
    uses_weights = True

    def choose(self, queue: str, candidates: list[str], members: Membership) -> str:
        best, chosen = 1.4e-45, None  # Float.MIN_VALUE
        for sid in candidates:
            w = self.info.router.get(sid)
            if w is not None and w > best:
                best, chosen = w, sid
        if chosen is None:
            raise PolicyError("No Active Subcluster with weight vector greater than zero.")
        return chosen


class HashBasedRouterPolicy(RouterPolicy):
    name = "HashBasedRouterPolicy"

    def choose(self, queue: str, candidates: list[str], members: Membership) -> str:
        h, n = string_hash(queue), len(candidates)
        if n == 0:
            raise PolicyError("No available subcluster to choose from.")
        rem = abs(h) % n
        idx = abs(-rem if h < 0 else rem)  # Math.abs(h % n), Java's truncating %
        return sorted(candidates)[idx]


class LoadBasedRouterPolicy(RouterPolicy):
    name = "LoadBasedRouterPolicy"
    uses_weights = True

    def choose(self, queue: str, candidates: list[str], members: Membership) -> str:
        most, chosen = -1, None
        for sid in candidates:
            if self.info.router.get(sid, 0.0) > 0:
                mem = members.available_mb.get(sid)
                if mem is None:
                    raise PolicyError("FederationSubClusterInfo cannot be parsed")
                if mem > most:
                    most, chosen = mem, sid
        if chosen is None:
            raise PolicyError("Zero Active Subcluster with weight 1.")
        return chosen


class RejectRouterPolicy(RouterPolicy):
    name = "RejectRouterPolicy"

    def choose(self, queue: str, candidates: list[str], members: Membership) -> str:
        raise PolicyError(
            f"The policy configured for this queue ({queue}) reject all routing requests by "
            f"construction. Application in {queue} cannot be routed to any RM."
        )


class LocalityRouterPolicy(WeightedRandomRouterPolicy):
    """Home where the AM's node ask resolves, when that sub-cluster is
    active and weighted; otherwise as WeightedRandomRouterPolicy."""

    name = "LocalityRouterPolicy"

    def home(
        self,
        queue: str | None,
        am_asks: list[tuple[str, int]] | None,
        members: Membership,
        blacklist: Sequence[str] = (),
    ) -> str:
        if not am_asks or (len(am_asks) == 1 and am_asks[0][0] == ANY):
            return super().home(queue, am_asks, members, blacklist)
        if len(am_asks) != 3:
            raise PolicyError(f"Invalid number of resource requests: {len(am_asks)}")
        active = _active(members)
        _check_available(active, blacklist)
        target = None
        rack = anywhere = False
        for name, _ in am_asks:
            sid = self.resolver.node(name)
            if sid is not None:
                target = sid  # the last node ask that resolves
            rack = rack or bool(self.resolver.racks.get(name.upper()))
            anywhere = anywhere or name == ANY
        enabled = {s for s, w in self.info.router.items() if w > 0}
        if (
            target is not None
            and rack
            and anywhere
            and target in active
            and target not in blacklist
            and target in enabled
        ):
            return target
        # Hadoop's fallback: the AM asks anywhere, routed by weight.
        return super().home(queue, None, members, blacklist)


ROUTER_POLICIES: dict[str, type[RouterPolicy]] = {
    c.name: c
    for c in (
        UniformRandomRouterPolicy,
        WeightedRandomRouterPolicy,
        PriorityRouterPolicy,
        HashBasedRouterPolicy,
        LoadBasedRouterPolicy,
        RejectRouterPolicy,
        LocalityRouterPolicy,
    )
}


# --- AMRMProxy policies ---------------------------------------------------


class AMRMProxyPolicy:
    """FederationAMRMProxyPolicy: an AM's asks split over sub-clusters.

    Asks are emu's allocate asks (`resource_name`, `num_containers`, ...,
    and `allocation_request_id` if the AM set one: YARN's default 0)."""

    name = "AMRMProxyPolicy"
    uses_weights = False

    def __init__(
        self,
        info: WeightedPolicyInfo,
        draws: Draws,
        resolver: Resolver,
        home: str,
        conf: Configuration,
    ) -> None:
        self.info = info
        self.draws = draws
        self.resolver = resolver
        self.home = home
        self.conf = conf

    def notify(self, sid: str, available_mb: int | None) -> None:
        """notifyOfResponse: a sub-cluster's allocate answered, with its headroom."""

    def split(
        self, asks: list[dict[str, Any]], members: Membership, timed_out: Sequence[str] = ()
    ) -> dict[str, list[dict[str, Any]]]:
        raise NotImplementedError


class BroadcastAMRMProxyPolicy(AMRMProxyPolicy):
    name = "BroadcastAMRMProxyPolicy"

    def split(
        self, asks: list[dict[str, Any]], members: Membership, timed_out: Sequence[str] = ()
    ) -> dict[str, list[dict[str, Any]]]:
        return {sid: list(asks) for sid in _active(members)}


class HomeAMRMProxyPolicy(AMRMProxyPolicy):
    name = "HomeAMRMProxyPolicy"

    def split(
        self, asks: list[dict[str, Any]], members: Membership, timed_out: Sequence[str] = ()
    ) -> dict[str, list[dict[str, Any]]]:
        if self.home not in _active(members):
            raise PolicyError(f"The local subcluster {self.home} is not active")
        return {self.home: list(asks)}


class RejectAMRMProxyPolicy(AMRMProxyPolicy):
    name = "RejectAMRMProxyPolicy"

    def split(
        self, asks: list[dict[str, Any]], members: Membership, timed_out: Sequence[str] = ()
    ) -> dict[str, list[dict[str, Any]]]:
        raise PolicyError(
            "The policy configured for this queue rejects all routing requests by construction."
        )


class LocalityMulticastAMRMProxyPolicy(AMRMProxyPolicy):
    """Node asks to the node's sub-cluster, rack asks to the rack's, ANY
    asks split in proportion to where the node asks went (or, with none,
    by headroom and weight), remainders drawn at random."""

    name = "LocalityMulticastAMRMProxyPolicy"
    uses_weights = True

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        # LM.weights: a HashMap filled in amrmPolicyWeights' HashMap order.
        self.weights = {k: self.info.amrm[k] for k in default_map_order(list(self.info.amrm))}
        self.headroom: dict[str, int] = {}
        """Sub-cluster -> available MB of its last allocate (a ConcurrentHashMap)."""

    def notify(self, sid: str, available_mb: int | None) -> None:
        if available_mb is not None:
            self.headroom[sid] = available_mb

    def split(
        self, asks: list[dict[str, Any]], members: Membership, timed_out: Sequence[str] = ()
    ) -> dict[str, list[dict[str, Any]]]:
        active = set(_active(members))
        aes = [s for s, w in self.weights.items() if w > 0 and s in active]
        for s in self.conf.get_str(LEAST_LOAD_BLACKLIST, "").split(","):
            if s.strip() in aes:
                aes.remove(s.strip())
        aes = default_map_order(aes)
        if not aes:
            if self.conf.get_bool(FAIL_ON_ERROR, True):
                raise PolicyError(
                    "None of the subClusters enabled in this Policy (weight > 0) are currently "
                    "active we cannot forward the ResourceRequest(s)"
                )
            aes = default_map_order(members.active_order())
            for s in members.active_order():
                self.weights[s] = 1.0
        fresh = [
            s for s in sized_map_order(aes, max(int(len(aes) / 0.75) + 1, 16)) if s not in timed_out
        ]
        if fresh:
            aes = fresh
        in_aes = set(aes)
        total_weight = 0.0
        for s in aes:
            total_weight = _f32(total_weight + self.weights.get(s, 0.0))
        total_headroom, headroom_rms = 0.0, 0
        for s in concurrent_map_order(list(self.headroom)):
            if s in in_aes:
                total_headroom = _f32(total_headroom + float(self.headroom[s]))
                headroom_rms += 1
        book = _Bookkeeper()
        unresolved: dict[int, str] = {}
        anys: list[dict[str, Any]] = []
        for ask in asks:
            name = ask["resource_name"]
            aid = ask.get("allocation_request_id", 0)
            if name == ANY:
                anys.append(ask)
                continue
            target = self.resolver.node(name)
            if target is not None and target in in_aes:
                book.add_node(target, ask, aid)
                continue
            racks = self.resolver.rack_order(name)
            if racks:
                hit = False
                for sid in racks:
                    if sid in in_aes:
                        book.add(sid, ask, aid, rack=True)
                        hit = True
                if hit:
                    continue
            drawn = unresolved.get(aid)
            if drawn is None:
                drawn = unresolved[aid] = aes[self.draws.multicast.next_int(len(aes))]
            sid = drawn
            if racks:
                book.add(sid, ask, aid, rack=True)
            else:
                book.add_node(sid, ask, aid)
        for ask in anys:
            aid = ask.get("allocation_request_id", 0)
            n = ask["num_containers"]
            local = book.counts.get(aid)
            targets = list(local) if local is not None else aes
            if n == 0:
                for sid in concurrent_map_order(list(self.headroom)):
                    book.add(sid, ask, aid)
                continue
            weights = []
            for sid in targets:
                if local is not None:
                    tot = float(book.localized[aid])
                    weights.append(_f32(float(local.get(sid, 0)) / tot) if tot > 0 else 0.0)
                    continue
                hw = _f32(1.0 / len(aes))
                if sid in self.headroom and total_headroom > 0:
                    share = _f32(float(self.headroom[sid]) / total_headroom)
                    hw = _f32(share * _f32(float(headroom_rms) / float(len(aes))))
                pw = 0.0
                if sid in self.weights and total_weight > 0:
                    pw = _f32(self.weights[sid] / total_weight)
                alpha = self.info.alpha
                weights.append(_f32(_f32(alpha * hw) + _f32(_f32(1 - alpha) * pw)))
            counts = self._assign(n, weights)
            for sid, c in zip(targets, counts, strict=True):
                if c > 0:
                    book.add(sid, {**ask, "num_containers": c}, aid)
        return book.answer()

    def _assign(self, total: int, weights: list[float]) -> list[int]:
        """computeIntegerAssignment: floors of the float shares, then one
        weighted draw per container left."""
        if not weights:
            return []
        tw = 0.0
        for w in weights:
            if w > 0:
                tw = _f32(tw + w)
        if tw == 0:
            listed = "".join(f"{_java_float_str(w)}, " for w in weights)
            raise PolicyError(f"No positive value found in weight array {listed}")
        counts = [0] * len(weights)
        residue = total
        for i, w in enumerate(weights):
            if w > 0:
                base = int(_f32(_f32(float(total) * w) / tw))
                counts[i] += base
                residue -= base
        for _ in range(residue):
            counts[weighted_random(self.draws.shared, weights)] += 1
        return counts


class _Bookkeeper:
    """LocalityMulticast's AllocationBookkeeper for one split."""

    def __init__(self) -> None:
        self.lists: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        self.mask: dict[str, set[int]] = {}
        self.counts: dict[int, dict[str, int]] = {}
        self.localized: dict[int, int] = {}

    def add_node(self, sid: str, ask: dict[str, Any], aid: int) -> None:
        n = ask["num_containers"]
        if n > 0:
            per = self.counts.setdefault(aid, {})
            per[sid] = per.get(sid, 0) + n
            self.localized[aid] = self.localized.get(aid, 0) + n
            # countContainersPerRM[aid] is a HashMap: iterate in its order.
            self.counts[aid] = {k: per[k] for k in default_map_order(list(per))}
        self.add(sid, ask, aid)

    def add(self, sid: str, ask: dict[str, Any], aid: int, rack: bool = False) -> None:
        if not rack:
            self.mask.setdefault(sid, set()).add(aid)
        self.lists.setdefault(sid, []).append((aid, ask))

    def answer(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for sid in sorted(self.lists):
            mask = self.mask.get(sid)
            if mask is None:
                continue
            kept = [ask for aid, ask in self.lists[sid] if aid in mask]
            if kept:
                out[sid] = kept
        return out


AMRM_POLICIES: dict[str, type[AMRMProxyPolicy]] = {
    c.name: c
    for c in (
        BroadcastAMRMProxyPolicy,
        HomeAMRMProxyPolicy,
        RejectAMRMProxyPolicy,
        LocalityMulticastAMRMProxyPolicy,
    )
}


# --- policy managers ------------------------------------------------------

MANAGERS: dict[str, tuple[str, str]] = {
    "UniformBroadcastPolicyManager": ("UniformRandomRouterPolicy", "BroadcastAMRMProxyPolicy"),
    "HashBroadcastPolicyManager": ("HashBasedRouterPolicy", "BroadcastAMRMProxyPolicy"),
    "PriorityBroadcastPolicyManager": ("PriorityRouterPolicy", "BroadcastAMRMProxyPolicy"),
    "WeightedLocalityPolicyManager": ("LocalityRouterPolicy", "LocalityMulticastAMRMProxyPolicy"),
    "WeightedHomePolicyManager": ("WeightedRandomRouterPolicy", "HomeAMRMProxyPolicy"),
    "HomePolicyManager": ("UniformRandomRouterPolicy", "HomeAMRMProxyPolicy"),
    "RejectAllPolicyManager": ("RejectRouterPolicy", "RejectAMRMProxyPolicy"),
}
DEFAULT_MANAGER = f"{PACKAGE}.manager.UniformBroadcastPolicyManager"


@dataclass
class PolicyManager:
    """A FederationPolicyManager: its router and AMRMProxy policies and the
    weights they read."""

    name: str
    router_name: str
    amrm_name: str
    info: WeightedPolicyInfo
    source: str = ""

    def router(self, draws: Draws, resolver: Resolver) -> RouterPolicy:
        return ROUTER_POLICIES[self.router_name](self.info, draws, resolver)

    def amrm(
        self, draws: Draws, resolver: Resolver, home: str, conf: Configuration
    ) -> AMRMProxyPolicy:
        return AMRM_POLICIES[self.amrm_name](self.info, draws, resolver, home, conf)

    def check_subclusters(self, path: str, ids: Sequence[str]) -> None:
        """Weights naming a sub-cluster the federation does not have would be
        silently ignored by Hadoop (it is never active): refuse them."""
        for which, weights in (
            ("routerPolicyWeights", self.info.router),
            ("amrmPolicyWeights", self.info.amrm),
        ):
            for sid in weights:
                if sid not in ids:
                    raise InputError(
                        path,
                        f"{POLICY_PARAMS}: {which}",
                        f"sub-cluster {sid!r} is not in the federation (its sub-clusters: "
                        f"{', '.join(ids)})",
                    )


def manager_from_conf(conf: Configuration, path: str) -> PolicyManager:
    """The policy manager `yarn.federation.policy-manager` names, with its
    parameters; InputError for an unknown manager or parameters its
    policies would refuse (Hadoop's message)."""
    name = conf.get_str(POLICY_MANAGER, DEFAULT_MANAGER).strip()
    simple = name.rsplit(".", 1)[-1]
    where = conf.sources.get(POLICY_MANAGER, path) if POLICY_MANAGER in conf else path
    if simple not in MANAGERS or name not in (simple, f"{PACKAGE}.manager.{simple}"):
        raise InputError(
            where,
            POLICY_MANAGER,
            f"unknown policy manager {name!r} (Hadoop 3.4.2's: "
            f"{', '.join(sorted(MANAGERS))}, in {PACKAGE}.manager)",
        )
    router_name, amrm_name = MANAGERS[simple]
    params = conf.get_str(POLICY_PARAMS, "")
    pwhere = conf.sources.get(POLICY_PARAMS, path) if POLICY_PARAMS in conf else path
    router_cls, amrm_cls = ROUTER_POLICIES[router_name], AMRM_POLICIES[amrm_name]
    info = WeightedPolicyInfo()
    if router_cls.uses_weights or amrm_cls.uses_weights:
        try:
            info = WeightedPolicyInfo.parse(params)
        except ValueError as e:
            raise InputError(
                pwhere, POLICY_PARAMS, f"{simple}'s weights do not parse: {e}"
            ) from None
        if router_cls.uses_weights and not info.router:
            raise InputError(
                pwhere, POLICY_PARAMS, "routerPolicyWeights: Weight vector cannot be null/empty."
            )
        if amrm_cls.uses_weights and not info.amrm:
            raise InputError(
                pwhere, POLICY_PARAMS, "amrmPolicyWeights: Weight vector cannot be null/empty."
            )
        if router_cls.uses_weights and not any(w > 0 for w in info.router.values()):
            raise InputError(
                pwhere,
                POLICY_PARAMS,
                "routerPolicyWeights: every weight is zero: no application could be routed",
            )
        if amrm_cls.uses_weights and not any(w > 0 for w in info.amrm.values()):
            raise InputError(
                pwhere,
                POLICY_PARAMS,
                "amrmPolicyWeights: The weights used to configure this policy are all set to zero! "
                "(no ResourceRequest could be forwarded with this setting.)",
            )
    if conf.get_bool(LEAST_LOAD, False):
        raise InputError(
            conf.sources.get(LEAST_LOAD, path),
            LEAST_LOAD,
            "emu's AMRMProxy does not emulate the least-load policy selector (it needs the "
            "sub-clusters' enhanced headroom); leave it false",
        )
    return PolicyManager(simple, router_name, amrm_name, info, where)


class PolicyFacade:
    """Which policy decides for a queue (Hadoop's RouterPolicyFacade and
    FederationPolicyUtils.loadAMRMPolicy): the state store's policy for the
    queue's name, else its "*" policy, else the federation's configured
    manager. A router policy is kept per key and reinitialized when the
    store's policy changes: the same class keeps its instance (and its
    random source), and weights equal to the old ones (the headroom alpha
    aside, as WeightedPolicyInfo.equals) change nothing."""

    def __init__(
        self,
        default: PolicyManager,
        stored: dict[str, PolicyManager],
        draws: Draws,
        resolver: Resolver,
        conf: Configuration,
    ) -> None:
        self.default = default
        self.stored = stored
        self.draws = draws
        self.resolver = resolver
        self.conf = conf
        self._routers: dict[str, tuple[PolicyManager, RouterPolicy]] = {}

    def manager(self, queue: str | None) -> tuple[str, PolicyManager]:
        q = queue or DEFAULT_QUEUE
        if q in self.stored:
            return q, self.stored[q]
        if "*" in self.stored:
            return "*", self.stored["*"]
        return "*", self.default

    def router(self, queue: str | None) -> RouterPolicy:
        key, mgr = self.manager(queue)
        cached = self._routers.get(key)
        if cached is not None and cached[0] is mgr:
            return cached[1]
        cls = ROUTER_POLICIES[mgr.router_name]
        if cached is not None and type(cached[1]) is cls:
            policy = cached[1]
            if not _same_weights(policy.info, mgr.info):
                policy.info = mgr.info
        else:
            policy = cls(mgr.info, self.draws, self.resolver)
        self._routers[key] = (mgr, policy)
        return policy

    def amrm(self, queue: str | None, home: str) -> AMRMProxyPolicy:
        """A new AMRMProxy policy for an AM of `queue` homed in `home`."""
        return self.manager(queue)[1].amrm(self.draws, self.resolver, home, self.conf)


def _same_weights(a: WeightedPolicyInfo, b: WeightedPolicyInfo) -> bool:
    return a.router == b.router and a.amrm == b.amrm
