"""A thread's present messages, oldest first, stored by column: what the ledger settles at each call (fit.py).

A session's context may hold millions of messages at once (issue 29: a million tool calls, none trimmed), so a
message is a few numbers in arrays, not an object: its tokens, where it ends counted from the oldest message
present, a byte for its category and whether a compaction removes it, a byte for whether its tokens are an
estimate that can still shrink, and a 64-bit digest of its key (26 bytes). Labels and the call a message
appeared at are kept only for a ledger with detail (the HTML page), which reads one session.

The messages present are the arrays from `head` on: the oldest leave by moving `head` (the space before it
is given back once it is half the arrays). `ends` is a running sum: message i ends at `ends[i] - base`,
where base is `ends[head] - tokens[head]`, so cutting the oldest message or dropping it moves the base and
nothing else, and the end of the prefix a call re-read is found by bisection. Messages dropped after the
first `keep` (fit.py's trim) cost the shorter side: the kept block moves up over them, or the later
messages move down, each a copy in C.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from itertools import accumulate, compress, repeat
from operator import add, sub

COMPACTABLE = 0x80  # in a message's kind byte, beside its category's index
CATEGORY = 0x7F
_GIVE_BACK = 1024  # messages gone from the front worth copying the arrays for (and half of them gone)


def key_digest(key: str | None) -> int:
    """A message's key as 64 bits (0: no key): the first 8 bytes of the sha256 of its UTF-8. The ledger
    matches keys only within one session: with n messages present and m keys asked for (a compaction's kept
    messages, a trim's cleared ones) a false match has a chance below n * m / 2**64, under 1e-7 for a
    million of each. A digest of 0 is read as no key (a chance of 2**-64)."""
    if key is None:
        return 0
    return int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:8], "little")


class Messages:
    """The present messages of one thread. Positions given and taken are counted from the oldest present."""

    def __init__(self, detail: bool = False) -> None:
        self.tokens = array("q")
        self.ends = array("q")
        self.kinds = bytearray()
        self.estimated = bytearray()  # 1: an estimate (an image's, a PDF's) with tokens left to give way
        self.keys = array("Q")
        self.labels: list[tuple[str, int] | None] | None = [] if detail else None  # (label, call it appeared at)
        self.head = 0
        self.estimates = 0  # how many of the present are 1 in `estimated`: none, and nothing is scanned for them

    def __len__(self) -> int:
        return len(self.tokens) - self.head

    def _columns(self) -> list:
        columns = [self.tokens, self.ends, self.kinds, self.estimated, self.keys]
        return columns if self.labels is None else [*columns, self.labels]

    def append(self, key: int, kind: int, tokens: int, estimated: bool, label: tuple[str, int] | None) -> None:
        self.ends.append((self.ends[-1] if self.ends else 0) + tokens)
        self.tokens.append(tokens)
        self.kinds.append(kind)
        self.estimated.append(1 if estimated and tokens > 0 else 0)
        self.estimates += self.estimated[-1]
        self.keys.append(key)
        if self.labels is not None:
            self.labels.append(label)

    def _base(self) -> int:
        return self.ends[self.head] - self.tokens[self.head]

    # --- reading ------------------------------------------------------------------------------

    def ending_within(self, limit: int) -> int:
        """How many of the oldest messages end at or before `limit` (ends never fall: tokens are never negative)."""
        if not len(self):
            return 0
        return bisect_right(self.ends, limit + self._base(), self.head, len(self.ends)) - self.head

    def labelled(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[str, int, int, int]]:
        """(label, kind, tokens, call it appeared at) of each labelled message in [start, stop), oldest first."""
        if self.labels is None:
            return
        head = self.head
        stop = len(self) if stop is None else stop
        for position in range(head + start, head + stop):
            found = self.labels[position]
            if found is not None:
                yield found[0], self.kinds[position], self.tokens[position], found[1]

    def iterate(self) -> Iterator[tuple[int, int, int]]:
        """(kind, tokens, key) of each present message, oldest first."""
        head = self.head
        return zip(self.kinds[head:], self.tokens[head:], self.keys[head:], strict=True)

    # --- changes ------------------------------------------------------------------------------

    def shrink_estimates(self, over: int) -> list[tuple[int, int]]:
        """Take up to `over` tokens out of the estimates, newest first; returns (kind, tokens taken) of each."""
        tokens, taken, found = self.tokens, 0, []
        base, oldest = self._base(), len(tokens)
        while taken < over and self.estimates:
            position = self.estimated.rfind(1, self.head, oldest)
            cut = min(tokens[position], over - taken)
            tokens[position] -= cut
            taken += cut
            found.append((self.kinds[position], cut))
            if not tokens[position]:  # nothing left to give way: no longer searched for
                self.estimated[position] = 0
                self.estimates -= 1
            oldest = position
        if found:  # the ends from the oldest one changed on
            start = self.ends[oldest - 1] if oldest > self.head else base
            self.ends[oldest:] = array("q", accumulate(tokens[oldest:], initial=start))[1:]
        return found

    def remove(self, start: int, stop: int, cut: int = 0) -> None:
        """Drop the messages in [start, stop) and take `cut` tokens out of the one after them (there is one
        when `cut`). The messages before `start` keep their ends, those after move down by what went."""
        head = self.head
        first, after = head + start, head + stop
        gone = self.ends[after - 1] - (self.ends[first - 1] if first > head else self._base()) if after > first else 0
        self.estimates -= self.estimated.count(1, first, after)
        if start <= len(self.tokens) - after:  # the kept block moves up over the dropped ones
            if start:
                moved = after - start
                for column in self._columns():
                    column[moved:after] = column[head:first]
                self.ends[moved:after] = array("q", map(add, self.ends[moved:after], repeat(gone + cut)))
            self.head = after - start
            if cut:
                self.tokens[after] -= cut
        else:  # the later messages move down
            for column in self._columns():
                del column[first:after]
            if cut:
                self.tokens[first] -= cut
            self.ends[first:] = array("q", map(sub, self.ends[first:], repeat(gone + cut)))
        self._give_back()

    def _give_back(self) -> None:
        head = self.head
        if head == len(self.tokens):
            for column in self._columns():
                del column[:]
            self.head = 0
        elif head >= _GIVE_BACK and 2 * head >= len(self.tokens):
            for column in self._columns():
                del column[:head]
            self.head = 0

    def keep_only(self, kept: list[bool], removed: Callable[[str, int, int, int], None]) -> list[tuple[int, int]]:
        """Keep the present messages whose flag in `kept` is set, in order; `removed` hears of each labelled
        one dropped, oldest first. Returns the (kind, tokens) of each dropped."""
        head = self.head
        dropped = [head + position for position, keep in enumerate(kept) if not keep]
        if not dropped:
            return []
        for position in dropped:
            found = None if self.labels is None else self.labels[position]
            if found is not None:
                removed(found[0], self.kinds[position], self.tokens[position], found[1])
            self.estimates -= self.estimated[position]
        gone = [(self.kinds[position], self.tokens[position]) for position in dropped]
        for number, column in enumerate(self._columns()):
            if number != 1:  # ends are summed again below
                rest = compress(column[head:], kept)
                column[:] = array(column.typecode, rest) if isinstance(column, array) else type(column)(rest)
        self.ends = array("q", accumulate(self.tokens))
        self.head = 0
        return gone

    # --- state --------------------------------------------------------------------------------

    def to_state(self) -> dict:
        head = self.head
        state = {"tokens": _packed(self.tokens[head:]), "kinds": _packed(self.kinds[head:]),
                 "estimated": _packed(self.estimated[head:]), "keys": _packed(self.keys[head:])}
        if self.labels is not None:
            state["labels"] = [None if found is None else list(found) for found in self.labels[head:]]
        return state

    @classmethod
    def from_state(cls, state: dict, kinds_now: bytes) -> Messages:
        """`kinds_now`: a bytes.translate table from the saved kind bytes to today's, CATEGORY where a saved
        category is not one of today's (refused: ValueError)."""
        labels = state.get("labels")
        messages = cls(detail=labels is not None)
        messages.tokens = _unpacked("q", state["tokens"])
        messages.keys = _unpacked("Q", state["keys"])
        messages.kinds = bytearray(base64.b64decode(state["kinds"], validate=True)).translate(kinds_now)
        if CATEGORY in messages.kinds or COMPACTABLE | CATEGORY in messages.kinds:
            raise ValueError("a saved message's category is not one of today's")
        messages.estimated = bytearray(base64.b64decode(state["estimated"], validate=True))
        if messages.estimated.translate(None, b"\x00\x01"):
            raise ValueError("a saved message's estimate flag is neither 0 nor 1")
        if labels is not None:
            messages.labels = [None if found is None else (str(found[0]), int(found[1])) for found in labels]
        count = len(messages.tokens)
        if not (len(messages.keys) == len(messages.kinds) == len(messages.estimated) == count) or (
                labels is not None and len(labels) != count) or min(messages.tokens, default=0) < 0:
            raise ValueError("a thread's saved messages do not line up")
        messages.ends = array("q", accumulate(messages.tokens))
        messages.estimates = messages.estimated.count(1)
        return messages


def _packed(column: array | bytearray) -> str:
    if isinstance(column, array) and sys.byteorder != "little":
        column = array(column.typecode, column)
        column.byteswap()
    return base64.b64encode(column).decode("ascii")


def _unpacked(typecode: str, text: str) -> array:
    column = array(typecode)
    column.frombytes(base64.b64decode(text, validate=True))
    if sys.byteorder != "little":
        column.byteswap()
    return column
