"""A thread's present messages, oldest first, stored by column: what the ledger settles at each call (fit.py).

A session's context may hold millions of messages at once (issue 29: a million tool calls, none trimmed), so a
message is a few numbers in arrays, not an object: its tokens, where it ends (a running sum), a byte for its
category and whether a compaction removes it, a byte for whether its tokens are an estimate that can still
shrink, and a 64-bit digest of its key: 26 bytes. Labels and the call a message appeared at are kept only
for a ledger with detail (the HTML page), which reads one session.

A call over its bill finds where the prefix the cache re-read ends by bisecting the running sums, and drops
or cuts the messages right after it (fit.py's steps). So that neither costs a pass over every message, the
slots are: dropped ones before `head`; the messages before the split; a gap of dropped ones; the messages
after it, whose running sums are `lag` too high (the tokens dropped at the split). Message i ends at its
running sum (less the lag after the split) minus the base, the running sum before the oldest, so cutting or
dropping the oldest moves the base and nothing else. The split moves, a copy in C, only by the messages
between where the last call's trim was and this one's (about the messages since the last call), and the
slots of dropped messages are given back once they are as many as the messages present.
"""

from __future__ import annotations

import base64
import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, chain, compress, repeat
from operator import add, sub
from typing import TypeVar

from xshare.measure.digests import digest

COMPACTABLE = 0x80  # in a message's kind byte, beside its category's index
CATEGORY = 0x7F
_GIVE_BACK = 1024  # slots of dropped messages worth a copy to give back (once as many as the messages present)
Column = TypeVar("Column", array, bytearray, list)  # one of a thread's columns: a slice of it is of its type


def key_digest(key: str | None) -> int:
    """A message's key as 64 bits (0: no key): the reader's own digest of it (measure/digests.py), so a key
    the reader holds only by its digest (a compaction's kept results, past its maps' threshold) matches. The
    ledger matches keys only within one session: with n messages present and m keys asked for (a
    compaction's kept messages, a trim's cleared ones) a false match has a chance below n * m / 2**64, under
    1e-7 for a million of each. A digest of 0 is read as no key (a chance of 2**-64)."""
    return 0 if key is None else digest(key)


