"""A set of Hadoop properties, with typed getters that name the culprit.

Mirrors the part of `org.apache.hadoop.conf.Configuration` emu needs: string
properties by name, later sources override earlier ones, and typed reads. A
value that does not parse raises `InputError` naming the property and the file
it came from, so the user knows which line of which XML to fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from emu.errors import InputError

T = TypeVar("T")

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_TIME_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


class Configuration:
    """Hadoop properties. `sources[name]` says where a value came from
    (a file path and line, or "default" / "scenario")."""

    def __init__(self, props: Mapping[str, str] | None = None, source: str = "default") -> None:
        self._props: dict[str, str] = {}
        self.sources: dict[str, str] = {}
        for k, v in (props or {}).items():
            self.set(k, v, source)

    def set(self, name: str, value: object, source: str = "set") -> None:
        self._props[name] = str(value)
        self.sources[name] = source

    def update(self, other: Configuration) -> None:
        for name in other:
            self.set(name, other._props[name], other.sources.get(name, "set"))

    def __contains__(self, name: object) -> bool:
        return name in self._props

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._props))

    def __len__(self) -> int:
        return len(self._props)

    def get(self, name: str, default: str | None = None) -> str | None:
        v = self._props.get(name)
        return default if v is None else v.strip()

    def _bad(self, name: str, kind: str) -> InputError:
        return InputError(
            self.sources.get(name, "configuration"),
            name,
            f"expected {kind}, got {self._props[name]!r}",
        )

    def get_str(self, name: str, default: str) -> str:
        v = self.get(name)
        return default if v is None or v == "" else v

    def _parsed(self, name: str, default: T, parse: Callable[[str], T], kind: str) -> T:
        """`name`'s value through `parse` (unset or empty: `default`); one
        that does not parse is refused as not being `kind`."""
        v = self.get(name)
        if v is None or v == "":
            return default
        try:
            return parse(v)
        except ValueError:
            raise self._bad(name, kind) from None

    def get_int(self, name: str, default: int) -> int:
        return self._parsed(name, default, int, "an integer")

    def get_float(self, name: str, default: float) -> float:
        return self._parsed(name, default, float, "a number")

    def get_bool(self, name: str, default: bool) -> bool:
        v = self.get(name)
        if v is None or v == "":
            return default
        low = v.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise self._bad(name, "true or false")

    def get_time_ms(self, name: str, default: int) -> int:
        """A duration in ms; Hadoop's `getTimeDuration` suffixes (ms, s, m,
        h, d) are accepted, a bare number is taken as ms."""
        v = self.get(name)
        if v is None or v == "":
            return default
        low = v.lower()
        for suffix in ("ms", "s", "m", "h", "d"):
            if low.endswith(suffix) and low[: -len(suffix)].strip().lstrip("-").isdigit():
                return int(low[: -len(suffix)]) * _TIME_UNITS_MS[suffix]
        try:
            return int(v)
        except ValueError:
            raise self._bad(name, "a duration") from None

    def get_list(self, name: str, default: list[str] | None = None) -> list[str]:
        v = self.get(name)
        if v is None or v == "":
            return list(default or [])
        return [p.strip() for p in v.split(",") if p.strip()]
