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
    SessionData,
    compaction_economics,
    exploration_costs,
    find_compactions,
    find_rebuilds,
    rebuild_weight,
)
from xshare.measure.economics import WEIGHTS, weighted

TOP_KEPT = 5  # a session's costliest exploration results kept in its summary (the pooled list shows as many)
SUBAGENT_SOURCE = "subagent"

# each habit: what its events are, what it is, the change, and the assumption its saving rests on
HABITS = {
    "turn boundary": (
        "rebuild(s)",
        "cache rebuilt when a prompt was sent (each prompt after the first in a run)",
        "batching the questions into fewer prompts",
        "each rebuild's re-written tokens would have been read from the cache instead (write weight 1.25 or 2, "
        "read 0.1)"),
    "idle": (
        "rebuild(s)",
        "cache rebuilt after idling past the cache lifetime",
        "coming back within the cache lifetime (5 min; 1 h where the session writes 1-hour entries)",
        "the re-written tokens would have been read from the cache instead"),
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


def _cache_used(usage: dict) -> bool:
    return bool(usage.get("cache_read") or usage.get("cache_write_5m") or usage.get("cache_write_1h"))


def session_habits(data: SessionData, weights: dict[str, float] = WEIGHTS) -> dict:
    """One session's habits as plain JSON: per habit [events, cost weight, saving weight], or the reason it
    cannot be measured ({"unknown": why}); its weighted bill; its costliest exploration results."""
    usage = data.row.get("usage") or {}
    cached = _cache_used(usage)
    summary: dict = {"id": data.row.get("id"), "agent": data.row.get("agent"), "model": data.row.get("model"),
                     "weight": weighted(usage, weights)}
    habits: dict[str, object] = {}
    if not data.per_call_usage:
        for name in ("turn boundary", "idle", "model switch", "compaction", "fresh session"):
            habits[name] = {"unknown": NO_PER_CALL}
    else:
        rebuilds = find_rebuilds(data)
        for name in ("turn boundary", "idle", "model switch"):
            if not cached:
                habits[name] = {"unknown": NO_CACHE}
                continue
            extra = sum(rebuild_weight(r, weights) for r in rebuilds if r.cause == name)
            habits[name] = [sum(1 for r in rebuilds if r.cause == name), extra, extra]
        habits.update(_compactions(data, weights))
    habits.update(_exploration(data, cached, weights, summary))
    summary["habits"] = habits
    return summary


def _compactions(data: SessionData, weights: dict[str, float]) -> dict:
    cards, _ = find_compactions(data)
    lost = [0, 0.0, 0.0]
    fresh = [0, 0.0, 0.0]
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


def pool(summaries: list[dict], dollars_per_weight: Callable[[dict], float | None] | None = None) -> dict:
    """Many sessions' habits: per habit its events, cost, saving (weighted), share of the weighted bill, the
    sessions it was measured in and those it could not be (by reason); sorted by cost, those that cost
    nothing apart; the costliest exploration results across sessions. With `dollars_per_weight` (a session's
    dollars for one weighted token, or None where its model has no price) each line also has its dollars,
    over the sessions that could be priced."""
    bill = sum(summary["weight"] for summary in summaries)
    lines = []
    for name, (noun, what, change, assumption) in HABITS.items():
        events = measured = unpriced = 0
        cost = saving = cost_dollars = saving_dollars = 0.0
        unknown: dict[str, dict[str, int]] = {}  # by reason, then agent
        for summary in summaries:
            value = summary["habits"].get(name)
            if value is None:
                continue
            if isinstance(value, dict):
                agents = unknown.setdefault(value["unknown"], {})
                agents[summary["agent"]] = agents.get(summary["agent"], 0) + 1
                continue
            measured += 1
            events, cost, saving = events + value[0], cost + value[1], saving + value[2]
            rate = dollars_per_weight(summary) if dollars_per_weight else None
            if rate is None:
                unpriced += 1 if value[1] > 0 else 0
            else:
                cost_dollars, saving_dollars = cost_dollars + value[1] * rate, saving_dollars + value[2] * rate
        lines.append({"habit": name, "what": what, "events_are": noun, "change": change, "assumption": assumption,
                      "events": events, "cost_weight": round(cost, 1), "saving_weight": round(saving, 1),
                      "share_of_weighted_bill": cost / bill if bill > 0 and measured else None,
                      "saving_share_of_weighted_bill": saving / bill if bill > 0 and measured else None,
                      "sessions_measured": measured, "sessions_unknown": unknown,
                      **({"cost_dollars": round(cost_dollars, 2), "saving_dollars": round(saving_dollars, 2),
                          "sessions_unpriced": unpriced} if dollars_per_weight else {})})
    lines.sort(key=lambda line: -line["cost_weight"])
    top = sorted(([*entry, summary["id"]] for summary in summaries for entry in summary.get("top", [])),
                 key=lambda entry: -entry[1] * entry[2])[:TOP_KEPT]
    return {"weighted_bill": round(bill, 1), "sessions": len(summaries), "weights": dict(WEIGHTS),
            "habits": [line for line in lines if line["cost_weight"] > 0],
            "cost_nothing": [line for line in lines if line["cost_weight"] <= 0],
            "costliest_results": [{"tool": tool, "tokens": tokens, "calls_carried": calls, "session": session,
                                   "carried_tokens": tokens * calls} for tool, tokens, calls, session in top]}


def costliest_habit(summary: dict) -> tuple[str, float] | None:
    """The habit that cost a session most (by weight), or None when none cost anything. The subagent and
    fresh-session habits restate exploration and compaction costs, so they are not compared here."""
    found = [(name, value[1]) for name, value in summary["habits"].items()
             if isinstance(value, list) and name not in ("subagent", "fresh session") and value[1] > 0]
    return max(found, key=lambda item: item[1]) if found else None
