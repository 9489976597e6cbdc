"""What each habit of the cache-rebuild essay cost, one session at a time and pooled over many: the rules of
the session page (html/analysis.py: rebuilds and their causes, compaction payback, the costliest exploration
results; measure/economics.py: the weights), applied once here for `xshare advice` and the HTML index.

A session's summary (`session_habits`) is small plain JSON, so many sessions' summaries can be pooled
(`pool`) without keeping their call logs. A figure a session's records cannot show is left out of that
habit's sums and counted as unknown, with the reason: never added as 0.
"""

from __future__ import annotations

from collections.abc import Callable

from xshare.html.analysis import (
    NARROW_TOKENS,
    SUMMARY_TOKENS,
    Rebuild,
    SessionData,
    compaction_economics,
    exploration_costs,
    find_compactions,
    find_rebuilds,
    rebuild_usage,
    rebuild_weight,
)
from xshare.measure.economics import MIN_REBUILD, MIN_REBUILD_SHARE, TTL_1H_S, WEIGHTS, weighted

TOP_KEPT = 5  # a session's costliest exploration results kept in its summary (the pooled list shows as many)
SUBAGENT_SOURCE = "subagent"
EVIDENCE_KEPT = 3  # the sessions each line names, costliest first, so `xshare html ID` opens them
# each rebuild is one event of one line (or, after a compaction or with no cause, of none): its cause by
# html/analysis.py find_rebuilds, an idle gap over an hour apart, where coming back sooner is no advice
REBUILD_HABITS = ("turn boundary", "idle", "long break", "model switch")
CAUSE_RULE = ("each rebuild is counted once, under the first cause that applies: a compaction since the previous "
              "call of its own thread (a subagent's rebuild is its own); a model switch; a gap over an hour (a long "
              "break) or over 5 minutes (idle: even on the 1-hour cache, a rebuild after such a gap shows its entries "
              "had expired); a prompt sent (turn boundary); else no cause the records show. Where an agent records "
              f"no cache write, a rebuild is a call whose cache read fell at least {MIN_REBUILD:,} tokens (and "
              f"{MIN_REBUILD_SHARE:.0%}) below the previous call's whole prompt, which the provider had cached: the "
              "fall is re-sent as fresh input")

# each habit: what its events are, what it is, the change, and the assumption its saving rests on
HABITS = {
    "turn boundary": (
        "rebuild(s)",
        "cache rebuilt when a prompt was sent within 5 minutes of the previous call (no compaction, model switch "
        "or idle gap before it)",
        "batching the questions into fewer prompts",
        "each rebuild's re-written tokens would have been read from the cache instead (write weight 1.25 or 2, "
        "read 0.1)"),
    "idle": (
        "rebuild(s)",
        "cache rebuilt after idling 5 minutes to an hour",
        "coming back within 5 minutes",
        "the re-written tokens would have been read from the cache instead"),
    "long break": (
        "rebuild(s)",
        "cache rebuilt after a break of over an hour",
        "a fresh session or /clear after the break",
        "the work after the break needed none of the conversation before it: a fresh session would have written "
        "only the system overhead (that call's own) to the cache, at the same rate, instead of the whole context; "
        "what the later calls would have carried less is not counted"),
    "model switch": (
        "rebuild(s)",
        "cache rebuilt after a model switch",
        "staying on one model within a session",
        "the re-written tokens would have been read from the cache instead"),
    "exploration": (
        "result(s)",
        "exploration results carried on every later call (size x calls)",
        "line ranges and a summary after first use (the session page's rule)",
        f"each result capped at {NARROW_TOKENS:,} tokens by a narrower read, and replaced by a "
        f"{SUMMARY_TOKENS:,}-token summary after the first call that carried it; carried tokens weigh a cache "
        "read (0.1), or fresh input (1) where the agent recorded no caching"),
    "subagent": (
        "result(s)",
        "reading done in the main thread that a subagent could have done for less, carried afterwards",
        "a subagent doing the reading and handing back a summary",
        f"the subagent carries each result once, written to its cache (1.25 a token), and the main thread carries "
        f"a {SUMMARY_TOKENS:,}-token summary for as many calls; only results where that is cheaper count"),
    "compaction": (
        "compaction(s)",
        "compactions that did not pay back (write cost over what they saved in the calls that followed)",
        "not compacting where fewer calls were left than its break-even",
        "the net loss of each such compaction (its write cost minus its saving per call times the calls "
        "that followed) would not have been spent"),
    "fresh session": (
        "compaction(s)",
        "compactions where a fresh session (/clear) would have been cheaper",
        "a fresh session instead of a compaction that did not pay back",
        "the work after it needed none of the summary: a fresh session writes only the system overhead to the "
        "cache and carries only it"),
}
NO_PER_CALL = "hold bills per session, not per call"
NO_CACHE = "hold no cache reads or writes"
NO_PROMPTS = "mark no prompts (a rebuild cannot be put down to one)"
NO_WRITES = "hold no cache writes (what a compaction wrote is not known)"


