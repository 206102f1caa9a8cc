"""Resource vectors and the two resource calculators YARN ships.

A `Resource` is memory (MB), vcores and, optionally, named extra resource
types (`yarn.resource-types`), kept as a sorted tuple so most clusters, which
have none, pay nothing for them. Instances are immutable: the scheduler hot
path shares them freely and never copies.

Calculators answer the questions schedulers ask ("what is granted for this
ask", "does it fit", "how many times", "which is bigger") the way Hadoop's
`DefaultResourceCalculator` (memory only, even for fit: a container gets one
vcore and vcores are over-committed) and `DominantResourceCalculator` (every
type; DRF: compare dominant shares) do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

MEMORY = "memory-mb"
VCORES = "vcores"


_SHARED: dict[tuple[int, int], Resource] = {}
_SHARED_MAX = 4096  # distinct <memory, vcores> sizes kept by `Resource.from_wire`


class Resource:
    """An immutable resource vector: memory in MB, vcores, extra named types."""

    __slots__ = ("extra", "memory", "vcores")

    memory: int
    vcores: int
    extra: tuple[tuple[str, int], ...]

    def __init__(self, memory: int = 0, vcores: int = 0, extra: Any = ()) -> None:
        self.memory = int(memory)
        self.vcores = int(vcores)
        if extra:
            items = extra.items() if isinstance(extra, Mapping) else extra
            extra = tuple(sorted((str(k), int(v)) for k, v in items))
        self.extra = extra or ()

    # --- wire form -------------------------------------------------------
    def to_wire(self) -> dict[str, int]:
        """The protocol's map form: YARN resource names to integer amounts."""
        out = {MEMORY: self.memory, VCORES: self.vcores}
        if self.extra:
            out.update(self.extra)
        return out

    @classmethod
    def from_wire(cls, m: Mapping[str, Any]) -> Resource:
        """The resource of a wire map. Plain <memory, vcores> maps give one
        shared instance per size (immutable, so sharing is free): every
        container launch, allocation and task plan decodes one, and a run
        holds hundreds of thousands of them in a handful of sizes."""
        if len(m) == 2:
            memory = m.get(MEMORY)
            vcores = m.get(VCORES)
            if type(memory) is int and type(vcores) is int:
                key = (memory, vcores)
                found = _SHARED.get(key)
                if found is None:
                    found = _make(memory, vcores, ())
                    if len(_SHARED) < _SHARED_MAX:
                        _SHARED[key] = found
                return found
        extra = [(k, v) for k, v in m.items() if k not in (MEMORY, VCORES)]
        return cls(m.get(MEMORY, 0), m.get(VCORES, 0), extra)

    # --- arithmetic ------------------------------------------------------
    def _merge(self, other: Resource, sign: int) -> tuple[tuple[str, int], ...]:
        if not self.extra and not other.extra:
            return ()
        merged = dict(self.extra)
        for k, v in other.extra:
            merged[k] = merged.get(k, 0) + sign * v
        return tuple(sorted(merged.items()))

    def __add__(self, other: Resource) -> Resource:
        if not self.extra and not other.extra:
            return _make(self.memory + other.memory, self.vcores + other.vcores, ())
        return Resource(
            self.memory + other.memory, self.vcores + other.vcores, self._merge(other, 1)
        )

    def __sub__(self, other: Resource) -> Resource:
        if not self.extra and not other.extra:
            return _make(self.memory - other.memory, self.vcores - other.vcores, ())
        return Resource(
            self.memory - other.memory, self.vcores - other.vcores, self._merge(other, -1)
        )

    def __mul__(self, k: float) -> Resource:
        return Resource(
            int(self.memory * k),
            int(self.vcores * k),
            tuple((n, int(v * k)) for n, v in self.extra),
        )

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, Resource):
            return NotImplemented
        if self.memory != other.memory or self.vcores != other.vcores:
            return False
        return self.extra == other.extra or dict(self.extra) == dict(other.extra)

    def __hash__(self) -> int:
        return hash((self.memory, self.vcores, self.extra))

    def __repr__(self) -> str:
        extra = "".join(f", {k}: {v}" for k, v in self.extra)
        return f"<memory:{self.memory}, vCores:{self.vcores}{extra}>"

    def fits_in(self, other: Resource) -> bool:
        """Every component of self is <= the same component of other."""
        if self.memory > other.memory or self.vcores > other.vcores:
            return False
        if self.extra:
            avail = dict(other.extra)
            return all(v <= avail.get(k, 0) for k, v in self.extra)
        return True

    def is_zero(self) -> bool:
        return self.memory == 0 and self.vcores == 0 and all(v == 0 for _, v in self.extra)

    def any_negative(self) -> bool:
        return self.memory < 0 or self.vcores < 0 or any(v < 0 for _, v in self.extra)

    def components(self) -> dict[str, int]:
        return self.to_wire()


