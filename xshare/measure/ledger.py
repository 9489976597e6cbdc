"""The accounting model of the spec: what each API call carried, by category.

A message is present from the call after it appears until a compaction or a trim removes it. At each
call the billed prompt, give or take a rounding tolerance, caps what may be present, and what the bill
exceeds the transcript by is system overhead (`xshare.measure.fit` says how the two are settled: what the
cache shows was sent is never trimmed, an estimate gives way before a counted message, and the overhead is
estimated again where the evidence says it changed). Billed tokens of a category are the sum over calls of
its present tokens; context tokens are the same over everything present plus overhead, so no call's context
exceeds its bill. The ledger takes one event at a time and its whole state round-trips through
`to_state`/`from_state`, so a transcript fed in one piece or in a thousand gives the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping

from xshare import METHOD_VERSION
from xshare.measure import fit
from xshare.measure.digests import KeptKeys
from xshare.measure.economics import Watch
from xshare.measure.ids import normal_id
from xshare.measure.present import key_digest
from xshare.measure.prices import NO_MODEL, band_of
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import stamp

TOOL_CATEGORIES = ("exploration", "edit", "shell", "web", "other")
# reread: file contents the agent re-sends on its own in a read's form (Claude Code, after a compaction),
# counted as sent; beside exploration, never inside its headline share (README, "Refinements")
REREAD = "reread"
# conversation: prompts, replies, compaction summaries; injected: hook output, CLAUDE.md, memory,
# system reminders; neuralmind: the NeuralMind block (reported like exploration: what it costs)
CONTEXT_CATEGORIES = ("conversation", "injected", "neuralmind")
# inherited: what a call's bill shows beyond the file's messages and the thread's own overhead: context from
# before the file (a parent's conversation, a resumed one); never exploration, never overhead (fit.py)
INHERITED = fit.INHERITED
OVERHEAD = fit.OVERHEAD
CATEGORIES = TOOL_CATEGORIES + (REREAD,) + CONTEXT_CATEGORIES + (INHERITED, OVERHEAD)
USAGE_FIELDS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output")
BY_MODEL_FIELDS = (*USAGE_FIELDS, "calls")  # a usage_by_model entry: the usage of its calls, and how many

FIRST_CALL = "first_call"  # per-call bills: a thread's overhead is estimated at its first call (fit.py)
SPREAD = "spread"  # Hermes: the session's bill minus what was present, spread over its calls

# Each message is counted on its own, but the provider counts it inside the request, joined to its neighbours
# (a blank line between merged reminders, a newline after a reminder block): up to a token at each end. With
# this tolerance the billing cap trims only beyond that much per present message, so a rounding-size excess
# never drops a message still being sent (the oldest, often the largest: a SessionStart context). Claude Code
# uses it (checked on the wire); the other readers keep a strict cap until theirs are checked the same way.
ROUNDING_PER_MESSAGE = 2


class Ledger:
    """One session's account. `detail=True` also keeps a per-call log (for the HTML summary)."""

    def __init__(self, overhead_mode: str = FIRST_CALL, detail: bool = False, rounding: int = 0) -> None:
        self.overhead_mode = overhead_mode
        self.detail = detail
        self.rounding = rounding  # tokens of excess a present message the cap lets pass (ROUNDING_PER_MESSAGE)
        self.threads: dict[str, fit.Thread] = {}
        self.calls = 0
        self.prompt_billed = 0
        self.billed = dict.fromkeys(CATEGORIES, 0)
        self.first_time = dict.fromkeys(CATEGORIES, 0)
        self.usage = dict.fromkeys(USAGE_FIELDS, 0)
        self.models: dict[str, int] = {}
        # model as recorded (NO_MODEL) -> the call's band (prices.band_of) -> BY_MODEL_FIELDS: each call is priced
        # at its own model and band, so a session of several models is never priced at one of them
        self.usage_by_model: dict[str, dict[str, dict[str, int]]] = {}
        self.compactions = 0
        self.trimmed = 0
        self.inherited_closed = 0  # inherited context of threads that ended (reset_thread)
        self.first_seen: str | None = None
        self.last_seen: str | None = None
        # detail only: one entry per call, compactions and trims, labelled messages that left
        self.call_log: list[dict] = []
        self.markers: list[dict] = []
        self.carried: list[list] = []
        # always: the cache economics of the calls as they stream by (the live status line's figures)
        self.watch = Watch()

    def _thread(self, name: str) -> fit.Thread:
        thread = self.threads.get(name)
        if thread is None:
            thread = self.threads[name] = fit.Thread(CATEGORIES[:-1], detail=self.detail)
        return thread

    # --- events -------------------------------------------------------------------------------

    def seen_time(self, timestamp: object, millis: bool = True) -> str | None:
        """Any activity of the session, as a record wrote its time (xshare.measure.timestamps.stamp). Returns the
        time in the stored form, which sorts as text, or None when it is unreadable or implausible: such
        a time is left out, so one junk or far-future row moves neither the start nor the end."""
        found = stamp(timestamp, millis)
        if found is None:
            return None
        if self.first_seen is None or found < self.first_seen:
            self.first_seen = found
        if self.last_seen is None or found > self.last_seen:
            self.last_seen = found
        return found

    def add(
        self,
        category: str,
        tokens: int,
        *,
        key: str | None = None,
        thread: str = "main",
        compactable: bool = True,
        label: str | None = None,
        estimated: bool = False,
    ) -> None:
        """A piece of context appears; it is present from the next call on. `estimated`: its tokens are an
        estimate (an image's, a PDF's), which gives way first when a bill has no room for it (fit.py)."""
        self.first_time[category] += tokens
        if tokens <= 0:
            return
        state = self.threads.get(thread) or self._thread(thread)
        state.append(key_digest(key), category, tokens, compactable, estimated,
                     (label, self.calls) if label is not None and self.detail else None)

    def call(
        self,
        billed_prompt: int,
        *,
        usage: dict[str, int] | None = None,
        thread: str = "main",
        cap: int | None = None,
        model: str | None = None,
        time: str | None = None,
    ) -> None:
        """One API call: charge every present message to it, once the bill and the messages are settled
        (fit.py; a SPREAD ledger's overhead is settled at the end, and `cap` trims its messages)."""
        state = self.threads.get(thread) or self._thread(thread)
        usage = usage or {}
        limit = billed_prompt if cap is None else cap
        if self.overhead_mode == FIRST_CALL:
            overhead = state.settle(limit, usage.get("cache_read", 0), model, self.rounding, self._removed)
        else:
            overhead = 0
            state.cap(limit, self._removed)
        self.calls += 1
        self.prompt_billed += billed_prompt
        carried = {category: tokens for category, tokens in state.sums.items() if tokens}
        billed = self.billed
        for category, tokens in carried.items():
            billed[category] += tokens
        billed[OVERHEAD] += overhead
        carried[OVERHEAD] = overhead
        totals = self.usage
        for name, value in usage.items():
            totals[name] += value
        self._by_model(model, billed_prompt, usage, 1)
        if model:
            self.models[model] = self.models.get(model, 0) + 1
        self.watch.call(billed_prompt, usage, thread=thread, model=model, time=time,
                        carried_conversation=overhead + state.sums["conversation"], context=carried)
        if self.detail:
            self.call_log.append(
                {
                    "prompt": billed_prompt,
                    "present": dict(state.sums),
                    "overhead": overhead,
                    "usage": dict(usage),
                    "model": model,
                    "time": time,
                    "thread": thread,
                    "epoch": len(state.epochs) - 1,
                }
            )

    def revise_call(self, model: str | None, before: tuple[int, dict[str, int]],
                    after: tuple[int, dict[str, int]]) -> None:
        """A later snapshot (billed prompt, usage) of a call of this model already counted (streamed rows):
        replace its usage, in the totals and in its model's band (a larger prompt may move it up one)."""
        self.prompt_billed += after[0] - before[0]
        for name in USAGE_FIELDS:
            self.usage[name] += after[1].get(name, 0) - before[1].get(name, 0)
        self._by_model(model, before[0], {name: -value for name, value in before[1].items()}, -1)
        self._by_model(model, after[0], after[1], 1)

    def _by_model(self, model: str | None, prompt: int, usage: dict[str, int], calls: int) -> None:
        bands = self.usage_by_model.get(model or NO_MODEL)
        if bands is None:
            bands = self.usage_by_model[model or NO_MODEL] = {}
        band = band_of(prompt)
        entry = bands.get(band)
        if entry is None:  # not setdefault: its default would be a new dict at every call
            entry = bands[band] = dict.fromkeys(BY_MODEL_FIELDS, 0)
        for name, value in usage.items():
            entry[name] += value
        entry["calls"] += calls

    def compact(self, thread: str = "main", keep: frozenset[str] | KeptKeys = frozenset()) -> None:
        """A compaction: every compactable message of the thread stops being present, except those whose
        key the compaction kept (Claude Code's preserved messages, re-sent after the summary; by text, or
        as the reader holds them past its maps' threshold, some by digest)."""
        state = self._thread(thread)
        kept = keep.as_digests() if isinstance(keep, KeptKeys) else {key_digest(key) for key in keep}
        state.compact(kept, self._removed)
        state.fresh = True  # what the next call carries beyond the summary says the overhead anew
        self.compactions += 1
        self.mark("compaction")

    def trim(self, keys: list[str], thread: str = "main") -> None:
        """The agent cleared these messages (Claude Code microcompaction): not present from now on."""
        removed = self._thread(thread).clear({key_digest(key) for key in keys}, self._removed)
        self.trimmed += removed
        self.mark("trimmed", removed)

    def reset_thread(self, thread: str) -> None:
        """A sidechain starts over (a new subagent inside an old-format file)."""
        state = self.threads.pop(thread, None)
        if state is not None:
            state.clear_all(self._removed)
            self.inherited_closed += state.inherited()
            if self.detail:
                self.call_log = self._split_log(thread, state, self.call_log)

    def present(self, thread: str = "main") -> tuple[dict[str, int], int]:
        """What the thread's next call would carry: the present tokens by category, and its overhead."""
        state = self._thread(thread)
        return dict(state.sums), state.overhead or 0

    def _removed(self, label: str, category: str, tokens: int, added_at: int) -> None:
        """A labelled message a thread dropped (fit.py): logged with detail."""
        if self.detail:
            self.carried.append([label, category, tokens, added_at, self.calls])

    def mark(self, kind: str, value: object = None) -> None:
        """An event (compaction, trim, a person's prompt) before the call numbered `at`; the watch always
        sees it, the marker list is kept with detail only."""
        self.watch.mark(kind, value)
        if self.detail:
            self.markers.append({"kind": kind, "value": value, "at": self.calls})

    # --- results ------------------------------------------------------------------------------

    def billed_tokens(self) -> dict[str, int]:
        """Billed tokens by category: the overhead charged that was inherited context moves to INHERITED
        (fit.py, step 3); in SPREAD mode the overhead is whatever the bill exceeds them by."""
        billed = dict(self.billed)
        inherited = self.inherited_closed + sum(state.inherited() for state in self.threads.values())
        billed[INHERITED] += inherited
        billed[OVERHEAD] -= inherited
        if self.overhead_mode == SPREAD:
            recorded = sum(billed[category] for category in CATEGORIES if category != OVERHEAD)
            billed[OVERHEAD] = max(0, self.prompt_billed - recorded)
        return billed

    def still_carried(self) -> list[list]:
        """Detail only: every labelled message with the calls it rode along, including those present now."""
        open_entries = [
            [label, category, tokens, added_at, self.calls]
            for state in self.threads.values()
            for label, category, tokens, added_at in state.labelled()
        ]
        return self.carried + open_entries

    def calls_detail(self) -> list[dict]:
        """Detail only: the per-call log, each call's inherited context split out of its overhead."""
        log = self.call_log
        for name, state in self.threads.items():
            log = self._split_log(name, state, log)
        return log

    @staticmethod
    def _split_log(name: str, state: fit.Thread, log: list[dict]) -> list[dict]:
        """The log with the calls of a thread's epochs split (a new list; entries changed are copies)."""
        parts = state.inherited_per_call()
        if not any(parts):
            return log
        split = []
        for entry in log:
            epoch = entry.get("epoch")
            if entry["thread"] == name and isinstance(epoch, int) and not entry.get("split") and parts[epoch]:
                entry = {**entry, "overhead": entry["overhead"] - parts[epoch], "split": True,
                         "present": {**entry["present"], INHERITED: parts[epoch]}}
            split.append(entry)
        return split

    # --- state --------------------------------------------------------------------------------

    def to_state(self) -> dict:
        return {
            "overhead_mode": self.overhead_mode,
            "rounding": self.rounding,
            "threads": {name: thread.to_state() for name, thread in self.threads.items()},
            "calls": self.calls,
            "prompt_billed": self.prompt_billed,
            "billed": self.billed,
            "first_time": self.first_time,
            "usage": self.usage,
            "models": self.models,
            "usage_by_model": self.usage_by_model,
            "compactions": self.compactions,
            "trimmed": self.trimmed,
            "inherited_closed": self.inherited_closed,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "watch": self.watch.to_state(),
        }

    @classmethod
    def from_state(cls, state: dict) -> Ledger:
        ledger = cls(state["overhead_mode"], rounding=state.get("rounding", 0))
        ledger.threads = {name: fit.Thread.from_state(thread, CATEGORIES[:-1])
                          for name, thread in state["threads"].items()}
        for name in ("calls", "prompt_billed", "compactions", "trimmed", "inherited_closed"):
            setattr(ledger, name, state[name])
        # a state saved before times were checked may hold "0" or 9999: those are dropped here
        ledger.first_seen, ledger.last_seen = stamp(state["first_seen"]), stamp(state["last_seen"])
        for name in ("billed", "first_time", "usage", "models"):
            setattr(ledger, name, dict(state[name]))
        ledger.usage_by_model = _copy_by_model(state["usage_by_model"])
        ledger.watch = Watch(state["watch"])  # a state without it (an older layout) is read again
        return ledger


