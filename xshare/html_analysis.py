"""What a session's page shows, worked out from its data: cache rebuilds and their causes, compactions and
their payback, the costliest exploration results. No HTML here: `html_page` draws these, and `html`
measures sessions and writes the pages (so the imports run html -> html_page -> html_analysis).

The input is neutral (`SessionData`: the session row, the ledger's per-call log, its markers and the tool
results with the calls they rode along), so any source whose ledger keeps detail can use it; what a source
cannot supply (Hermes bills per session, so it has no per-call usage) is flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xshare.ledger import SPREAD, Ledger
from xshare.report import parse_time

# token weights in multiples of fresh input (the essay's table); the page shows them and lets them change
WEIGHTS = {"input": 1.0, "cache_read": 0.1, "cache_write_5m": 1.25, "cache_write_1h": 2.0, "output": 5.0}
# Anthropic caches nothing shorter than 1,024 tokens, so a smaller drop in cache reads is not a rebuild;
# nor is a drop under 5% of what was cached: in real transcripts that is a call made in parallel with
# the previous one, missing only that call's own write
MIN_REBUILD = 1024
MIN_REBUILD_SHARE = 0.05
TTL_5M_S, TTL_1H_S = 300, 3600
# "what a summary or a narrower read would have removed": a summary replaces a result after the first
# call that carried it; a narrower read (a line range, a grep for the verdict line) caps it from the start
SUMMARY_TOKENS, NARROW_TOKENS = 500, 1000
TOP_RESULTS = 20
CAUSES = ("compaction", "model switch", "idle", "turn boundary", "other")


@dataclass
class Linked:
    """Another session this page points at (a subagent, the parent), with the page it has, if any."""

    row: dict
    href: str | None = None


@dataclass
class SessionData:
    """Everything the page shows, independent of the agent that recorded it."""

    row: dict  # ledger.session_row(...), the same row `xshare session --json` prints
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


def from_ledger(ledger: Ledger, row: dict, **options) -> SessionData:
    """A page input from any source's detailed ledger; options are SessionData's other fields.

    A Hermes ledger (SPREAD overhead) has no per-call usage and no prompt markers, and says so."""
    if ledger.overhead_mode == SPREAD:
        options.setdefault("per_call_usage", False)
        options.setdefault("overhead_spread", True)
        options.setdefault("turn_markers", False)
    return SessionData(row, ledger.call_log, ledger.markers, ledger.still_carried(), **options)


# --- analysis ------------------------------------------------------------------------------------


def _markers_by_call(markers: list[dict]) -> dict[int, list[dict]]:
    found: dict[int, list[dict]] = {}
    for marker in markers:
        found.setdefault(marker["at"], []).append(marker)
    return found


def _write(usage: dict) -> int:
    return usage.get("cache_write_5m", 0) + usage.get("cache_write_1h", 0)


def _seconds(before: str | None, after: str | None) -> float | None:
    start, end = parse_time(before), parse_time(after)
    return (end - start).total_seconds() if start and end else None


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


def find_rebuilds(data: SessionData) -> list[Rebuild]:
    """Calls whose cache read fell at least MIN_REBUILD tokens and MIN_REBUILD_SHARE below what the
    previous call of the same conversation left cached, while they wrote at least MIN_REBUILD: the
    cache was rebuilt. The cause
    is the first that applies of: a compaction or microcompaction since the previous call, a model
    switch, a gap longer than the cache lifetime (1 hour when the conversation writes mostly 1-hour
    entries, else 5 minutes), a person's prompt (turn boundary); else other."""
    if not data.per_call_usage:
        return []
    marks = _markers_by_call(data.markers)
    previous: dict[str, int] = {}
    written_by_ttl: dict[str, list[int]] = {}
    found = []
    for index, call in enumerate(data.calls):
        thread = call.get("thread") or "main"
        usage = call["usage"]
        before = previous.get(thread)
        previous[thread] = index
        ttl_sums = written_by_ttl.setdefault(thread, [0, 0])
        ttl = TTL_1H_S if ttl_sums[1] > ttl_sums[0] else TTL_5M_S
        ttl_sums[0] += usage.get("cache_write_5m", 0)
        ttl_sums[1] += usage.get("cache_write_1h", 0)
        if before is None:
            continue  # a cold start: nothing of this conversation was cached yet
        last = data.calls[before]["usage"]
        expected = last.get("cache_read", 0) + _write(last)
        read, written = usage.get("cache_read", 0), _write(usage)
        drop = expected - read
        if drop < MIN_REBUILD or drop < MIN_REBUILD_SHARE * expected or written < MIN_REBUILD:
            continue
        causes: list[tuple[str, str]] = []
        between = [m for at in range(before + 1, index + 1) for m in marks.get(at, ())]
        compactions = sum(1 for m in between if m["kind"] == "compaction")
        cleared = sum(m["value"] or 0 for m in between if m["kind"] == "trimmed")
        if compactions:
            causes.append(("compaction", "/compact or auto-compact"))
        elif cleared:
            causes.append(("compaction", f"microcompaction cleared {cleared:,} tool result(s)"))
        old, new = data.calls[before].get("model"), call.get("model")
        if old and new and old != new:
            causes.append(("model switch", f"{old} \u2192 {new}"))
        gap = _seconds(data.calls[before].get("time"), call.get("time"))
        if gap is not None and gap > ttl:
            life = "1 h" if ttl == TTL_1H_S else "5 min"
            causes.append(("idle", f"{_duration(gap)} since the previous call (cache lifetime {life})"))
        if any(m["kind"] == "prompt" for m in between):
            causes.append(("turn boundary", "a prompt was sent"))
        cause, detail = causes[0] if causes else ("other", "no compaction, switch, idle gap or prompt")
        rewritten = min(written, expected - read)
        rewritten_1h = round(rewritten * usage.get("cache_write_1h", 0) / written)
        found.append(Rebuild(index, call.get("time"), cause, detail, [name for name, _ in causes[1:]],
                             expected, read, written, rewritten, rewritten_1h))
    return found


def rebuild_weight(rebuild: Rebuild, weights: dict[str, float] = WEIGHTS) -> float:
    """What re-writing cost beyond reading the same tokens from the cache."""
    five = rebuild.rewritten - rebuild.rewritten_1h
    return (five * (weights["cache_write_5m"] - weights["cache_read"])
            + rebuild.rewritten_1h * (weights["cache_write_1h"] - weights["cache_read"]))


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
    cost = card.write_5m * weights["cache_write_5m"] + card.write_1h * weights["cache_write_1h"]
    saving = (card.before - card.after) * weights["cache_read"]
    even = math.ceil(cost / saving) if saving > 0 else None
    return {"cost": cost, "saving": saving, "break_even": even,
            "paid_off": None if even is None else card.followed >= even}


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


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return f"{int(seconds)} s"
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes / 60
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"

