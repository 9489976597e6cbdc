"""Session rows kept as their JSON bytes, decoded one at a time as they are read.

A row as a dict costs about three times its JSON (every key, small dict and number is an object of its
own); a report over a hundred thousand sessions holds its rows this way and never all their dicts at once.
Where the rows' times were kept beside them (`places`: measure/row.py PLACED_BY, as the outcome of measuring
Claude Code's transcripts keeps them), the window places each row by them without decoding it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import cast

from xshare.measure.row import PLACED_BY, SessionRow
from xshare.state.store import dumps, loads


class PackedRows:
    """A list of session rows, in order, each stored as the bytes `dumps` made of it."""

    __slots__ = ("items", "places")

    def __init__(self, items: Iterable[bytes] = (), places: list[list] | None = None) -> None:
        self.items: list[bytes] = list(items)
        self.places = places  # each row's PLACED_BY values, in order, when known; None when not

    def append(self, row: SessionRow) -> None:
        self.items.append(dumps(row))
        self.places = None

    def __iadd__(self, rows: Iterable[SessionRow]) -> PackedRows:
        self.items.extend(dumps(row) for row in rows)
        self.places = None
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


def _placed(known: list) -> SessionRow:
    """As much of a row as the window reads: its PLACED_BY values."""
    return cast("SessionRow", dict(zip(PLACED_BY, known, strict=True)))


def in_window(rows: PackedRows, place: Callable[[SessionRow], str]) -> tuple[PackedRows, int]:
    """The rows `place` puts in the window (their bytes, not copies), and how many it defers; placed by their
    kept times where the rows have them (`place` reads only PLACED_BY), else each decoded."""
    inside, deferred = PackedRows(), 0
    places = rows.places if rows.places is not None and len(rows.places) == len(rows.items) else None
    pairs = zip(rows.items, map(_placed, places), strict=True) if places else rows.pairs()
    for item, row in pairs:
        where = place(row)
        if where == "in":
            inside.items.append(item)
        deferred += where == "deferred"
    return inside, deferred
