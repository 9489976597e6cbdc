"""How a call's bill and the file's messages are made to agree: the billing cap, the overhead, inherited context.

A thread's messages (what the file holds) plus its overhead (system prompt and tool schemas, which no file
holds) are what the model says a call carried; the call's billed prompt is what was sent. They are settled
at each call in this order, so that no call's modelled context exceeds its bill and nothing the records show
was sent is dropped:

1. The overhead is what the bill exceeds the messages by at the thread's first call. It is estimated again,
   and may only fall, at the first call after a compaction (few messages, all just recorded) and at a model
   switch (another system prompt). Between them it stays. A rise after a compaction is not taken: it is
   what Claude Code re-sends after one (files, plans) without writing it down, left unmodelled as before.
2. When the messages plus the overhead exceed the bill (beyond ROUNDING per message, set by the ledger):
   a. estimates give way first: an image's or a PDF's tokens (media.py) shrink, newest first, so what an
      estimate gets wrong stays inside it and never trims a message counted to the token;
   b. then the oldest messages the cache does not vouch for give way, by the excess (the agent cleared them,
      or sent them cut short: whole messages go only while the excess is larger). A message lies inside the
      cached prefix the call re-read (`cache_read`) when the overhead and everything before it end there:
      the provider saw it again, so it was not trimmed;
   c. then the overhead falls: what is left was all re-read (or nothing is left), so the overhead was
      over-estimated;
   d. last, what still does not fit gives way oldest first (a tokenizer counting more than the provider's).
3. Inherited context: an epoch (the calls between two estimation points) whose overhead exceeds the thread's
   smallest estimate by more than INHERITED_MARGIN carried context from before the file (a resumed
   conversation, a parent's context a subagent started from): that part of each of its calls is
   `inherited`, not overhead. The smallest estimate comes from a first call or a first call after a
   compaction (few messages, all just recorded), never from a model switch (whose messages may be stale) or
   a fall at step c.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable
from itertools import accumulate, islice
from operator import itemgetter, sub

INHERITED = "inherited"
OVERHEAD = "overhead"
# An epoch's overhead more than this above the thread's smallest estimate is context from before the file. A
# system prompt differs by model or tool set by hundreds of tokens, and the provider's tokenizer against
# o200k_base moves an estimate by a few percent of the few messages present at an estimation point.
INHERITED_MARGIN = 4096

# entry layout (plain lists: they serialise as they are); the ledger owns the rest of the fields
KEY, CATEGORY, TOKENS = 0, 1, 2
ESTIMATED = 6  # 1 when the tokens are an estimate (an image's, a PDF's), not a count

_BLOCK = 1024  # messages summed at a time in the search for the re-read prefix

# an epoch: [overhead, calls charged with it, whether it may set the thread's smallest estimate]
_OVERHEAD, _CALLS, _FLOOR = range(3)


class Thread:
    """One line of conversation: the main one, or a sidechain written into the same file."""

    def __init__(self, categories: tuple[str, ...]) -> None:
        self.present: deque[list] = deque()
        self.sums = dict.fromkeys(categories, 0)
        self.total = 0
        self.estimates = 0  # present entries whose tokens are an estimate: none, and nothing is scanned for them
        self.overhead: int | None = None
        self.model: str | None = None  # the last call's
        self.fresh = True  # the next call is an estimation point (first call, or first after a compaction)
        self.epochs: list[list] = []

    # --- messages -----------------------------------------------------------------------------

    def append(self, entry: list) -> None:
        self.present.append(entry)
        self.sums[entry[CATEGORY]] += entry[TOKENS]
        self.total += entry[TOKENS]
        self.estimates += _estimated(entry)

    def take_out(self, entry: list) -> None:
        """Its tokens leave the sums; the caller removes the entry from `present`."""
        self.sums[entry[CATEGORY]] -= entry[TOKENS]
        self.total -= entry[TOKENS]
        self.estimates -= _estimated(entry)

    # --- one call -----------------------------------------------------------------------------

    def settle(self, bill: int, cache_read: int, model: str | None, rounding: int,
               removed: Callable[[list], None]) -> int:
        """Fit the thread to one call's bill (the module's steps 1 and 2); returns the overhead it carried.
        `removed` hears of every message trimmed."""
        switched = model is not None and self.model is not None and model != self.model
        if model is not None:
            self.model = model
        estimate = max(0, bill - self.total)
        if self.overhead is None:
            self._new_epoch(estimate, floor=True)
        elif estimate < self.overhead and (self.fresh or switched):
            self._new_epoch(estimate, floor=self.fresh)
        self.fresh = False
        over = self._over(bill, rounding)
        if over > 0:
            over -= self._shrink_estimates(over)
        if over > 0:
            over = self._trim(bill, rounding, removed, keep=self._vouched(cache_read))
        if over > 0:  # what is left was re-read, or nothing is left: the overhead was over-estimated
            self._new_epoch(max(0, self.overhead - over), floor=False)
            over = self._over(bill, rounding)
        if over > 0:
            self._trim(bill, rounding, removed, keep=0)
        self.epochs[-1][_CALLS] += 1
        return self.overhead

    def _over(self, bill: int, rounding: int) -> int:
        """What the modelled context exceeds the bill by, beyond the rounding each present message may take."""
        return self.total + (self.overhead or 0) - bill - rounding * len(self.present)

    def _new_epoch(self, overhead: int, floor: bool) -> None:
        if self.epochs and self.epochs[-1][_CALLS] == 0:  # decided twice before any call: the last stands
            floor = floor or self.epochs.pop()[_FLOOR]
        self.overhead = overhead
        self.epochs.append([overhead, 0, floor])

    def _shrink_estimates(self, over: int) -> int:
        """Take up to `over` tokens out of estimated entries, newest first; returns how many were taken."""
        taken = 0
        if not self.estimates:  # a call over its bill with no estimate present: no scan of every message
            return 0
        for entry in reversed(self.present):
            if taken >= over:
                break
            if _estimated(entry) and entry[TOKENS] > 0:
                cut = min(entry[TOKENS], over - taken)
                entry[TOKENS] -= cut
                self.sums[entry[CATEGORY]] -= cut
                self.total -= cut
                taken += cut
        return taken

    def _vouched(self, cache_read: int) -> int:
        """How many of the oldest messages end inside the prefix this call re-read from the cache. Where each
        ends never falls (tokens are never negative), so the first to end beyond it is searched from both
        ends at once, a block of running sums summed in C at a time: the cost is the shorter side (usually
        the few messages since the last call), not every message present."""
        limit = cache_read - (self.overhead or 0)
        if self.total <= limit or not self.present:  # all of them, or none to search
            return len(self.present)
        oldest = map(itemgetter(TOKENS), self.present)
        newest = map(itemgetter(TOKENS), reversed(self.present))
        inside, end = 0, 0  # from the oldest: messages ending inside, where the last of them ends
        beyond, start = 0, self.total  # from the newest: messages ending beyond, where the next older one ends
        while True:
            ends = list(accumulate(islice(oldest, _BLOCK), initial=end))[1:]
            found = bisect_right(ends, limit)
            if found < len(ends):
                return inside + found
            inside, end = inside + found, ends[-1]
            # the newest first: each ends where the one after it starts; ends fall, so negated they rise
            starts = list(accumulate(islice(newest, _BLOCK), sub, initial=start))
            found = bisect_left([-value for value in starts[:-1]], -limit)
            if found < len(starts) - 1:
                return len(self.present) - beyond - found
            beyond, start = beyond + found, starts[-1]

    def _trim(self, bill: int, rounding: int, removed: Callable[[list], None], keep: int) -> int:
        """Take the excess out of the oldest messages after the first `keep`, a message whole only when the
        excess is larger (a result the agent sent cut short gives way by what was cut); returns what is left."""
        present = self.present
        present.rotate(-keep)  # the kept go to the end a block at a time (a popleft each cost a Python step)
        over = self._over(bill, rounding)
        while len(present) > keep and over > 0:
            entry = present[0]
            if entry[TOKENS] - rounding > over:
                entry[TOKENS] -= over
                self.sums[entry[CATEGORY]] -= over
                self.total -= over
                over = 0
                break
            present.popleft()
            self.take_out(entry)
            removed(entry)
            over -= entry[TOKENS] - rounding
        present.rotate(keep)
        return over

    # --- results ------------------------------------------------------------------------------

    def inherited_per_call(self) -> list[int]:
        """For each epoch, the tokens of each of its calls' overhead that were context from before the file."""
        floors = [epoch[_OVERHEAD] for epoch in self.epochs if epoch[_FLOOR]]
        if not floors:
            return [0] * len(self.epochs)
        floor = min(floors)
        return [epoch[_OVERHEAD] - floor if epoch[_OVERHEAD] - floor > INHERITED_MARGIN else 0
                for epoch in self.epochs]

    def inherited(self) -> int:
        """Tokens of overhead charged so far that were inherited context (step 3)."""
        return sum(part * epoch[_CALLS] for part, epoch in zip(self.inherited_per_call(), self.epochs, strict=True))

    # --- state --------------------------------------------------------------------------------

    def to_state(self) -> dict:
        return {"present": list(self.present), "overhead": self.overhead, "model": self.model,
                "fresh": self.fresh, "epochs": self.epochs}

    @classmethod
    def from_state(cls, state: dict, categories: tuple[str, ...]) -> Thread:
        thread = cls(categories)
        thread.overhead = state["overhead"]
        thread.model = state["model"]
        thread.fresh = state["fresh"]
        thread.epochs = [list(epoch) for epoch in state["epochs"]]
        for entry in state["present"]:
            thread.append(entry)
        return thread


def _estimated(entry: list) -> int:
    """1 when the entry's tokens are an estimate (entries saved before the flag have none)."""
    return 1 if len(entry) > ESTIMATED and entry[ESTIMATED] else 0
