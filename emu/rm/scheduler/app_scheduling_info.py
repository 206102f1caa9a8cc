"""An attempt's outstanding asks (Hadoop's AppSchedulingInfo): asks by
priority and resource name with replace-on-update semantics, and the
locality rules that say which ask a node may satisfy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from emu.resources import ZERO, Resource
from emu.rm.scheduler import javahash
from emu.rm.scheduler.locality import ANY, NODE_LOCAL, OFF_SWITCH, RACK_LOCAL
from emu.rm.scheduler.sorted_list import set_member

if TYPE_CHECKING:
    from emu.rm.scheduler.scheduler_node import SchedulerNode


class Ask:
    """One outstanding ResourceRequest: `num` containers of `capability` at
    `priority` on `name` (a host, a rack, or `*`)."""

    __slots__ = ("capability", "name", "num", "priority", "relax")

    def __init__(
        self, priority: int, name: str, capability: Resource, num: int, relax: bool
    ) -> None:
        self.priority = priority
        self.name = name
        self.capability = capability
        self.num = num
        self.relax = relax


class AppSchedulingInfo:
    """An attempt's outstanding asks, as YARN's AppSchedulingInfo.

    An ask replaces the previous ask of the same (priority, resource name),
    as in YARN: the AM always sends the full current count. Placing a
    container decrements the matching host, rack and `*` asks according to
    the locality it was placed at.
    """

    __slots__ = ("keys_peak", "locations", "locations_peak", "pending", "priorities", "requests")

    def __init__(self) -> None:
        self.requests: dict[int, dict[str, Ask]] = {}
        self.priorities: list[int] = []
        self.pending = ZERO
        self.locations: dict[int, dict[str, Resource]] = {}
        """The resource names Hadoop's LocalityAppPlacementAllocator holds
        per priority (its resourceRequestMap's keys, in the order they were
        put, with the capability last asked under each): every name an ask
        named, zero counts included, until a placement takes its count to 0
        (the map, once the `*` ask is gone and nothing else is left), or an
        ask for no `*` containers drops the priority's map whole. Its
        size is getUniqueLocationAsks, which the CapacityScheduler's delay
        scheduling reads; `requests` drops zero-count asks sooner. The
        priorities are AppSchedulingInfo's schedulerKeyToAppPlacementAllocator
        keys, in the order their allocators were made."""
        self.locations_peak: dict[int, int] = {}
        """Per priority, the most names its resourceRequestMap has held (the
        size of that ConcurrentHashMap's table follows it)."""
        self.keys_peak = 0
        """The most priorities schedulerKeyToAppPlacementAllocator has held."""

    def update(self, asks: list[Ask]) -> None:
        locations = self.locations
        gone: list[int] = []
        for ask in asks:
            if ask.name == ANY and ask.num <= 0:
                gone.append(ask.priority)
            names = locations.get(ask.priority)
            if names is None:
                names = locations[ask.priority] = {}
                self.locations_peak[ask.priority] = 0
                if len(locations) > self.keys_peak:
                    self.keys_peak = len(locations)
            names[ask.name] = ask.capability
            if len(names) > self.locations_peak[ask.priority]:
                self.locations_peak[ask.priority] = len(names)
            by_name = self.requests.get(ask.priority)
            if by_name is None:
                if ask.num <= 0:
                    continue
                by_name = self.requests[ask.priority] = {}
            old = by_name.get(ask.name)
            if ask.name == ANY:
                if old is not None:
                    self.pending = self.pending - old.capability * old.num
                self.pending = self.pending + ask.capability * max(ask.num, 0)
            if ask.num <= 0 and ask.name != ANY:
                by_name.pop(ask.name, None)
            else:
                by_name[ask.name] = ask
            self._refresh(ask.priority)
        for priority in gone:
            # AppSchedulingInfo.updatePendingResources: a `*` ask of no
            # containers removes the priority's allocator, names and all.
            locations.pop(priority, None)
            self.locations_peak.pop(priority, None)

    def resource_requests(self) -> list[tuple[int, str, Resource]]:
        """(priority, resource name, capability) of every ask Hadoop's maps
        hold, zero counts included, in the order
        AppSchedulingInfo.getAllResourceRequests lists them: the
        ConcurrentHashMap of scheduler keys, then each allocator's
        ConcurrentHashMap of resource names (see emu.rm.scheduler.javahash)."""
        locations = self.locations
        if not locations:
            return []
        priorities = list(locations)
        if len(priorities) > 1:
            priorities = javahash.hashmap_order(
                priorities,
                [javahash.priority_key_hash(p) for p in priorities],
                javahash.concurrent_capacity_for(self.keys_peak),
            )
        out: list[tuple[int, str, Resource]] = []
        for p in priorities:
            held = locations[p]
            names = list(held)
            if len(names) > 1:
                names = javahash.hashmap_order(
                    names,
                    [javahash.string_hash(n) for n in names],
                    javahash.concurrent_capacity_for(self.locations_peak[p]),
                )
            out.extend((p, n, held[n]) for n in names)
        return out

    def _refresh(self, priority: int) -> None:
        by_name = self.requests.get(priority)
        any_ask = by_name.get(ANY) if by_name else None
        live = any_ask is not None and any_ask.num > 0
        set_member(self.priorities, priority, live)
        if by_name is not None and not live and all(a.num <= 0 for a in by_name.values()):
            del self.requests[priority]

    def get(self, priority: int, name: str) -> Ask | None:
        by_name = self.requests.get(priority)
        return by_name.get(name) if by_name else None

    def allocated(self, node_type: str, node: SchedulerNode, priority: int) -> None:
        """Decrement asks for one container placed at `node_type` locality."""
        by_name = self.requests[priority]
        names = (
            (node.host, node.rack, ANY)
            if node_type == NODE_LOCAL
            else (node.rack, ANY)
            if node_type == RACK_LOCAL
            else (ANY,)
        )
        held = self.locations.get(priority)
        for name in names:
            ask = by_name.get(name)
            if ask is None:
                continue
            ask.num -= 1
            if ask.num == 0 and held is not None:
                held.pop(name, None)  # decResourceRequest / decrementOutstanding
            if name == ANY:
                self.pending = self.pending - ask.capability
            elif ask.num <= 0:
                del by_name[name]
        if held is not None and not held:
            del self.locations[priority]
            del self.locations_peak[priority]
        self._refresh(priority)

    def location_count(self, priority: int) -> int:
        """LocalityAppPlacementAllocator.getUniqueLocationAsks."""
        held = self.locations.get(priority)
        return len(held) if held is not None else 0

    def has_pending(self) -> bool:
        return bool(self.priorities)

    def can_place(self, priority: int, node: SchedulerNode, node_type: str) -> Ask | None:
        """The ask to satisfy if a container of `priority` may go on `node`
        at `node_type` locality, following YARN's locality and
        relax-locality rules; None if it may not."""
        by_name = self.requests.get(priority)
        if not by_name:
            return None
        any_ask = by_name.get(ANY)
        if any_ask is None or any_ask.num <= 0:
            return None
        if node_type == OFF_SWITCH:
            if not any_ask.relax:
                return None
            rack_ask = by_name.get(node.rack)
            if rack_ask is not None and rack_ask.num > 0 and not rack_ask.relax:
                return None
            return any_ask
        rack_ask = by_name.get(node.rack)
        if rack_ask is None or rack_ask.num <= 0:
            return None
        if node_type == RACK_LOCAL:
            return rack_ask if rack_ask.relax or _strict_rack(by_name, node) else None
        host_ask = by_name.get(node.host)
        if host_ask is None or host_ask.num <= 0:
            return None
        return host_ask


def _strict_rack(by_name: dict[str, Ask], node: SchedulerNode) -> bool:
    """A rack ask with relax=False still allows placement on that rack when
    no host-level ask names a specific node (a rack-strict request)."""
    return not any(n not in (ANY, node.rack) and a.num > 0 for n, a in by_name.items())
