"""Issue 29 (memory on one huge session): a thread's present messages are stored by column (measure/present.py)
and the re-read prefix is found by bisection. The figures are exactly those of the list-based ledger before:
random ledgers (messages of every size around the rounding, estimates, labels, keys shared, calls over and
under their bills, cache reads anywhere, model switches, trims, compactions, side threads reset, the spread
mode's cap) are replayed through the ledger and through a small copy of the old logic written here, and agree
at every step, also across saved states of the new layout and of the old one. A present message costs under
40 bytes, and the end of the re-read prefix is found as fast among a million messages as among a thousand."""

from __future__ import annotations

import json
import random
import time
import tracemalloc
from collections import deque

import pytest

from xshare.measure import fit
from xshare.measure.ledger import CATEGORIES, FIRST_CALL, ROUNDING_PER_MESSAGE, SPREAD, Ledger
from xshare.measure.present import Messages

KEY, CATEGORY, TOKENS, COMPACTABLE, LABEL, ADDED_AT, ESTIMATED = range(7)


class OldThread:
    """The thread as it was: a deque of [key, category, tokens, compactable, label, added at, estimated]
    lists, every search a walk. Only what the storage touches; the epochs are kept to compare them."""

    def __init__(self) -> None:
        self.present: deque[list] = deque()
        self.overhead: int | None = None
        self.model: str | None = None
        self.fresh = True
        self.epochs: list[list] = []

    @property
    def total(self) -> int:
        return sum(entry[TOKENS] for entry in self.present)

    def sums(self) -> dict[str, int]:
        sums = dict.fromkeys(CATEGORIES[:-1], 0)
        for entry in self.present:
            sums[entry[CATEGORY]] += entry[TOKENS]
        return sums

    def settle(self, bill: int, cache_read: int, model: str | None, rounding: int, removed: list) -> int:
        switched = model is not None and self.model is not None and model != self.model
        if model is not None:
            self.model = model
        estimate = max(0, bill - self.total)
        if self.overhead is None:
            self.new_epoch(estimate, True)
        elif estimate < self.overhead and (self.fresh or switched):
            self.new_epoch(estimate, self.fresh)
        self.fresh = False
        over = self.over(bill, rounding)
        if over > 0:
            for entry in reversed(self.present):  # estimates give way, newest first
                if over > 0 and entry[ESTIMATED] and entry[TOKENS] > 0:
                    cut = min(entry[TOKENS], over)
                    entry[TOKENS] -= cut
                    over -= cut
        if over > 0:
            limit, end, keep = cache_read - (self.overhead or 0), 0, 0
            for entry in self.present:
                end += entry[TOKENS]
                keep += end <= limit
                if end > limit:
                    break
            over = self.trim(bill, rounding, removed, keep)
        if over > 0:
            self.new_epoch(max(0, self.overhead - over), False)
            over = self.over(bill, rounding)
        if over > 0:
            self.trim(bill, rounding, removed, 0)
        self.epochs[-1][1] += 1
        return self.overhead

    def over(self, bill: int, rounding: int) -> int:
        return self.total + (self.overhead or 0) - bill - rounding * len(self.present)

    def new_epoch(self, overhead: int, floor: bool) -> None:
        if self.epochs and self.epochs[-1][1] == 0:
            floor = floor or self.epochs.pop()[2]
        self.overhead = overhead
        self.epochs.append([overhead, 0, floor])

    def trim(self, bill: int, rounding: int, removed: list, keep: int) -> int:
        entries = list(self.present)
        kept, rest = entries[:keep], entries[keep:]
        over = self.over(bill, rounding)
        while rest and over > 0:
            if rest[0][TOKENS] - rounding > over:
                rest[0][TOKENS] -= over
                over = 0
                break
            entry = rest.pop(0)
            removed.append(entry)
            over -= entry[TOKENS] - rounding
        self.present = deque(kept + rest)
        return over