class Messages:
    """The present messages of one thread, oldest first."""

    def __init__(self, detail: bool = False) -> None:
        self.tokens = array("q")
        self.ends = array("q")
        self.kinds = bytearray()
        self.estimated = bytearray()  # 1: an estimate (an image's, a PDF's) with tokens left to give way
        self.keys = array("Q")
        self.labels: list[tuple[str, int] | None] | None = [] if detail else None  # (label, call it appeared at)
        self.head = 0
        # the split, when gap_end is not 0: head < gap <= gap_end < len(tokens), the slots in [gap, gap_end)
        # hold messages dropped, and the ends from gap_end on are `lag` too high (the tokens dropped there)
        self.gap = self.gap_end = self.lag = 0
        self.estimates = 0  # how many of the present are 1 in `estimated`: none, and nothing is scanned for them

    def __len__(self) -> int:
        return len(self.tokens) - self.head - (self.gap_end - self.gap)

    def _columns(self) -> list:
        columns = [self.tokens, self.ends, self.kinds, self.estimated, self.keys]
        return columns if self.labels is None else [*columns, self.labels]

    def _live(self, column: Column) -> Column:
        """A column's present part, oldest first."""
        if self.gap_end:
            return column[self.head:self.gap] + column[self.gap_end:]
        return column[self.head:]

    def append(self, key: int, kind: int, tokens: int, estimated: bool, label: tuple[str, int] | None) -> None:
        ends = self.ends
        ends.append((ends[-1] if ends else 0) + tokens)
        self.tokens.append(tokens)
        self.kinds.append(kind)
        if estimated and tokens > 0:
            self.estimated.append(1)
            self.estimates += 1
        else:
            self.estimated.append(0)
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
        ends, head, gap, gap_end = self.ends, self.head, self.gap, self.gap_end
        target = limit + self._base()
        if not gap_end:
            return bisect_right(ends, target, head, len(ends)) - head
        if ends[gap - 1] > target:
            return bisect_right(ends, target, head, gap) - head
        return gap - head + bisect_right(ends, target + self.lag, gap_end, len(ends)) - gap_end

    def labelled(self, first: int | None = None, stop: int | None = None) -> Iterator[tuple[str, int, int, int]]:
        """(label, kind, tokens, call it appeared at) of each labelled message, oldest first: every one present,
        or those in the slots [first, stop) (as `open_at` gave them)."""
        if self.labels is None:
            return
        slots: Iterable[int]
        if first is not None:
            slots = range(first, len(self.tokens) if stop is None else stop)
        elif self.gap_end:
            slots = chain(range(self.head, self.gap), range(self.gap_end, len(self.tokens)))
        else:
            slots = range(self.head, len(self.tokens))
        for position in slots:
            found = self.labels[position]
            if found is not None:
                yield found[0], self.kinds[position], self.tokens[position], found[1]

    def iterate(self) -> Iterator[tuple[int, int, int]]:
        """(kind, tokens, key) of each present message, oldest first."""
        return zip(self._live(self.kinds), self._live(self.tokens), self._live(self.keys), strict=True)

    # --- changes ------------------------------------------------------------------------------

    def shrink_estimates(self, over: int) -> list[tuple[int, int]]:
        """Take up to `over` tokens out of the estimates, newest first; returns (kind, tokens taken) of each."""
        self.close()
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

    def open_at(self, keep: int) -> int:
        """The slot of the message after the oldest `keep`, the split moved there so that it and every later
        message lie in the slots after it, in order. The split moves by the messages between where it was
        and `keep`: a call that trims where the last one did costs no copy of the messages kept."""
        head, gap, gap_end, tokens = self.head, self.gap, self.gap_end, self.tokens
        if not gap_end:
            if 0 < keep < len(self):
                self.gap = self.gap_end = head + keep
                return head + keep
            return head + keep
        left = gap - head
        if keep < left:  # the messages from `keep` to the split go after it
            moved = left - keep
            for column in self._columns():
                column[gap_end - moved:gap_end] = column[head + keep:gap]
            self.ends[gap_end - moved:gap_end] = array("q", map(add, self.ends[gap_end - moved:gap_end],
                                                               repeat(self.lag)))
            self.gap, self.gap_end = head + keep, gap_end - moved
            if not keep:  # nothing left before the split
                self.head = self.gap_end
                self.gap = self.gap_end = self.lag = 0
        elif keep > left:  # the messages after the split up to `keep` come before it
            moved = keep - left
            for column in self._columns():
                column[gap:gap + moved] = column[gap_end:gap_end + moved]
            self.ends[gap:gap + moved] = array("q", map(sub, self.ends[gap:gap + moved], repeat(self.lag)))
            self.gap, self.gap_end = gap + moved, gap_end + moved
            if self.gap_end == len(tokens):  # nothing left after it
                self._truncate()
        return self.gap_end or self.head + keep

    def drop(self, first: int, stop: int, cut: int = 0) -> None:
        """Drop the messages in the slots [first, stop), where `open_at` put them, and take `cut` tokens out of
        the one after them (there is one when `cut`)."""
        tokens = self.tokens
        if stop > first:
            self.estimates -= self.estimated.count(1, first, stop)
        if first == self.head and not self.gap_end:  # the oldest go: where each ends is counted from the next
            self.head = stop
        elif stop > first or cut:  # after the split: the ends from it on are as much too high as what went
            self.gap_end = stop
            self.lag += sum(tokens[first:stop]) + cut
        if cut:
            tokens[stop] -= cut
        if self.gap_end and self.gap_end == len(tokens):
            self._truncate()
        self._tidy()

    def _truncate(self) -> None:
        """Nothing after the split: the slots from it on go."""
        for column in self._columns():
            del column[self.gap:]
        self.gap = self.gap_end = self.lag = 0

    def close(self) -> None:
        """The messages after the split move down to it (their ends made right): one run of slots again."""
        gap, gap_end = self.gap, self.gap_end
        if not gap_end:
            return
        after = len(self.tokens) - gap_end
        for column in self._columns():
            column[gap:gap + after] = column[gap_end:]
            del column[gap + after:]
        self.ends[gap:] = array("q", map(sub, self.ends[gap:], repeat(self.lag)))
        self.gap = self.gap_end = self.lag = 0

    def _tidy(self) -> None:
        """Slots of dropped messages are given back once they are as many as the messages present."""
        if not len(self):
            for column in self._columns():
                del column[:]
            self.head = self.gap = self.gap_end = self.lag = 0
            return
        if self.gap_end - self.gap >= max(_GIVE_BACK, len(self)):
            self.close()
        head = self.head
        if head >= max(_GIVE_BACK, len(self)):
            for column in self._columns():
                del column[:head]
            self.head = 0
            if self.gap_end:
                self.gap, self.gap_end = self.gap - head, self.gap_end - head

    def keep_only(self, kept: list[bool], removed: Callable[[str, int, int, int], None]) -> list[tuple[int, int]]:
        """Keep the present messages whose flag in `kept` is set, in order; `removed` hears of each labelled
        one dropped, oldest first. Returns the (kind, tokens) of each dropped."""
        self.close()
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
        state: dict[str, str | list] = {
            "tokens": _packed(self._live(self.tokens)), "kinds": _packed(self._live(self.kinds)),
            "estimated": _packed(self._live(self.estimated)), "keys": _packed(self._live(self.keys))}
        if self.labels is not None:
            state["labels"] = [None if found is None else list(found) for found in self._live(self.labels)]
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