def _cache_used(usage: dict) -> bool:
    return bool(usage.get("cache_read") or usage.get("cache_write_5m") or usage.get("cache_write_1h"))


def session_habits(data: SessionData, weights: dict[str, float] = WEIGHTS) -> dict:
    """One session's habits as plain JSON: per habit [events, cost weight, saving weight], or the reason it
    cannot be measured ({"unknown": why}); its weighted bill; its costliest exploration results; its rebuilds
    by cause (each once); per rebuild habit and model, the tokens to price ("money"). A session that made no
    call cost nothing: 0, not unknown."""
    usage = data.row.get("usage") or {}
    cached = _cache_used(usage)
    summary: dict = {"id": data.row.get("id"), "agent": data.row.get("agent"), "model": data.row.get("model"),
                     "weight": weighted(usage, weights), "rebuilds": {}, "money": {}}
    habits: dict[str, object] = {}
    if not data.calls:
        habits.update({name: [0, 0.0, 0.0] for name in (*REBUILD_HABITS, "compaction", "fresh session")})
    elif not data.per_call_usage:
        for name in (*REBUILD_HABITS, "compaction", "fresh session"):
            habits[name] = {"unknown": NO_PER_CALL}
    else:
        habits.update(_rebuild_habits(data, cached, weights, summary))
        habits.update(_compactions(data, weights))
    habits.update(_exploration(data, cached, weights, summary))
    summary["habits"] = habits
    return summary


def rebuild_habit(rebuild: Rebuild) -> str:
    """The line a rebuild counts in (a cause of find_rebuilds', idle split at an hour), or its cause where
    no line names it (a compaction, other)."""
    if rebuild.cause == "idle" and rebuild.gap is not None and rebuild.gap > TTL_1H_S:
        return "long break"
    return rebuild.cause


def _rebuild_habits(data: SessionData, cached: bool, weights: dict[str, float], summary: dict) -> dict:
    """The rebuild lines: each rebuild's extra weight in its one line; a long break's saving is a fresh
    session's write of the overhead against the rebuild's write of the whole context."""
    if not cached:
        return {name: {"unknown": NO_CACHE} for name in REBUILD_HABITS}
    found: dict[str, object] = {name: [0, 0.0, 0.0] for name in REBUILD_HABITS}
    if not data.turn_markers:
        found["turn boundary"] = {"unknown": NO_PROMPTS}
    instead = [0.0, 0.0]  # long breaks: what re-writing the context cost, what a fresh session's write would
    for rebuild in find_rebuilds(data):
        name = rebuild_habit(rebuild)
        summary["rebuilds"][name] = summary["rebuilds"].get(name, 0) + 1
        line = found.get(name)
        if not isinstance(line, list):
            continue
        extra, paid = rebuild_weight(rebuild, weights), weighted(rebuild_usage(rebuild), weights)
        spared = rebuild.rewritten - min(data.calls[rebuild.call].get("overhead", 0), rebuild.rewritten)
        saving = paid * spared / rebuild.rewritten if name == "long break" else extra
        if name == "long break":
            instead = [instead[0] + paid, instead[1] + paid - saving]
        found[name] = [line[0] + 1, line[1] + extra, line[2] + saving]
        _money(summary, name, rebuild, spared if name == "long break" else None)
    if instead[0]:
        summary["long_break"] = instead
    return found


def _money(summary: dict, name: str, rebuild: Rebuild, spared: int | None) -> None:
    """A rebuild's tokens to price at its own call's model (never the session's most-used one): as its cost,
    what it paid again less the cache read that would have served it; as its saving, the same, or for a long
    break the `spared` part of what it paid again (a fresh session writes the rest)."""
    paid = {kind: float(tokens) for kind, tokens in rebuild_usage(rebuild).items() if tokens}
    cost = {**paid, "cache_read": -float(rebuild.rewritten)}
    saving = cost if spared is None else {kind: tokens * spared / rebuild.rewritten for kind, tokens in paid.items()}
    entry = summary["money"].setdefault(name, {}).setdefault(rebuild.model or "", [0, {}, {}])
    entry[0] += 1
    for sums, usage in ((entry[1], cost), (entry[2], saving)):
        for kind, tokens in usage.items():
            sums[kind] = sums.get(kind, 0.0) + tokens