def _make(memory: int, vcores: int, extra: tuple[tuple[str, int], ...]) -> Resource:
    """A resource from amounts already in canonical form (ints, `extra`
    sorted with str names and int amounts), skipping `__init__`'s coercion:
    the scheduler's arithmetic builds one per container event."""
    r = Resource.__new__(Resource)
    r.memory = memory
    r.vcores = vcores
    r.extra = extra
    return r


ZERO = Resource(0, 0)


def _component_extra(a: Resource, b: Resource, pick: Any) -> dict[str, int]:
    """`pick` of the two amounts of each extra type either names; a type a
    resource does not name is 0 of it."""
    if not a.extra and not b.extra:
        return {}
    ea, eb = dict(a.extra), dict(b.extra)
    return {k: pick(ea.get(k, 0), eb.get(k, 0)) for k in sorted(ea.keys() | eb.keys())}


def component_max(a: Resource, b: Resource) -> Resource:
    """`Resources.componentwiseMax`."""
    if not a.extra and not b.extra:
        return _make(max(a.memory, b.memory), max(a.vcores, b.vcores), ())
    return Resource(max(a.memory, b.memory), max(a.vcores, b.vcores), _component_extra(a, b, max))


def component_min(a: Resource, b: Resource) -> Resource:
    """`Resources.componentwiseMin`."""
    if not a.extra and not b.extra:
        return _make(min(a.memory, b.memory), min(a.vcores, b.vcores), ())
    return Resource(min(a.memory, b.memory), min(a.vcores, b.vcores), _component_extra(a, b, min))


def _normalize_one(value: int, lo: int, hi: int, inc: int) -> int:
    value = max(value, lo)
    if inc > 0:
        value = int(math.ceil(value / inc) * inc)
    return min(value, hi)


def normalize(ask: Resource, minimum: Resource, maximum: Resource, step: Resource) -> Resource:
    """Round an ask up to a multiple of the increment, at least the minimum,
    and at most the maximum, in every resource type, as YARN's
    `DominantResourceCalculator.normalize` does."""
    extra = {}
    mins, maxs, steps = dict(minimum.extra), dict(maximum.extra), dict(step.extra)
    for k, v in ask.extra:
        extra[k] = _normalize_one(v, mins.get(k, 0), maxs.get(k, v), steps.get(k, 1))
    return Resource(
        _normalize_one(ask.memory, minimum.memory, maximum.memory, step.memory),
        _normalize_one(ask.vcores, minimum.vcores, maximum.vcores, step.vcores),
        extra,
    )


class ResourceCalculator:
    """Memory only, for every question (Hadoop's `DefaultResourceCalculator`,
    the FifoScheduler's and the CapacityScheduler's default): a container is
    granted its memory and one vcore whatever it asked for, and fits where
    its memory fits, so vcores are over-committed and extra resource types
    are never granted."""

    name = "default"

    def compare(self, cluster: Resource, a: Resource, b: Resource) -> int:
        return (a.memory > b.memory) - (a.memory < b.memory)

    def ratio(self, a: Resource, b: Resource) -> float:
        """a / b for the resource that matters to this calculator."""
        return a.memory / b.memory if b.memory else (math.inf if a.memory else 0.0)

    def share(self, cluster: Resource, r: Resource) -> float:
        """r as a fraction of the cluster, as used for ordering queues and apps."""
        return r.memory / cluster.memory if cluster.memory else 0.0

    def divide_and_count(self, available: Resource, required: Resource) -> int:
        """How many `required` fit in `available` (`computeAvailableContainers`)."""
        return available.memory // required.memory if required.memory else 1 << 31

    def fits(self, ask: Resource, available: Resource) -> bool:
        """Whether `ask` fits in `available` (`fitsIn`): memory alone."""
        return ask.memory <= available.memory

    def normalize(
        self, ask: Resource, minimum: Resource, maximum: Resource, step: Resource
    ) -> Resource:
        """The container a scheduler using this calculator grants for `ask`
        (`normalize` then `Resources.createResource(memory)`): memory rounded
        as `normalize` does, one vcore, none of any extra type, whatever the
        ask said, so vcore and extra-type asks are not honoured."""
        step_mb = step.memory or minimum.memory
        memory = _normalize_one(ask.memory, minimum.memory, maximum.memory, step_mb)
        return Resource(memory, 1 if memory > 0 else 0)


