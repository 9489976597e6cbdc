"""Session rows kept as their JSON bytes, decoded one at a time as they are read.

A row as a dict costs about three times its JSON (every key, small dict and number is an object of its
own); a report over a hundred thousand sessions holds its rows this way and never all their dicts at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from xshare.measure.row import SessionRow
from xshare.state.store import dumps, loads


class PackedRows:
    """A list of session rows, in order, each stored as the bytes `dumps` made of it."""

    __slots__ = ("items",)

    def __init__(self, items: Iterable[bytes] = ()) -> None:
        self.items: list[bytes] = list(items)

    def append(self, row: SessionRow) -> None:
        self.items.append(dumps(row))

    def __iadd__(self, rows: Iterable[SessionRow]) -> PackedRows:
        self.items.extend(dumps(row) for row in rows)
        return self

    def pairs(self) -> Iterator[tuple[bytes, SessionRow]]:
        """Each row's bytes beside its dict, for a caller that keeps some rows as they are packed."""
        return ((item, loads(item)) for item in self.items)

    def __iter__(self) -> Iterator[SessionRow]:
        return (loads(item) for item in self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PackedRows) and self.items == other.items

    __hash__ = None  # type: ignore[assignment]  # unhashable: a mutable list, as list itself (typeshed says so too)


def in_window(rows: PackedRows, place: Callable[[SessionRow], str]) -> tuple[PackedRows, int]:
    """The rows `place` puts in the window (their bytes, not copies), and how many it defers."""
    inside, deferred = PackedRows(), 0
    for item, row in rows.pairs():
        where = place(row)
        if where == "in":
            inside.items.append(item)
        deferred += where == "deferred"
    return inside, deferred
