"""Cutting a diverging case down to a small one that diverges the same way.

Greedy reduction over the case's structure: each step proposes smaller
variants (the jobs submitted after the divergence dropped, half the jobs,
one job, fewer containers per task group, a task group, a host preference,
nodes, one setting back to Hadoop's default) and keeps the first that both
implementations still replay to the end and that still diverges with the
same kind of first divergence; it stops when no variant is kept or the
budget of trial replays is spent. A variant Hadoop or emu refuses is simply
not kept, so the result stays a valid input by construction.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from emu.fidelity import compare
from emu.fidelity.fuzz.spec import FuzzCase, Queue

_SECONDS = re.compile(r"^at ([0-9.]+) s")
Predicate = Callable[[FuzzCase], "tuple[bool, float | None]"]


def still_diverges(what: str, where: Path) -> Predicate:
    """A predicate: the case replays under both and diverges as `what`; also
    the simulated second of its first divergence."""
    from emu.fidelity.fuzz.campaign import describe, divergence_kind, judge, replay

    def check(case: FuzzCase) -> tuple[bool, float | None]:
        runs = {
            impl: [replay(case, impl, where / "inputs", where / impl)] for impl in ("emu", "hadoop")
        }
        outcome = judge(case, runs)
        if outcome.verdict != "diverged" or outcome.what != what:
            return False, None
        got = compare.compare_runs(where / "emu", where / "hadoop")
        if got.divergence is None:
            return True, None
        assert divergence_kind(got.divergence) == what, describe(got.divergence)
        return True, got.divergence.time_ms / 1000

    return check


def shrink(case: FuzzCase, check: Predicate, budget: int) -> FuzzCase:
    """The smallest variant of `case` found within `budget` trial replays
    (each a call of `check`, e.g. `still_diverges`) that `check` still accepts."""
    tried = 0
    best = case
    ok, at = check(best)
    if not ok:  # the divergence did not reproduce: keep the case whole
        return case
    progress = True
    while progress and tried < budget:
        progress = False
        for candidate in variants(best, at):
            if tried >= budget:
                break
            tried += 1
            ok, when = check(candidate)
            if ok:
                best, at, progress = candidate, when, True
                break
    return best


def variants(case: FuzzCase, at_s: float | None) -> Iterator[FuzzCase]:
    """Smaller cases than `case`, biggest cuts first."""
    jobs = case.jobs
    if at_s is not None:
        kept = [j for j in jobs if j.start_ms <= at_s * 1000]
        if 0 < len(kept) < len(jobs):
            yield _with(case, jobs=kept)
    for size in _halving(len(jobs)):
        for start in range(0, len(jobs), size):
            rest = jobs[:start] + jobs[start + size :]
            if rest:
                yield _with(case, jobs=rest)
    for i, j in enumerate(jobs):
        for k, t in enumerate(j.tasks):
            if t.count > 1:
                c = copy.deepcopy(case)
                c.jobs[i].tasks[k].count = t.count // 2
                yield c
            if len(j.tasks) > 1:
                c = copy.deepcopy(case)
                del c.jobs[i].tasks[k]
                yield c
            if t.host:
                c = copy.deepcopy(case)
                c.jobs[i].tasks[k].host = ""
                yield c
    # Settings in bulk first: most play no part in a given divergence.
    bare = copy.deepcopy(case)
    bare.site, bare.scheduler_conf, bare.placement = {}, {}, []
    for _, q in bare.root.walk():
        q.settings = {k: v for k, v in q.settings.items() if _structural(case, k)}
    if bare.size()[3] < case.size()[3]:
        yield bare
    for part in ("site", "scheduler_conf"):
        if len(getattr(case, part)) > 1:
            yield _with(case, **{part: {}})
    if len(case.nodes) > 1:
        for size in _halving(len(case.nodes)):
            c = copy.deepcopy(case)
            c.nodes = c.nodes[:-size]
            if c.nodes:
                _drop_hosts(c)
                yield c
    for key in list(case.site):
        c = copy.deepcopy(case)
        del c.site[key]
        yield c
    for key in list(case.scheduler_conf):
        c = copy.deepcopy(case)
        del c.scheduler_conf[key]
        yield c
    for path, q in case.root.walk():
        for key in list(q.settings):
            if _structural(case, key):
                continue
            c = copy.deepcopy(case)
            _find(c.root, path).settings.pop(key)
            yield c
    if case.placement:
        yield _with(case, placement=[])


def _structural(case: FuzzCase, key: str) -> bool:
    """A queue setting the tree cannot do without (a Capacity queue's capacity)."""
    return key == "capacity" and case.scheduler == "capacity"


def _halving(n: int) -> list[int]:
    sizes = []
    size = n // 2
    while size >= 1:
        sizes.append(size)
        size //= 2
    return sizes


def _with(case: FuzzCase, **changes: object) -> FuzzCase:
    c = copy.deepcopy(case)
    for key, value in changes.items():
        setattr(c, key, copy.deepcopy(value))
    return c


def _drop_hosts(case: FuzzCase) -> None:
    names = {f"/{n.rack}/{n.name}" for n in case.nodes}
    for j in case.jobs:
        for t in j.tasks:
            if t.host and t.host not in names:
                t.host = ""


def _find(root: Queue, path: str) -> Queue:
    for p, q in root.walk():
        if p == path:
            return q
    raise KeyError(path)
