"""What a session's page shows, worked out from its data: cache rebuilds and their causes, compactions and
their payback, the costliest exploration results. No HTML here: the page modules draw these, and html/write.py
measures sessions and writes the pages (so the imports run write -> session_page -> analysis).

The input is neutral (`SessionData`: the session row, the ledger's per-call log, its markers and the tool
results with the calls they rode along), so any source whose ledger keeps detail can use it; what a source
cannot supply (Hermes bills per session, so it has no per-call usage) is flagged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xshare.measure import economics
from xshare.measure.economics import CAUSES, MIN_REBUILD, MIN_REBUILD_SHARE, WEIGHTS, Watch  # noqa: F401 (the page imports them here)
from xshare.measure.ledger import SPREAD, Ledger
from xshare.measure.row import SessionRow

# the weights, the rebuild rule and the compaction rule live in economics, shared with the live hook
# "what a summary or a narrower read would have removed": a summary replaces a result after the first
# call that carried it; a narrower read (a line range, a grep for the verdict line) caps it from the start
SUMMARY_TOKENS, NARROW_TOKENS = 500, 1000
TOP_RESULTS = 20


@dataclass
class Linked:
    """Another session this page points at (a subagent, the parent), with the page it has, if any."""

    row: SessionRow
    href: str | None = None


@dataclass
class SessionData:
    """Everything the page shows, independent of the agent that recorded it."""

    row: SessionRow  # ledger.session_row(...), the same row `xshare session --json` prints
    calls: list[dict]  # ledger.call_log
    markers: list[dict]  # ledger.markers
    carried: list[list]  # ledger.still_carried()
    origin: str = ""  # what it was read from (a transcript path; a database and session id)
    per_call_usage: bool = True  # the provider's usage per API call (Claude Code), not per session
    overhead_spread: bool = False  # overhead known only for the whole session (Hermes)
    turn_markers: bool = True  # a person's prompts are marked (turn boundaries can be a rebuild cause)
    tokenizer_note: str = ""
    problems: dict = field(default_factory=dict)
    subagents: list[Linked] = field(default_factory=list)
    parent: Linked | None = None
    index_href: str | None = None


def from_ledger(ledger: Ledger, row: SessionRow, **options) -> SessionData:
    """A page input from any source's detailed ledger; options are SessionData's other fields.

    A Hermes ledger (SPREAD overhead) has no per-call usage and no prompt markers, and says so."""
    if ledger.overhead_mode == SPREAD:
        options.setdefault("per_call_usage", False)
        options.setdefault("overhead_spread", True)
        options.setdefault("turn_markers", False)
    return SessionData(row, ledger.calls_detail(), ledger.markers, ledger.still_carried(), **options)


# --- analysis ------------------------------------------------------------------------------------


@dataclass
class Rebuild:
    call: int  # index in the call log (0-based; the page shows it 1-based)
    time: str | None
    cause: str
    detail: str
    also: list[str]
    expected: int  # what the previous call of the same conversation left in the cache (its read + write)
    read: int  # the surviving floor
    written: int
    rewritten: int  # the part of the drop written again: min(written, expected - read)
    rewritten_1h: int  # of which at the 1-hour rate (in proportion to the call's own write split)
    gap: float | None = None  # seconds since the previous call of the same conversation, when both have times
    resent: bool = False  # no write recorded: `rewritten` was re-sent as fresh input (Codex CLI, Gemini CLI)
    model: str | None = None  # the model of the call that rebuilt: its price is the rebuild's


def find_rebuilds(data: SessionData) -> list[Rebuild]:
    """The calls that rebuilt the cache, by economics.Watch's rule (the one the live hook applies): the
    cache read fell well below what the previous call of the same conversation left cached while the call
    wrote again (or, where the agent records no cache write, re-sent what had been cached as fresh input).
    Each rebuild has one cause, the first that applies of: a compaction or microcompaction since the
    previous call of its own conversation (thread), a model switch, a gap over 5 minutes (idle), a
    person's prompt (turn boundary); else other. A marker names no thread where its thread is the main
    one (a person's prompt, /compact): an inline subagent's rebuild is not blamed on them."""
    if not data.per_call_usage:
        return []
    marks: dict[int, list[dict]] = {}
    for marker in data.markers:
        marks.setdefault(marker["at"], []).append(marker)
    watch, found = Watch(), []
    for index, call in enumerate(data.calls):
        for marker in marks.get(index, ()):
            watch.mark(marker["kind"], marker["value"], marker.get("thread") or "main")
        rebuild = watch.call(call["prompt"], call["usage"], thread=call.get("thread") or "main",
                             model=call.get("model"), time=call.get("time"))
        if rebuild:
            found.append(Rebuild(**rebuild))
    return found


def rebuild_weight(rebuild: Rebuild, weights: dict[str, float] = WEIGHTS) -> float:
    """What re-writing (or re-sending) cost beyond reading the same tokens from the cache."""
    if rebuild.resent:
        return rebuild.rewritten * (weights["input"] - weights["cache_read"])
    five = rebuild.rewritten - rebuild.rewritten_1h
    return (five * (weights["cache_write_5m"] - weights["cache_read"])
            + rebuild.rewritten_1h * (weights["cache_write_1h"] - weights["cache_read"]))


def rebuild_usage(rebuild: Rebuild) -> dict[str, int]:
    """The tokens a rebuild paid for again, by kind (what measure.prices prices), before the cache read
    that would have served them instead is taken off."""
    if rebuild.resent:
        return {"input": rebuild.rewritten}
    return {"cache_write_5m": rebuild.rewritten - rebuild.rewritten_1h, "cache_write_1h": rebuild.rewritten_1h}


@dataclass
class Compaction:
    number: int
    at: int  # the first call after it
    time: str | None
    before: int  # prompt of the last call before it
    after: int  # prompt of the first call after it
    write_5m: int  # what that first call wrote to the cache
    write_1h: int
    followed: int  # calls after that first one, up to the next compaction or the end


def find_compactions(data: SessionData) -> tuple[list[Compaction], int]:
    """Each compaction with a call on both sides; and how many had no call before or after."""
    cards, skipped = [], 0
    ats = [m["at"] for m in data.markers if m["kind"] == "compaction"]
    n = len(data.calls)
    for number, at in enumerate(ats, 1):
        if at <= 0 or at >= n or not data.per_call_usage:
            skipped += 1
            continue
        ends = [later for later in ats if later > at]
        end = min(ends) if ends else n
        first = data.calls[at]
        cards.append(Compaction(number, at, first.get("time"), data.calls[at - 1]["prompt"], first["prompt"],
                                first["usage"].get("cache_write_5m", 0), first["usage"].get("cache_write_1h", 0),
                                end - at - 1))
    return cards, skipped


def compaction_economics(card: Compaction, weights: dict[str, float] = WEIGHTS) -> dict:
    """Write cost (weighted), saving per later call (weighted), calls to break even, paid off or not."""
    return economics.compaction_economics(card.before, card.after, card.write_5m, card.write_1h, card.followed,
                                          weights)


def compaction_now(data: SessionData, cards: list[Compaction]) -> tuple[Compaction, str] | None:
    """A compaction after the last call, as a card (`compaction_economics` prices it), and its basis.

    After a compaction the context is the system overhead plus a summary, all written to the cache again
    (at the session's usual cache lifetime). With a compaction in the session, the first call after the
    latest one measured exactly that ("measured"); without one, the conversation text present at the last
    call (prompts and replies, which a summary condenses) stands in for the summary ("floor": the saving
    is at least this)."""
    if not data.per_call_usage or not data.calls:
        return None
    last = data.calls[-1]
    if cards:
        after, basis = cards[-1].after, "measured"
    else:
        after, basis = last["overhead"] + last["present"].get("conversation", 0), "floor"
    one_hour = sum(c["usage"].get("cache_write_1h", 0) for c in data.calls)
    five = sum(c["usage"].get("cache_write_5m", 0) for c in data.calls)
    write = (0, after) if one_hour > five else (after, 0)
    return Compaction(0, len(data.calls), last.get("time"), max(last["prompt"], after), after, *write, 0), basis


def nudge_now(data: SessionData, cards: list[Compaction], card: Compaction) -> dict | None:
    """Whether the status line would suggest `card` (compaction_now's): economics.compaction_nudge, over
    the calls since the latest compaction (or the start)."""
    since = len(data.calls) - (cards[-1].at if cards else 0)
    return economics.compaction_nudge(card.before, card.after, card.write_1h > 0, since)


@dataclass
class ResultCost:
    tool: str
    target: str
    tokens: int
    calls: int
    added: int
    removed: int

    @property
    def billed(self) -> int:
        return self.tokens * self.calls


def exploration_costs(data: SessionData) -> dict:
    """The costliest exploration results and what a summary or a narrower read would have removed."""
    results = []
    for label, category, tokens, added, removed in data.carried:
        if category != "exploration":
            continue
        tool, _, target = str(label).partition(": ")
        results.append(ResultCost(tool, target, tokens, max(0, removed - added), added, removed))
    summary = narrow = both = carried = 0
    by_tool: dict[str, list[int]] = {}
    for result in results:
        t, c = result.tokens, result.calls
        if c <= 0:
            continue
        carried += t * c
        summary += max(0, t - SUMMARY_TOKENS) * (c - 1)
        narrow += max(0, t - NARROW_TOKENS) * c
        both += t * c - (min(t, NARROW_TOKENS) + min(t, SUMMARY_TOKENS) * (c - 1))
        entry = by_tool.setdefault(result.tool, [0, 0, 0])
        entry[0] += 1
        entry[1] += t
        entry[2] += t * c
    results.sort(key=lambda r: (-r.billed, r.added))
    return {"top": results[:TOP_RESULTS], "results": len(results), "carried": carried, "summary": summary,
            "narrow": narrow, "both": both, "by_tool": sorted(by_tool.items(), key=lambda kv: -kv[1][2])}
