"""Hadoop configuration XML files, read the way `org.apache.hadoop.conf.Configuration` reads them.

A user brings `yarn-site.xml`, `capacity-scheduler.xml` and `sls-runner.xml`
unchanged, so the reader follows Hadoop's parser rather than a generic XML
mapping:

- `<property>` children `<name>` (trimmed), `<value>` (kept verbatim, Hadoop
  trims only in typed getters), `<final>`, `<source>`, `<tag>`, `<description>`;
  the short form `<property name=".." value=".."/>` too.
- A property whose value is absent or empty sets nothing, as in Hadoop.
- A `final` property cannot be overridden by a later definition in the file.
- `<xi:include href="..">` pulls in another file (relative to the including
  one); a missing file is an error unless the include has an `<xi:fallback>`,
  whose properties are used instead.
- `${var}` references are expanded at load, with Hadoop's rules: `${env.NAME}`
  (with `:-` and `-` defaults) reads the environment, a few Java system
  properties (`user.name`, `user.home`, `user.dir`, `java.io.tmpdir`) come
  next, then other properties; an unbound reference stays literal, a
  self-reference leaves the value unexpanded, more than 20 rounds is an error.

Hadoop itself silently skips a `<property>` without a `<name>` and ignores
one whose name misspells a namespace emu reads (`emu.config.property_names`);
here each is an error naming the line, because such a file is almost always
a typo that would otherwise change the run without a word. Each property's source is recorded
as `path:line` so a bad value is reported at the line to fix.

The FairScheduler allocation file (`fair-scheduler.xml`) is a different
format (`<allocations>`), not a property file: `load_xml` rejects it by its
root element and `fair_allocation_file` only locates it.
"""

from __future__ import annotations

import getpass
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat
from xml.sax.saxutils import escape

from emu.config.configuration import Configuration
from emu.config.property_names import check_name
from emu.errors import InputError

PROPERTY_FILES = ("sls-runner.xml", "yarn-site.xml", "capacity-scheduler.xml")
ALLOCATION_FILE_KEY = "yarn.scheduler.fair.allocation.file"
ALLOCATION_FILE_DEFAULT = "fair-scheduler.xml"

_MAX_SUBST = 20  # Hadoop's Configuration.MAX_SUBST
_VAR = re.compile(r"\$\{[^}$ ]+\}")
_TOKEN_ELEMENTS = frozenset({"name", "value", "final", "source", "tag"})


@dataclass(slots=True)
class _Property:
    name: str
    value: str | None
    final: bool
    line: int
    path: str


class _Parser:
    """One expat pass over one file, collecting properties in document order."""

    def __init__(self, path: Path, depth: int) -> None:
        self.path = path
        self.depth = depth
        self.parser = expat.ParserCreate(namespace_separator=" ")
        self.parser.StartElementHandler = self._start
        self.parser.EndElementHandler = self._end
        self.parser.CharacterDataHandler = self._chars
        self.results: list[_Property] = []
        self.root_seen = False
        self.current: _Property | None = None
        self.token: list[str] | None = None
        self.include_missing = False
        self.include_line = 0
        self.in_fallback = False

    def parse(self) -> list[_Property]:
        try:
            with open(self.path, "rb") as f:
                self.parser.ParseFile(f)
        except expat.ExpatError as e:
            reason = expat.ErrorString(e.code)
            raise InputError(str(self.path), e.lineno, f"malformed XML: {reason}") from None
        except OSError as e:
            raise InputError(str(self.path), None, f"cannot read: {e.strerror}") from None
        return self.results

    def _line(self) -> int:
        return self.parser.CurrentLineNumber

    def _start(self, tag: str, attrs: dict[str, str]) -> None:
        local = tag.rsplit(" ", 1)[-1]
        if not self.root_seen:
            self.root_seen = True
            if local != "configuration":
                raise InputError(
                    str(self.path),
                    self._line(),
                    f"root element is <{local}>, expected <configuration>; "
                    "a FairScheduler allocation file is not a property file",
                )
            return
        if local == "property":
            self.current = _Property(
                name=(attrs.get("name") or "").strip(),
                value=attrs.get("value") or None,
                final=attrs.get("final") == "true",
                line=self._line(),
                path=str(self.path),
            )
        elif local in _TOKEN_ELEMENTS and self.current is not None:
            self.token = []
        elif local == "include":
            self._include(attrs.get("href"))
        elif local == "fallback":
            self.in_fallback = True

    def _chars(self, data: str) -> None:
        if self.token is not None:
            self.token.append(data)

    def _end(self, tag: str) -> None:
        local = tag.rsplit(" ", 1)[-1]
        prop = self.current
        if local in _TOKEN_ELEMENTS and prop is not None and self.token is not None:
            text = "".join(self.token)
            self.token = None
            if local == "name" and text.strip():
                prop.name = text.strip()
            elif local == "value" and text:
                prop.value = text
            elif local == "final":
                prop.final = text == "true"
        elif local == "property" and prop is not None:
            self.current = None
            if not prop.name:
                raise InputError(str(self.path), prop.line, "<property> without a <name>")
            typo = check_name(prop.name)
            if typo is not None:
                raise InputError(str(self.path), prop.line, typo)
            if not self.in_fallback or self.include_missing:
                self.results.append(prop)
        elif local == "include":
            if self.include_missing and not self.in_fallback:
                raise InputError(
                    str(self.path), self.include_line, "included file not found, and no fallback"
                )
            self.include_missing = False
            self.in_fallback = False

    def _include(self, href: str | None) -> None:
        if not href:
            return
        target = Path(href)
        if not target.is_absolute():
            target = self.path.parent / target
        self.include_line = self._line()
        if not target.is_file():
            self.include_missing = True
            return
        if self.depth >= _MAX_SUBST:
            raise InputError(str(self.path), self.include_line, "includes nested too deeply")
        self.results.extend(_Parser(target, self.depth + 1).parse())