class OldLedger:
    """The old ledger's handling of entries: add, call, compact, trim, reset_thread; billed by category."""

    def __init__(self, mode: str, rounding: int) -> None:
        self.mode, self.rounding = mode, rounding
        self.threads: dict[str, OldThread] = {}
        self.calls = self.trimmed = 0
        self.billed = dict.fromkeys(CATEGORIES, 0)
        self.carried: list[list] = []

    def thread(self, name: str) -> OldThread:
        return self.threads.setdefault(name, OldThread())

    def dropped(self, entries: list) -> None:
        self.carried += [[entry[LABEL], entry[CATEGORY], entry[TOKENS], entry[ADDED_AT], self.calls]
                         for entry in entries if entry[LABEL] is not None]

    def add(self, category, tokens, key, thread, compactable, label, estimated) -> None:
        if tokens > 0:
            self.thread(thread).present.append([key, category, tokens, compactable, label, self.calls, estimated])

    def call(self, bill: int, cache_read: int, thread: str, model: str | None) -> None:
        state, removed = self.thread(thread), []
        if self.mode == FIRST_CALL:
            overhead = state.settle(bill, cache_read, model, self.rounding, removed)
        else:
            overhead = 0
            while state.present and state.total > bill:
                removed.append(state.present.popleft())
        self.dropped(removed)
        self.calls += 1
        for category, tokens in state.sums().items():
            self.billed[category] += tokens
        self.billed["overhead"] += overhead

    def remove(self, thread: str, doomed) -> int:
        state = self.thread(thread)
        gone = [entry for entry in state.present if doomed(entry)]
        state.present = deque(entry for entry in state.present if not doomed(entry))
        self.dropped(gone)
        return len(gone)

    def compact(self, thread: str, keep: frozenset[str]) -> None:
        self.remove(thread, lambda entry: entry[COMPACTABLE] and entry[KEY] not in keep)
        self.thread(thread).fresh = True

    def trim(self, thread: str, keys: list[str]) -> None:
        self.trimmed += self.remove(thread, lambda entry: entry[KEY] in set(keys))

    def reset_thread(self, thread: str) -> None:
        if thread in self.threads:
            self.remove(thread, lambda entry: True)
            del self.threads[thread]

    def old_state(self, thread: str) -> dict:
        state = self.threads[thread]
        return {"present": [list(entry) for entry in state.present], "overhead": state.overhead,
                "model": state.model, "fresh": state.fresh, "epochs": [list(epoch) for epoch in state.epochs]}


def running_ends(messages: Messages) -> list[int]:
    """Where each present message ends, counted from the oldest, as the columns hold it: the slots before the
    split as they are, those after it less its lag."""
    if not len(messages):
        return []
    head, gap, gap_end, ends = messages.head, messages.gap, messages.gap_end, messages.ends
    values = list(ends[head:gap]) + [value - messages.lag for value in ends[gap_end:]] if gap_end else ends[head:]
    base = ends[head] - messages.tokens[head]
    return [value - base for value in values]


def same(ledger: Ledger, old: OldLedger, detail: bool) -> None:
    assert set(ledger.threads) == set(old.threads)
    for name, state in old.threads.items():
        new = ledger.threads[name]
        assert ledger.present(name) == (state.sums(), state.overhead or 0)
        assert new.total == state.total and len(new.present) == len(state.present)
        assert new.epochs == state.epochs and new.fresh == state.fresh and new.model == state.model
        assert new.estimates == sum(1 for entry in state.present if entry[ESTIMATED] and entry[TOKENS] > 0)
        messages, ends, end = new.present, [], 0
        for entry in state.present:
            end += entry[TOKENS]
            ends.append(end)
        assert running_ends(messages) == ends
    assert ledger.billed == old.billed and ledger.calls == old.calls and ledger.trimmed == old.trimmed
    if detail:
        assert ledger.carried == old.carried
        still = [[entry[LABEL], entry[CATEGORY], entry[TOKENS], entry[ADDED_AT], old.calls]
                 for state in old.threads.values() for entry in state.present if entry[LABEL] is not None]
        assert ledger.still_carried() == old.carried + still


