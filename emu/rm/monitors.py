"""Expiry monitors, as YARN's AbstractLivelinessMonitor.

A monitor remembers when each registered id last pinged; `expired(now)`
returns, in a fixed order, the ids whose last ping is older than the expiry
interval, and forgets them. The RM calls it from one periodic task per
monitor (every interval/3, as YARN does) and turns each id into an EXPIRE
event: NM liveness -> node LOST, AM liveness -> attempt FAILED, container
allocation -> container EXPIRED.
"""

from __future__ import annotations


class ExpiryMonitor:
    """Last-ping times by id, and which ids have gone quiet for too long."""

    def __init__(self, name: str, expire_ms: int) -> None:
        self.name = name
        self.expire_ms = expire_ms
        self._last: dict[str, int] = {}
        self.expired_total = 0

    @property
    def check_interval_ms(self) -> int:
        return max(1, self.expire_ms // 3)

    def register(self, ident: str, now_ms: int) -> None:
        self._last[ident] = now_ms

    def ping(self, ident: str, now_ms: int) -> None:
        if ident in self._last:
            self._last[ident] = now_ms

    @property
    def last_pings(self) -> dict[str, int]:
        """Last ping by registered id, for a hot loop pinging many: setting
        a present id's entry is `ping`; adding or removing one is not."""
        return self._last

    def unregister(self, ident: str) -> None:
        self._last.pop(ident, None)

    def __contains__(self, ident: object) -> bool:
        return ident in self._last

    def __len__(self) -> int:
        return len(self._last)

    def expired(self, now_ms: int) -> list[str]:
        limit = now_ms - self.expire_ms
        gone = sorted(i for i, t in self._last.items() if t <= limit)
        for i in gone:
            del self._last[i]
        self.expired_total += len(gone)
        return gone
