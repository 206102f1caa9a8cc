"""The federation state store: which sub-clusters are alive and how loaded,
and each application's home.

YARN keeps this in a FederationStateStore (memory, ZooKeeper or SQL) that
every sub-cluster RM heartbeats into (`FederationStateStoreHeartbeat`, every
`yarn.federation.state-store.heartbeat-interval-secs`), the Router reads to
route, and the AMRMProxy and Global Policy Generator read to split and
weigh. Here it is one object the federation's actors share in a process;
membership is kept as Hadoop's SubClusterInfo is: state, last heartbeat and
the capability the RM reported (its cluster metrics).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from emu.federation.policies import Membership as PolicyView
from emu.federation.policies import PolicyManager, concurrent_map_order

HEARTBEAT_INTERVAL = "yarn.federation.state-store.heartbeat-interval-secs"
HEARTBEAT_INTERVAL_DEFAULT_S = 300
INITIAL_DELAY = "yarn.federation.state-store.heartbeat.initial-delay"
INITIAL_DELAY_DEFAULT_MS = 30_000
CLEANER_INTERVAL = "yarn.router.subcluster.cleaner.interval.time"
CLEANER_INTERVAL_DEFAULT_MS = 60_000
HEARTBEAT_EXPIRATION = "yarn.router.subcluster.heartbeat.expiration.time"
HEARTBEAT_EXPIRATION_DEFAULT_MS = 1_800_000

NEW = "SC_NEW"
RUNNING = "SC_RUNNING"
UNHEALTHY = "SC_UNHEALTHY"
LOST = "SC_LOST"


@dataclass
class Member:
    """One sub-cluster as the store knows it (Hadoop's SubClusterInfo)."""

    id: str
    state: str = RUNNING
    last_heartbeat_ms: int = -1
    capability: dict[str, Any] = field(default_factory=dict)
    """The RM's cluster metrics at its last heartbeat (what Hadoop's
    heartbeat carries as JSON: ClusterMetricsInfo)."""

    @property
    def active(self) -> bool:
        return self.state == RUNNING


@dataclass
class FederationStateStore:
    """Membership, app -> home sub-cluster, and per-queue policies."""

    members: dict[str, Member] = field(default_factory=dict)
    homes: dict[str, str] = field(default_factory=dict)
    """App id -> its home sub-cluster, as the Router recorded it."""
    policies: dict[str, PolicyManager] = field(default_factory=dict)
    """Queue name (or "*") -> its policy, as the Global Policy Generator wrote it."""

    _view: PolicyView | None = field(default=None, init=False, repr=False)
    """What the policies read, kept until membership changes (every allocate
    through an AMRMProxy reads it)."""

    def register(self, sid: str, now_ms: int, state: str = RUNNING) -> None:
        """A sub-cluster RM joins (again): its membership record replaced."""
        self._view = None
        if sid in self.members:
            m = self.members[sid]
            m.state, m.last_heartbeat_ms = state, now_ms
            return
        self.members[sid] = Member(sid, state, now_ms)

    def heartbeat(self, sid: str, now_ms: int, capability: dict[str, Any]) -> None:
        self._view = None
        m = self.members[sid]
        m.last_heartbeat_ms = now_ms
        m.capability = capability
        m.state = RUNNING

    def mark(self, sid: str, state: str) -> None:
        self._view = None
        self.members[sid].state = state

    def membership(self) -> PolicyView:
        """The active sub-clusters and their last reported available memory."""
        if self._view is None:
            active = self.active()
            mbs = {s: self.members[s].capability.get("available_mb") for s in active}
            self._view = PolicyView(active, mbs)
        return self._view

    def active(self) -> list[str]:
        """Active sub-clusters in the order Hadoop's MemoryFederationStateStore
        lists them (its membership is a ConcurrentHashMap filled in
        registration order)."""
        return [s for s in concurrent_map_order(list(self.members)) if self.members[s].active]