def _system_property(name: str) -> str | None:
    """The Java system properties Hadoop configurations commonly reference."""
    if name == "user.name":
        return getpass.getuser()
    if name == "user.home":
        return str(Path.home())
    if name == "user.dir":
        return os.getcwd()
    if name == "java.io.tmpdir":
        return tempfile.gettempdir()
    return None


def _environment(spec: str) -> str | None:
    """`${env.NAME}`, `${env.NAME:-default}` (default if unset or empty) and
    `${env.NAME-default}` (default if unset), as Hadoop 3 resolves them."""
    for i, c in enumerate(spec):
        if c == ":" and spec[i + 1 : i + 2] == "-":
            val = os.environ.get(spec[:i])
            return val if val else spec[i + 2 :]
        if c == "-":
            val = os.environ.get(spec[:i])
            return spec[i + 1 :] if val is None else val
    return os.environ.get(spec)


def expand(value: str, lookup: Callable[[str], str | None]) -> str:
    """Substitute `${var}` references in `value` as Hadoop's
    `Configuration.substituteVars` does; `lookup` resolves property names.

    Raises ValueError when substitution does not terminate within 20 rounds.
    """
    expr = value
    for _ in range(_MAX_SUBST):
        m = _VAR.search(expr)
        if m is None:
            return expr
        ref = m.group()
        var = ref[2:-1]
        if var.startswith("env.") and len(var) > 4:
            val = _environment(var[4:])
        else:
            val = _system_property(var)
        if val is None:
            val = lookup(var)
        if val is None:
            return expr
        if ref in val:
            return value
        expr = expr[: m.start()] + val + expr[m.end() :]
    raise ValueError(f"variable substitution depth too large: {_MAX_SUBST} {value}")


def _expand_all(conf: Configuration, lookup: Callable[[str], str | None]) -> None:
    for name in list(conf):
        raw = conf.get(name)
        if raw is None or "${" not in raw:
            continue
        try:
            conf.set(name, expand(raw, lookup), conf.sources.get(name, "set"))
        except ValueError as e:
            raise InputError(conf.sources.get(name, "configuration"), name, str(e)) from None


def configuration_xml(props: dict[str, str]) -> str:
    """A Hadoop property file (`<configuration>`) holding `props`, in order:
    what the benchmark and the fidelity fuzzer write for Hadoop and emu to read."""
    body = "".join(
        f"  <property>\n    <name>{escape(k)}</name>\n    <value>{escape(v)}</value>\n"
        "  </property>\n"
        for k, v in props.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


def load_xml(path: str | os.PathLike[str]) -> Configuration:
    """Read one Hadoop property file into a `Configuration`.

    Raises InputError(path, line, reason) for malformed XML, a root element
    other than `<configuration>`, a `<property>` without a name, or a missing
    include without fallback.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), None, "no such file")
    raw: dict[str, str] = {}
    sources: dict[str, str] = {}
    finals: set[str] = set()
    for prop in _Parser(p, 0).parse():
        if prop.name in finals or prop.value is None:
            continue
        raw[prop.name] = prop.value
        sources[prop.name] = f"{prop.path}:{prop.line}"
        if prop.final:
            finals.add(prop.name)
    conf = Configuration()
    for name, value in raw.items():
        conf.set(name, value, sources[name])
    _expand_all(conf, raw.get)
    return conf


def load_conf_dir(directory: str | os.PathLike[str]) -> dict[str, Configuration]:
    """The property files of a Hadoop configuration directory, by file name.

    Returns whichever of `sls-runner.xml`, `yarn-site.xml` and
    `capacity-scheduler.xml` exist. References left unbound inside one file
    are then resolved against the others, as they would be in Hadoop where
    the RM's configuration holds all of them.
    """
    d = Path(directory)
    if not d.is_dir():
        raise InputError(str(d), None, "no such directory")
    confs = {name: load_xml(d / name) for name in PROPERTY_FILES if (d / name).is_file()}

    def lookup(var: str) -> str | None:
        for conf in confs.values():
            if var in conf:
                return conf.get(var)
        return None

    for conf in confs.values():
        _expand_all(conf, lookup)
    return confs


def fair_allocation_file(
    directory: str | os.PathLike[str], yarn_site: Configuration | None = None
) -> Path | None:
    """Where the FairScheduler allocation file is, or None if there is none.

    Follows `yarn.scheduler.fair.allocation.file` (default
    `fair-scheduler.xml`): an absolute path is taken as is, a relative one is
    looked up in the configuration directory, which is Hadoop's classpath.
    """
    name = ALLOCATION_FILE_DEFAULT
    if yarn_site is not None:
        name = yarn_site.get_str(ALLOCATION_FILE_KEY, ALLOCATION_FILE_DEFAULT)
    candidate = Path(name)
    if not candidate.is_absolute():
        candidate = Path(directory) / candidate
    return candidate if candidate.is_file() else None