def share(part: float, whole: float) -> float | None:
    """A share that cannot be computed is unknown (None), never 0."""
    return part / whole if whole > 0 else None


# The recorded context never exceeds the bill by more than the rounding the cap lets pass (ROUNDING_PER_MESSAGE):
# per call it cannot (fit.py), so a session over it is a modelling failure, never a share. A bill the records
# cannot explain (Hermes lost most of one, a gateway reported part of one, a tokenizer counting far more than the
# provider's where nothing is capped) makes the session's shares unknown, with this reason, and the report
# counts such sessions. Measured: no session of the corpus's six agents reads between 100.0% and 4,700%.
ROUNDING_ALLOWANCE = 0.01
UNEXPLAINED = "the records cannot explain the bill: they show more sent than was billed"


def bill_short(context: int, prompt: int) -> bool:
    """Whether a session's bill is short of what its records show was sent, beyond ROUNDING_ALLOWANCE."""
    return prompt > 0 and context > prompt * (1 + ROUNDING_ALLOWANCE)


def set_shares(row: SessionRow) -> SessionRow:
    """A row's shares from its counts, in one place for every reader that changes the counts: shares of
    the recorded context and of the bill, both unknown when the bill is short of the records (the row says
    so in `bill_short`, and `unknown_because` says why in words)."""
    billed, context, prompt = row["billed_tokens"], row["context_tokens"], row["prompt_tokens_billed"]
    short = bill_short(context, prompt)
    of_context, of_bill = (0, 0) if short else (context, prompt)  # share() of 0 is unknown
    row["exploration_share_of_context"] = share(billed["exploration"], of_context)
    row["exploration_share_of_prompt"] = share(billed["exploration"], of_bill)
    row["reread_share_of_context"] = share(billed[REREAD], of_context)
    row["reread_share_of_prompt"] = share(billed[REREAD], of_bill)
    row["recorded_over_billed"] = share(context, prompt)
    if short:
        row["bill_short"] = True
        row["unknown_because"] = UNEXPLAINED
    else:
        row.pop("bill_short", None)
        row.pop("unknown_because", None)
    return row