def _compactions(data: SessionData, weights: dict[str, float]) -> dict:
    cards, _ = find_compactions(data)
    lost = [0, 0.0, 0.0]
    fresh = [0, 0.0, 0.0]
    if cards and not any(call["usage"].get("cache_write_5m") or call["usage"].get("cache_write_1h")
                         for call in data.calls):
        return {"compaction": {"unknown": NO_WRITES}, "fresh session": {"unknown": NO_WRITES}}
    write = weights["cache_write_1h"] if any(c.write_1h > c.write_5m for c in cards) else weights["cache_write_5m"]
    for card in cards:
        money = compaction_economics(card, weights)
        if money["paid_off"] is not False:
            continue
        loss = money["cost"] - money["saving"] * card.followed
        lost = [lost[0] + 1, lost[1] + loss, lost[2] + loss]
        overhead = min(data.calls[card.at].get("overhead", 0), card.after)
        # the compaction's path after it against a fresh session's: each writes its start and carries it
        spared = (card.after - overhead) * (write + weights["cache_read"] * card.followed)
        fresh = [fresh[0] + 1, fresh[1] + spared, fresh[2] + spared]
    return {"compaction": lost, "fresh session": fresh}


def _exploration(data: SessionData, cached: bool, weights: dict[str, float], summary: dict) -> dict:
    """Exploration by size x calls (the page's rule), and the main thread's reading a subagent could do."""
    costs = exploration_costs(data)
    per_token = weights["cache_read"] if cached else weights["input"]
    found: dict[str, object] = {"exploration": [costs["results"], costs["carried"] * per_token,
                                                costs["both"] * per_token]}
    summary["top"] = [[r.tool, r.tokens, r.calls] for r in costs["top"][:TOP_KEPT]]
    if data.row.get("source") != SUBAGENT_SOURCE:
        events, carried, saving = 0, 0.0, 0.0
        for tokens, calls in _all_results(data):
            kept = per_token * tokens * calls
            instead = weights["cache_write_5m"] * tokens + per_token * SUMMARY_TOKENS * calls
            if kept > instead:  # only reading a subagent would have carried for less counts
                events, carried, saving = events + 1, carried + kept, saving + kept - instead
        found["subagent"] = [events, carried, saving]
    return found


def _all_results(data: SessionData) -> list[tuple[int, int]]:
    """Every exploration result's size and the calls that carried it."""
    return [(tokens, max(0, removed - added)) for _, category, tokens, added, removed in data.carried
            if category == "exploration"]


# --- pooled over sessions --------------------------------------------------------------------------


Price = Callable[[str | None, dict], float | None]  # a usage's dollars at a model's list price, or None


def pool(summaries: list[dict], dollars_per_weight: Callable[[dict], float | None] | None = None,
         price: Price | None = None) -> dict:
    """Many sessions' habits: per habit its events, cost, saving (weighted), share of the weighted bill, the
    sessions it was measured in and those it could not be (by reason), the (up to three) sessions that cost
    most in it; sorted by cost, those that cost nothing apart; every rebuild counted once by its line or
    cause; the costliest exploration results across sessions. With `dollars_per_weight` (a session's dollars
    for one weighted token, or None where its model has no price) each line also has its dollars, over the
    sessions that could be priced; with `price` too, a rebuild line's dollars are each rebuild's tokens at
    its own call's model, a rebuild of a model with no price counted as not priced (never $0)."""
    bill = sum(summary["weight"] for summary in summaries)
    lines = [_pooled_line(name, summaries, bill, dollars_per_weight, price) for name in HABITS]
    lines.sort(key=lambda line: -line["cost_weight"])
    top = sorted(([*entry, summary["id"]] for summary in summaries for entry in summary.get("top", [])),
                 key=lambda entry: -entry[1] * entry[2])[:TOP_KEPT]
    by_cause: dict[str, int] = {}
    for summary in summaries:
        for cause, count in summary.get("rebuilds", {}).items():
            by_cause[cause] = by_cause.get(cause, 0) + count
    return {"weighted_bill": round(bill, 1), "sessions": len(summaries), "weights": dict(WEIGHTS),
            "rebuilds": {"total": sum(by_cause.values()), "by_cause": by_cause, "rule": CAUSE_RULE},
            "habits": [line for line in lines if line["cost_weight"] > 0],
            "cost_nothing": [line for line in lines if line["cost_weight"] <= 0],
            "costliest_results": [{"tool": tool, "tokens": tokens, "calls_carried": calls, "session": session,
                                   "carried_tokens": tokens * calls} for tool, tokens, calls, session in top]}


