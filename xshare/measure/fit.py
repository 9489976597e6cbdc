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

from collections.abc import Callable, Set

from xshare.measure.present import CATEGORY, COMPACTABLE, Messages, key_digest

INHERITED = "inherited"
OVERHEAD = "overhead"
# An epoch's overhead more than this above the thread's smallest estimate is context from before the file. A
# system prompt differs by model or tool set by hundreds of tokens, and the provider's tokenizer against
# o200k_base moves an estimate by a few percent of the few messages present at an estimation point.
INHERITED_MARGIN = 4096

# an epoch: [overhead, calls charged with it, whether it may set the thread's smallest estimate]
_OVERHEAD, _CALLS, _FLOOR = range(3)

# hears of each labelled message dropped (a ledger with detail): its label, category, tokens, the call it appeared at
Removed = Callable[[str, str, int, int], None]


class Thread:
    """One line of conversation: the main one, or a sidechain written into the same file."""

    def __init__(self, categories: tuple[str, ...], detail: bool = False) -> None:
        self.categories = categories
        self.index = {name: number for number, name in enumerate(categories)}
        self.present = Messages(detail)  # present.py: by column, oldest first
        self.sums = dict.fromkeys(categories, 0)
        self.total = 0
        self.overhead: int | None = None
        self.model: str | None = None  # the last call's
        self.fresh = True  # the next call is an estimation point (first call, or first after a compaction)
        self.epochs: list[list] = []

    # --- messages -----------------------------------------------------------------------------

    def append(self, key: int, category: str, tokens: int, compactable: bool = True, estimated: bool = False,
               label: tuple[str, int] | None = None) -> None:
        """A message appears: `key` its present.key_digest, `label` (label, call it appeared at) with detail."""
        self.present.append(key, self.index[category] | (COMPACTABLE if compactable else 0), tokens, estimated,
                            label)
        self.sums[category] += tokens
        self.total += tokens

    def compact(self, keep: Set[int], removed: Removed) -> None:
        """Every compactable message goes but those whose key digest is in `keep`."""
        self._keep_only([not kind & COMPACTABLE or key in keep for kind, _, key in self.present.iterate()], removed)

    def clear(self, keys: set[int], removed: Removed) -> int:
        """The messages whose key digest is in `keys` go; returns how many."""
        return self._keep_only([key not in keys for _, _, key in self.present.iterate()], removed)

    def clear_all(self, removed: Removed) -> None:
        self._keep_only([False] * len(self.present), removed)

    def cap(self, limit: int, removed: Removed) -> None:
        """The oldest messages go while the thread holds more than `limit` (a SPREAD ledger's cap)."""
        present = self.present
        first = present.open_at(0)
        tokens, kinds, stop, end = present.tokens, present.kinds, first, len(present.tokens)
        while stop < end and self.total > limit:
            self._take_out(kinds[stop], tokens[stop])
            stop += 1
        self._heard(removed, first, stop)
        present.drop(first, stop)

    def _keep_only(self, kept: list[bool], removed: Removed) -> int:
        categories = self.categories
        gone = self.present.keep_only(kept, lambda label, kind, tokens, at: removed(
            label, categories[kind & CATEGORY], tokens, at))
        for kind, tokens in gone:
            self._take_out(kind, tokens)
        return len(gone)

    def _take_out(self, kind: int, tokens: int) -> None:
        self.sums[self.categories[kind & CATEGORY]] -= tokens
        self.total -= tokens

    def _heard(self, removed: Removed, first: int, stop: int) -> None:
        """`removed` hears of the labelled messages in the slots [first, stop), oldest first (before they go)."""
        for label, kind, tokens, at in self.present.labelled(first, stop):
            removed(label, self.categories[kind & CATEGORY], tokens, at)

    def labelled(self) -> list[tuple[str, str, int, int]]:
        """(label, category, tokens, call it appeared at) of each labelled message present, oldest first."""
        return [(label, self.categories[kind & CATEGORY], tokens, at)
                for label, kind, tokens, at in self.present.labelled()]

    @property
    def estimates(self) -> int:
        """Present messages whose tokens are an estimate with tokens left to give way."""
        return self.present.estimates

    # --- one call -----------------------------------------------------------------------------

    def settle(self, bill: int, cache_read: int, model: str | None, rounding: int, removed: Removed) -> int:
        """Fit the thread to one call's bill (the module's steps 1 and 2); returns the overhead it carried.
        `removed` hears of every labelled message trimmed."""
        switched = model is not None and self.model is not None and model != self.model
        if model is not None:
            self.model = model
        estimate = max(0, bill - self.total)
        if self.overhead is None:
            self._new_epoch(estimate, floor=True)
        elif estimate < self.overhead and (self.fresh or switched):
            self._new_epoch(estimate, floor=self.fresh)
        self.fresh = False
        assert self.overhead is not None  # the first call's epoch set it
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
        """Take up to `over` tokens out of estimated messages, newest first; returns how many were taken."""
        if not self.present.estimates:  # a call over its bill with no estimate present: no scan of every message
            return 0
        taken = 0
        for kind, cut in self.present.shrink_estimates(over):
            self._take_out(kind, cut)
            taken += cut
        return taken

    def _vouched(self, cache_read: int) -> int:
        """How many of the oldest messages end inside the prefix this call re-read from the cache. Where each
        ends never falls (tokens are never negative) and is kept as a running sum: a bisection finds it."""
        limit = cache_read - (self.overhead or 0)
        if self.total <= limit or not self.present:  # all of them, or none to search
            return len(self.present)
        return self.present.ending_within(limit)

    def _trim(self, bill: int, rounding: int, removed: Removed, keep: int) -> int:
        """Take the excess out of the oldest messages after the first `keep`, a message whole only when the
        excess is larger (a result the agent sent cut short gives way by what was cut); returns what is left."""
        present = self.present
        over = self._over(bill, rounding)
        first = present.open_at(keep)  # the messages after the kept ones, in the slots from here on
        tokens, kinds, stop, end, cut = present.tokens, present.kinds, first, len(present.tokens), 0
        while stop < end and over > 0:
            size = tokens[stop]
            if size - rounding > over:
                cut, over = over, 0
                break
            self._take_out(kinds[stop], size)
            over -= size - rounding
            stop += 1
        if cut:
            self._take_out(kinds[stop], cut)
        self._heard(removed, first, stop)
        present.drop(first, stop, cut)
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
        return {"messages": self.present.to_state(), "categories": list(self.categories),
                "overhead": self.overhead, "model": self.model, "fresh": self.fresh, "epochs": self.epochs}

    @classmethod
    def from_state(cls, state: dict, categories: tuple[str, ...]) -> Thread:
        """A saved thread; one saved before the messages were stored by column (a list of entries) loads too."""
        thread = cls(categories)
        thread.overhead = state["overhead"]
        thread.model = state["model"]
        thread.fresh = state["fresh"]
        thread.epochs = [list(epoch) for epoch in state["epochs"]]
        if "messages" in state:
            thread.present = Messages.from_state(state["messages"], thread._kinds_from(state["categories"]))
            for kind, tokens, _ in thread.present.iterate():
                thread.sums[categories[kind & CATEGORY]] += tokens
                thread.total += tokens
            return thread
        for key, category, tokens, compactable, *rest in state["present"]:  # the layout before: lists
            digest = key_digest(None if key is None else str(key))
            estimated = len(rest) > 2 and bool(rest[2])
            thread.append(digest, category, tokens, compactable=bool(compactable), estimated=estimated)
        return thread

    def _kinds_from(self, saved: list[str]) -> bytes:
        """A bytes.translate table from the kind bytes of a state saved with `saved` categories to today's; a
        category unknown today raises KeyError (the state is not used)."""
        table = bytearray(range(256))
        for number, name in enumerate(saved):
            table[number] = self.index[name]
            table[number | COMPACTABLE] = self.index[name] | COMPACTABLE
        for number in range(len(saved), CATEGORY + 1):
            table[number] = table[number | COMPACTABLE] = CATEGORY  # no such category: refused on load
        return bytes(table)
