"""Membership kept in a sorted list, for the scheduler's ordered sets (an
attempt's live priorities, FIFO's apps with pending asks) that are walked in
order far more often than they change."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparisonT


def set_member(
    items: list[SupportsRichComparisonT], item: SupportsRichComparisonT, member: bool
) -> None:
    """Insert `item` into the sorted `items` when `member` and it is
    absent; remove it when not `member` and it is present."""
    i = bisect.bisect_left(items, item)
    present = i < len(items) and items[i] == item
    if member and not present:
        items.insert(i, item)
    elif present and not member:
        del items[i]
