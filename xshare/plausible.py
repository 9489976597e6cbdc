"""The one rule for figures xshare did not compute itself: a call's usage as an agent recorded it, a row
from a rows file, a line of the history. What cannot be a real count is refused whole, never clamped or
taken as 0: one impossible number (1e12 tokens, -5, 1e300) would otherwise outweigh every real session.

A count is an int (not a bool: True is an int in Python) from 0 to its limit. Floats, NaN, Infinity and
numbers written as strings are refused: every agent and xshare itself write counts as JSON integers.
Missing or null is 0, as the APIs leave out what does not apply. No API call carries more than MAX_TOKENS
prompt or output tokens (context windows hold a few million), so a session's token figures are at most
MAX_TOKENS per call, plus one call's worth (text present before the first call, a bill with no call).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from xshare.ledger import CATEGORIES

MAX_TOKENS = 100_000_000  # one call's prompt, or any one of its usage fields
MAX_CALLS = 10_000_000  # one session's API calls (the busiest real ones make thousands)

# a row's fields that name or place it: text, or absent/null; anything else (a list, an object) is refused
_TEXT_FIELDS = ("source", "parent", "model", "tokenizer", "machine", "person", "started_at", "last_activity",
                "ended_at")
_COUNT_FIELDS = ("prompt_tokens_billed", "context_tokens", "unrecorded_prompt_tokens")
# what a report reads of every row without asking whether it is there
_REQUIRED = ("api_calls", "prompt_tokens_billed", "context_tokens", "exploration_share_of_context")
_SHARES = ("exploration_share_of_context",)
NOT_A_ROW = "not a JSON object"
NO_SESSION = "no session id or agent"


def count(value: object, limit: int = MAX_TOKENS) -> int | None:
    """A count from 0 to `limit`; 0 for missing/null; None when the value cannot be a count."""
    if value is None:
        return 0
    if type(value) is int and 0 <= value <= limit:
        return value
    return None


def call_counts(values: Iterable[object], prompt_parts: int | None = None) -> list[int] | None:
    """One API call's usage fields as counts, or None when any of them is impossible, or when the first
    `prompt_parts` of them (the parts of the billed prompt) add up to more than one call can carry."""
    counts = [count(value) for value in values]
    if None in counts:
        return None
    if prompt_parts is not None and sum(counts[:prompt_parts]) > MAX_TOKENS:
        return None
    return counts


def session_counts(values: Iterable[object], calls: int) -> list[int] | None:
    """A session's summed usage fields (Hermes bills per session) as counts, or None when any is impossible
    for a session of `calls` calls."""
    limit = MAX_TOKENS * (min(max(calls, 0), MAX_CALLS) + 1)
    counts = [count(value, limit) for value in values]
    return None if None in counts else counts


def row_problem(row: object) -> str | None:
    """Why a session row (a rows file's line, a history line) cannot be summed, or None when it can.
    xshare writes every figure of a row, so here null is no count: a report would sum it."""
    if not isinstance(row, dict):
        return NOT_A_ROW
    if not isinstance(row.get("id"), str) or not isinstance(row.get("agent"), str):
        return NO_SESSION
    if any(not isinstance(row.get(name), (str, type(None))) for name in _TEXT_FIELDS):
        return "a name or time that is not text"
    if any(name not in row for name in _REQUIRED):
        return "a figure missing"
    calls = _figure(row["api_calls"], MAX_CALLS)
    if calls is None:
        return "an impossible call count"
    limit = MAX_TOKENS * (calls + 1)
    if any(_figure(row.get(name, 0), limit) is None for name in _COUNT_FIELDS):
        return "an impossible token count"
    for name in ("billed_tokens", "first_time_tokens"):
        figures = row.get(name)
        if not isinstance(figures, dict) or any(_figure(figures.get(category), limit) is None
                                                for category in CATEGORIES):
            return f"missing or impossible {name}"
    if not _counts_or_absent(row.get("usage"), limit) or not _counts_or_absent(row.get("unrecorded_tasks"),
                                                                             MAX_CALLS):
        return "impossible usage"
    if sum(row["billed_tokens"][category] for category in CATEGORIES) > row["context_tokens"]:
        return "category tokens exceeding the context"
    if _figure(row.get("unrecorded_calls", 0), calls) is None or (
            row.get("unrecorded_prompt_tokens", 0) > row["prompt_tokens_billed"]):
        return "more unrecorded calls or tokens than the session's"
    if any(not _share(row.get(name)) for name in _SHARES):
        return "an impossible share"
    return None


def _figure(value: object, limit: int) -> int | None:
    """A row's count: as `count`, but null is refused (a report would sum it)."""
    return None if value is None else count(value, limit)


def _counts_or_absent(figures: object, limit: int) -> bool:
    """Absent, or an object of counts (usage by field, auxiliary calls by task)."""
    if figures is None:
        return True
    return isinstance(figures, dict) and all(_figure(value, limit) is not None for value in figures.values())


def _share(value: object) -> bool:
    """A share is unknown (null) or a fraction of its whole."""
    if value is None:
        return True
    return type(value) in (int, float) and math.isfinite(value) and 0 <= value <= 1