def _pooled_line(name: str, summaries: list[dict], bill: float,
                 dollars_per_weight: Callable[[dict], float | None] | None, price: Price | None) -> dict:
    noun, what, change, assumption = HABITS[name]
    events = measured = 0
    cost = saving = 0.0
    unknown: dict[str, dict[str, int]] = {}  # by reason, then agent
    behind: list[tuple[float, str]] = []
    for summary in summaries:
        value = summary["habits"].get(name)
        if isinstance(value, dict):
            agents = unknown.setdefault(value["unknown"], {})
            agents[summary["agent"]] = agents.get(summary["agent"], 0) + 1
        elif value is not None:
            measured += 1
            events, cost, saving = events + value[0], cost + value[1], saving + value[2]
            behind += [(value[1], summary["id"])] if value[1] > 0 else []
    line = {"habit": name, "what": what, "events_are": noun, "change": change, "assumption": assumption,
            "events": events, "cost_weight": round(cost, 1), "saving_weight": round(saving, 1),
            "share_of_weighted_bill": cost / bill if bill > 0 and measured else None,
            "saving_share_of_weighted_bill": saving / bill if bill > 0 and measured else None,
            "sessions_measured": measured, "sessions_unknown": unknown,
            "sessions_behind": [session for _, session in sorted(behind, key=lambda item: -item[0])[:EVIDENCE_KEPT]]}
    if name == "long break":
        line["rewrite_weight"] = round(sum(s.get("long_break", (0, 0))[0] for s in summaries), 1)
        line["fresh_weight"] = round(sum(s.get("long_break", (0, 0))[1] for s in summaries), 1)
    if dollars_per_weight is not None:
        line.update(_rebuild_dollars(name, summaries, price) if price and name in REBUILD_HABITS
                    else _session_dollars(name, summaries, dollars_per_weight))
    return line


def _session_dollars(name: str, summaries: list[dict], dollars_per_weight: Callable[[dict], float | None]) -> dict:
    """A line's dollars with each session's weight priced at its model's fresh input."""
    unpriced, cost, saving = 0, 0.0, 0.0
    for summary in summaries:
        value = summary["habits"].get(name)
        if not isinstance(value, list):
            continue
        rate = dollars_per_weight(summary)
        if rate is None:
            unpriced += 1 if value[1] > 0 else 0
        else:
            cost, saving = cost + value[1] * rate, saving + value[2] * rate
    return {"cost_dollars": round(cost, 2), "saving_dollars": round(saving, 2), "sessions_unpriced": unpriced}


def _rebuild_dollars(name: str, summaries: list[dict], price: Price) -> dict:
    """A rebuild line's dollars: each model's rebuilds at that model's rates; those of a model with no
    price counted, not priced."""
    unpriced, cost, saving = 0, 0.0, 0.0
    for summary in summaries:
        for model, (events, cost_usage, saving_usage) in summary.get("money", {}).get(name, {}).items():
            paid, spared = _signed(price, model, cost_usage), _signed(price, model, saving_usage)
            if paid is None or spared is None:
                unpriced += events
            else:
                cost, saving = cost + paid, saving + spared
    return {"cost_dollars": round(cost, 2), "saving_dollars": round(saving, 2), "events_unpriced": unpriced}


def _signed(price: Price, model: str, usage: dict) -> float | None:
    """Dollars for a usage whose negative kinds are taken off (the cache read a rebuild did not need)."""
    plus = price(model or None, {kind: tokens for kind, tokens in usage.items() if tokens > 0})
    minus = price(model or None, {kind: -tokens for kind, tokens in usage.items() if tokens < 0})
    return None if plus is None or minus is None else plus - minus


def costliest_habit(summary: dict) -> tuple[str, float] | None:
    """The habit that cost a session most (by weight), or None when none cost anything. The subagent and
    fresh-session habits restate exploration and compaction costs, so they are not compared here."""
    found = [(name, value[1]) for name, value in summary["habits"].items()
             if isinstance(value, list) and name not in ("subagent", "fresh session") and value[1] > 0]
    return max(found, key=lambda item: item[1]) if found else None