def random_steps(rng: random.Random, count: int, mode: str):
    """(kind, arguments) of a random ledger's events: mostly messages and calls on the main thread."""
    sizes = (lambda: rng.randrange(0, 5), lambda: rng.randrange(0, 400), lambda: rng.randrange(1000, 20_000))
    for step in range(count):
        move, thread = rng.random(), "side" if rng.random() < 0.15 else "main"
        if move < 0.55:
            yield "add", (rng.choice(CATEGORIES[:-1]), rng.choice(sizes)(), f"k{rng.randrange(step + 1)}", thread,
                          rng.random() < 0.9, f"l{step}" if rng.random() < 0.5 else None, rng.random() < 0.1)
        elif move < 0.93:
            yield "call", (thread, rng.randrange(-600, 900), rng.random(), rng.choice(("a", "b", None)))
        elif move < 0.97:
            yield "trim", (thread, [f"k{rng.randrange(step + 1)}" for _ in range(rng.randrange(1, 30))])
        elif move < 0.99 and mode == FIRST_CALL:
            yield "compact", (thread, frozenset(f"k{rng.randrange(step + 1)}" for _ in range(rng.randrange(0, 300))))
        elif move < 0.995:
            yield "reset", ("side",)


def bill_and_read(old: OldLedger, thread: str, change: int, where: float) -> tuple[int, int]:
    """A bill near what the thread holds, and a cache read ending anywhere: before everything, among the
    oldest, in the middle, among the newest, past the end."""
    state = old.thread(thread)
    context = state.total + (state.overhead or 0)
    bill = max(0, context + change)
    read = (0 if where < 0.1 else int(context * where) if where < 0.8 else context - int(2000 * (where - 0.8))
            if where < 0.97 else context + 500)
    return bill, read


def replay(seed: int, mode: str, rounding: int, count: int, saved: str | None = None) -> tuple[Ledger, OldLedger]:
    """A random ledger through both; `saved`: at random steps the ledger continues from its saved state,
    "new" in today's layout, "old" in the list layout before it."""
    rng = random.Random(seed)
    detail = saved is None
    ledger, old = Ledger(mode, detail=detail, rounding=rounding), OldLedger(mode, rounding)
    for kind, args in random_steps(rng, count, mode):
        if kind == "add":
            category, tokens, key, thread, compactable, label, estimated = args
            label = label if detail else None
            ledger.add(category, tokens, key=key, thread=thread, compactable=compactable, label=label,
                       estimated=estimated)
            old.add(category, tokens, key, thread, compactable, label, estimated)
        elif kind == "call":
            thread, change, where, model = args
            bill, read = bill_and_read(old, thread, change, where)
            ledger.call(bill, usage={"cache_read": read}, thread=thread, model=model)
            old.call(bill, read, thread, model)
        elif kind == "trim":
            ledger.trim(args[1], thread=args[0])
            old.trim(*args)
        elif kind == "compact":
            ledger.compact(thread=args[0], keep=args[1])
            old.compact(*args)
        else:
            ledger.reset_thread(args[0])
            old.reset_thread(args[0])
        if saved is not None and rng.random() < 0.02:
            state = json.loads(json.dumps(ledger.to_state()))
            if saved == "old":
                state["threads"] = {name: old.old_state(name) for name in state["threads"]}
            ledger = Ledger.from_state(state)
        same(ledger, old, detail)
    return ledger, old


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rounding", [0, ROUNDING_PER_MESSAGE])
def test_the_columns_give_the_old_figures_on_random_ledgers(seed: int, rounding: int):
    ledger, old = replay(seed, FIRST_CALL, rounding, 3000)
    assert ledger.calls > 1000 and ledger.trimmed > 0 and ledger.compactions > 0 and ledger.carried


def test_the_columns_give_the_old_figures_in_the_spread_mode():
    ledger, old = replay(7, SPREAD, 0, 3000)
    assert ledger.carried  # the cap dropped labelled messages, logged as before


