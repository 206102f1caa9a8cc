"""What the four RM services share: the context they act on, the counter of
refusals by code, and the refusal a handler raises to answer with an error."""

from __future__ import annotations

from collections import Counter

from emu.rm.context import RMContext


class Refused(Exception):
    """A request the service answers with an error reply of `code`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Service:
    """A YARN service over one RMContext; its public methods named after
    protocol messages are its request handlers."""

    def __init__(self, ctx: RMContext, errors: Counter[str]) -> None:
        self.ctx = ctx
        self.errors = errors
