"""Errors that reach the user as one line naming the input and the place.

Every reader of user input (scenario files, traces, Hadoop XML) raises
`InputError`; the CLI prints `str(err)` and exits with code 2, so a bad file
never produces a traceback or a half-written result.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable


class InputError(Exception):
    """A problem in a user-supplied file: `path`, where in it, and what."""

    def __init__(self, path: str, where: str | int | None, message: str) -> None:
        self.path = str(path)
        self.where = where
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.where is None or self.where == "":
            return f"{self.path}: {self.message}"
        if isinstance(self.where, int):
            return f"{self.path}:{self.where}: {self.message}"
        return f"{self.path}: {self.where}: {self.message}"


def check_keys(path: str, keys: Iterable[str], allowed: Collection[str], prefix: str = "") -> None:
    """Refuse the first of `keys` (a table's) that is not `allowed`, placed
    at `prefix` + the key: a misspelt key would otherwise be ignored and
    its default used without a word."""
    for k in keys:
        if k not in allowed:
            expected = ", ".join(sorted(allowed))
            raise InputError(path, prefix + k, f"unknown key (expected one of {expected})")


class SchedulerFailed(Exception):
    """The scheduler threw during a run (emu's, Hadoop's own, or a plugin): the run
    fails with its message and the simulated time (`RMContext.fail`: after
    an exception the scheduler's state is unknown, and going on would answer
    a different question). `who` names the scheduler."""

    def __init__(self, who: str, message: str, simulated_ms: int) -> None:
        self.who = who
        self.message = message
        self.simulated_ms = simulated_ms
        super().__init__(f"{who} failed at simulated time {simulated_ms / 1000:.3f} s: {message}")


def describe(exc: BaseException) -> str:
    """An exception as one line: its type and message, and the file and
    line it was raised at (the traceback is in the log; the terminal gets
    the line to look at): under emu/ from there, anywhere else by name."""
    text = str(exc)
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    tb = exc.__traceback__
    if tb is None:
        return line
    while tb.tb_next is not None:
        tb = tb.tb_next
    path = tb.tb_frame.f_code.co_filename
    marker = path.rfind("/emu/")
    where = path[marker + 1 :] if marker >= 0 else path.rsplit("/", 1)[-1]
    return f"{line} ({where}:{tb.tb_lineno})"


def find_in_group(exc: BaseException, cls: type[BaseException]) -> BaseException | None:
    """The first `cls` in `exc` or in the exception groups trio's nurseries
    wrap it in, so the CLI can report the one error that matters."""
    if isinstance(exc, cls):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = find_in_group(sub, cls)
            if found is not None:
                return found
    return None


def warn_input(path: str, where: str | int | None, message: str) -> None:
    """One `emu: warning:` line on stderr about an input that runs but is
    probably not what the user meant, placed as an InputError would be."""
    import sys

    print(f"emu: warning: {InputError(path, where, message)}", file=sys.stderr, flush=True)