def _copy_by_model(by_model: dict) -> dict[str, dict[str, dict[str, int]]]:
    return {model: {band: dict(entry) for band, entry in bands.items()} for model, bands in by_model.items()}


def usage_sums_agree(row: Mapping) -> bool:
    """Whether a row's `usage` is the sum of its `usage_by_model` and its calls the sum of theirs: every reader
    that adds usage to a row adds it to one model's band too (checked where each row is made)."""
    by_model = row.get("usage_by_model")
    if by_model is None:
        return True
    entries = [entry for bands in by_model.values() for entry in bands.values()]
    usage = row.get("usage") or {}
    return all(sum(entry.get(name, 0) for entry in entries) == usage.get(name, 0) for name in USAGE_FIELDS) and \
        sum(entry.get("calls", 0) for entry in entries) == row.get("api_calls", 0)


def session_row(
    ledger: Ledger, *, session_id: str, agent: str, source: str, tokenizer: str, parent: str | None = None
) -> SessionRow:
    """The per-session row: counts and timestamps only, never text or paths."""
    billed = ledger.billed_tokens()
    models = sorted(ledger.models, key=lambda name: (-ledger.models[name], name))
    row = set_shares({
        "id": normal_id(session_id),  # as the history and the caches will hold it
        "agent": agent,
        "source": source,
        "parent": None if parent is None else normal_id(parent),
        "model": models[0] if models else None,
        "models": models,
        "started_at": ledger.first_seen,
        "last_activity": ledger.last_seen,
        "api_calls": ledger.calls,
        "prompt_tokens_billed": ledger.prompt_billed,
        "context_tokens": sum(billed.values()),
        # set_shares() fills these in, in these places
        "exploration_share_of_context": None,
        "exploration_share_of_prompt": None,
        "reread_share_of_context": None,
        "reread_share_of_prompt": None,
        "recorded_over_billed": None,
        "billed_tokens": billed,
        "first_time_tokens": dict(ledger.first_time),
        "usage": dict(ledger.usage),
        "usage_by_model": _copy_by_model(ledger.usage_by_model),
        "compactions": ledger.compactions,
        "trimmed_messages": ledger.trimmed,
        "tokenizer": tokenizer,
        "method": METHOD_VERSION,
    })
    assert usage_sums_agree(row), "a call's usage reached the row's total but not its model's"
    return row