@pytest.mark.parametrize("saved", ["new", "old"])
def test_a_saved_state_resumes_with_the_same_figures_in_either_layout(saved: str):
    ledger, old = replay(11, FIRST_CALL, ROUNDING_PER_MESSAGE, 3000, saved=saved)
    assert ledger.calls > 1000


def test_a_long_context_trimmed_at_both_ends_and_in_the_middle_keeps_its_figures():
    """Past the thousand messages after which the slots of dropped ones are given back (at the split and
    before the oldest), with cache reads that keep few, half or nearly all of them (the split moves either
    way)."""
    rng = random.Random(29)
    ledger, old = Ledger(detail=True), OldLedger(FIRST_CALL, 0)
    for step in range(400):
        for number in range(20):
            size, label = rng.randrange(1, 60), f"m{step}.{number}"
            ledger.add("exploration", size, key=label, label=label)
            old.add("exploration", size, label, "main", True, label, False)
        change = -rng.randrange(0, 300) if step < 100 else -rng.randrange(400, 900)  # it grows, then churns
        where = 0.5 if 150 <= step < 300 else rng.choice((0.05, 0.5, 0.95, 0.85))  # halfway, call after call
        bill, read = bill_and_read(old, "main", change, where)
        ledger.call(bill, usage={"cache_read": read})
        old.call(bill, read, "main", None)
        same(ledger, old, detail=True)
    assert len(old.carried) > 5000 and len(old.threads["main"].present) > 800


def test_a_saved_state_with_a_category_unknown_today_is_refused():
    ledger = Ledger()
    ledger.add("exploration", 10, key="k")
    state = json.loads(json.dumps(ledger.to_state()))
    state["threads"]["main"]["categories"][CATEGORIES.index("exploration")] = "something-new"
    with pytest.raises(KeyError):
        Ledger.from_state(state)


def test_a_present_message_costs_under_40_bytes():
    """The issue's million tool calls hold two million messages present at the end (nothing trimmed)."""
    ledger = Ledger(rounding=ROUNDING_PER_MESSAGE)
    keys = [f"toolu_{number:020d}" for number in range(20_000)]  # the reader's, not the ledger's
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for number, key in enumerate(keys):
        ledger.add("exploration" if number % 2 else "conversation", 20, key=key)
        if number % 2:
            ledger.call(3000 + 25 * number, usage={"cache_read": 3000 + 25 * number})
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(ledger.threads["main"].present) == len(keys)
    assert held / len(keys) < 40


def cpu_of_searches(present: int, searches: int = 2000) -> float:
    """CPU seconds of finding where the re-read prefix ends among `present` messages, halfway along."""
    ledger = Ledger()
    for _ in range(present):
        ledger.add("conversation", 3)
    ledger.call(3 * present + 1000)
    thread = ledger.threads["main"]
    started = time.process_time()
    for number in range(searches):
        assert thread._vouched(1000 + 3 * (present // 2) + number % 3) == present // 2
    return time.process_time() - started


def test_the_end_of_the_re_read_prefix_is_found_as_fast_among_a_million_messages():
    """Where each message ends is kept as a running sum and bisected: a prefix ending halfway along costs no
    walk from either end (the case where each call re-reads half the context, call after call)."""
    small = min(cpu_of_searches(1000) for _ in range(3))
    assert cpu_of_searches(1_000_000) < 5 * small + 0.05


def test_a_thread_with_labels_round_trips_with_them():
    thread = Ledger(detail=True)._thread("main")
    for number in range(5):
        thread.append(number, "exploration", 10 + number, label=(f"read {number}", number) if number % 2 else None)
    thread.settle(thread.total - 11, thread.total - 30, None, 0, lambda *dropped: None)  # splits it in the middle
    saved = fit.Thread.from_state(json.loads(json.dumps(thread.to_state())), CATEGORIES[:-1])
    assert saved.labelled() == thread.labelled() == [("read 1", "exploration", 11, 1), ("read 3", "exploration", 13, 3)]
    assert saved.sums == thread.sums and saved.total == thread.total == 10 + 11 + 12 + 13 + 14 - 11
