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

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing it at run time; checkers see True
if TYPE_CHECKING:
    from hashlib import blake2b


class PackedRows:
    """A list of session rows, in order, each stored as the bytes `dumps` made of it."""

    __slots__ = ("items", "places")

    def __init__(self, items: Iterable[bytes] = (), places: list[list | None] | None = None) -> None:
        self.items: list[bytes] = list(items)
        # each row's PLACED_BY values, in order, where known (None for a row whose are not); None: none known
        self.places = places

    def append(self, row: SessionRow) -> None:
        self.__iadd__((row,))

    def __iadd__(self, rows: Iterable[SessionRow]) -> PackedRows:
        """The rows added, their times kept where this one keeps times; another PackedRows's as they are packed
        (not decoded and packed again), with the times known of either (another agent's rows after Claude
        Code's keep Claude Code's times)."""
        if not isinstance(rows, PackedRows):
            places = self.known_places() if self.places is not None else None
            for row in rows:
                self.items.append(dumps(row))
                if places is not None:
                    places.append([row.get(key) for key in PLACED_BY])
            self.places = places
            return self
        mine, theirs = self.known_places(), rows.known_places()
        self.places = mine + theirs if any(known is not None for known in (*mine, *theirs)) else None
        self.items.extend(rows.items)
        return self

    def known_places(self) -> list[list | None]:
        """`places` for every row, None where not known (all of them when the items were changed by hand)."""
        if self.places is not None and len(self.places) == len(self.items):
            return self.places
        return [None] * len(self.items)

    def digest(self, into: blake2b) -> blake2b:
        """`into` fed every row, in order, each after its length (so no two lists of rows feed it alike)."""
        for item in self.items:
            into.update(len(item).to_bytes(8, "little"))
            into.update(item)
        return into

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


def _placed(item: bytes, known: list | None) -> SessionRow:
    """As much of a row as the window reads: its PLACED_BY values where they were kept, else the row decoded."""
    if known is None:
        return loads(item)
    return cast("SessionRow", dict(zip(PLACED_BY, known, strict=True)))


def in_window(rows: PackedRows, place: Callable[[SessionRow], str]) -> tuple[PackedRows, int]:
    """The rows `place` puts in the window (their bytes, not copies), and how many it defers; placed by their
    kept times where the rows have them (`place` reads only PLACED_BY), else each decoded."""
    inside, deferred = PackedRows(), 0
    for item, known in zip(rows.items, rows.known_places(), strict=True):
        where = place(_placed(item, known))
        if where == "in":
            inside.items.append(item)
        deferred += where == "deferred"
    return inside, deferred