def _types(*rs: Resource) -> list[str]:
    """The extra resource types named by any of `rs`, in name order; a type a
    resource does not name counts as 0 of it."""
    names: set[str] = set()
    for r in rs:
        names.update(k for k, _ in r.extra)
    return sorted(names)


def _has_all(r: Resource, types: list[str]) -> bool:
    amounts = dict(r.extra)
    return all(amounts.get(t, 0) for t in types)


def dominance_compare(a: Resource, b: Resource) -> int:
    """1 if `a` is larger in some type and smaller in none, -1 for the
    reverse, 0 when equal or when each is larger in some type
    (`DominantResourceCalculator.compare(lhs, rhs)`)."""
    greater = a.memory > b.memory or a.vcores > b.vcores
    less = a.memory < b.memory or a.vcores < b.vcores
    if a.extra or b.extra:
        ea, eb = dict(a.extra), dict(b.extra)
        for t in _types(a, b):
            x, y = ea.get(t, 0), eb.get(t, 0)
            greater = greater or x > y
            less = less or x < y
    if greater == less:
        return 0
    return 1 if greater else -1


class DominantResourceCalculator(ResourceCalculator):
    """Every resource type counts (Hadoop's `DominantResourceCalculator`):
    compare by dominant share of the cluster, the largest of a resource's
    per-type shares, ties broken by the next-largest share; fit, count and
    ratio look at memory, vcores and every extra type."""

    name = "dominant"

    def _shares(self, cluster: Resource, r: Resource, extra_types: list[str]) -> list[float]:
        shares = [
            r.memory / cluster.memory if cluster.memory else 0.0,
            r.vcores / cluster.vcores if cluster.vcores else 0.0,
        ]
        if extra_types:
            c, v = dict(cluster.extra), dict(r.extra)
            shares.extend(v.get(k, 0) / c[k] if c.get(k) else 0.0 for k in extra_types)
        shares.sort(reverse=True)
        return shares

    def compare(self, cluster: Resource, a: Resource, b: Resource) -> int:
        """By dominant share; when the cluster has none of some type (no
        nodes yet, or a declared type no node has), shares are undefined
        and Hadoop falls back to `dominance_compare`."""
        types = _types(cluster, a, b) if a.extra or b.extra or cluster.extra else []
        if not cluster.memory or not cluster.vcores or (types and not _has_all(cluster, types)):
            return dominance_compare(a, b)
        sa, sb = self._shares(cluster, a, types), self._shares(cluster, b, types)
        return (sa > sb) - (sa < sb)

    def share(self, cluster: Resource, r: Resource) -> float:
        return self._shares(cluster, r, _types(r))[0]

    def ratio(self, a: Resource, b: Resource) -> float:
        def one(x: int, y: int) -> float:
            return x / y if y else (math.inf if x else 0.0)

        best = max(one(a.memory, b.memory), one(a.vcores, b.vcores))
        if a.extra or b.extra:
            ea, eb = dict(a.extra), dict(b.extra)
            for k in _types(a, b):
                best = max(best, one(ea.get(k, 0), eb.get(k, 0)))
        return best

    def divide_and_count(self, available: Resource, required: Resource) -> int:
        counts = []
        if required.memory:
            counts.append(available.memory // required.memory)
        if required.vcores:
            counts.append(available.vcores // required.vcores)
        if required.extra:
            avail = dict(available.extra)
            counts.extend(avail.get(k, 0) // v for k, v in required.extra if v)
        return min(counts) if counts else 1 << 31

    def fits(self, ask: Resource, available: Resource) -> bool:
        return ask.fits_in(available)

    def normalize(
        self, ask: Resource, minimum: Resource, maximum: Resource, step: Resource
    ) -> Resource:
        return normalize(ask, minimum, maximum, step)


def calculator(name: str) -> ResourceCalculator:
    """A calculator from a short name or Hadoop's class name."""
    if name.endswith("DominantResourceCalculator") or name in ("dominant", "drf"):
        return DominantResourceCalculator()
    if name.endswith("DefaultResourceCalculator") or name in ("default", "memory", ""):
        return ResourceCalculator()
    raise ValueError(f"unknown resource calculator {name!r}")
