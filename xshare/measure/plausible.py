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

from xshare.measure.ledger import CATEGORIES, INHERITED

MAX_TOKENS = 100_000_000  # one call's prompt, or any one of its usage fields
MAX_CALLS = 10_000_000  # one session's API calls (the busiest real ones make thousands)

# a row's fields that name or place it: text, or absent/null; anything else (a list, an object) is refused
_TEXT_FIELDS = ("source", "parent", "model", "tokenizer", "machine", "person", "started_at", "last_activity",
                "ended_at")
_COUNT_FIELDS = ("prompt_tokens_billed", "context_tokens", "unrecorded_prompt_tokens", "unrecorded_calls")
# what a report reads of every row without asking whether it is there
_REQUIRED = frozenset(("api_calls", "prompt_tokens_billed", "context_tokens", "exploration_share_of_context"))
_TEXT_TYPES = {str, type(None)}
_INT = {int}
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
    known = [found for found in counts if found is not None]
    if len(known) < len(counts):
        return None
    if prompt_parts is not None and sum(known[:prompt_parts]) > MAX_TOKENS:
        return None
    return known


def session_counts(values: Iterable[object], calls: int) -> list[int] | None:
    """A session's summed usage fields (Hermes bills per session) as counts, or None when any is impossible
    for a session of `calls` calls."""
    limit = MAX_TOKENS * (min(max(calls, 0), MAX_CALLS) + 1)
    counts = [count(value, limit) for value in values]
    known = [found for found in counts if found is not None]
    return None if len(known) < len(counts) else known


def row_problem(row: object) -> str | None:
    """Why a session row (a rows file's line, a history line) cannot be summed, or None when it can.
    xshare writes every figure of a row, so here null is no count: a report would sum it."""
    if not isinstance(row, dict):
        return NOT_A_ROW
    if type(row.get("id")) is not str or type(row.get("agent")) is not str:
        return NO_SESSION
    if not set(map(type, map(row.get, _TEXT_FIELDS))) <= _TEXT_TYPES:
        return "a name or time that is not text"
    if not row.keys() >= _REQUIRED:
        return "a figure missing"
    calls = row["api_calls"]
    if not _counts([calls], MAX_CALLS):
        return "an impossible call count"
    limit = MAX_TOKENS * (calls + 1)
    if not _counts([row.get(name, 0) for name in _COUNT_FIELDS], limit):
        return "an impossible token count"
    billed, first = row.get("billed_tokens"), row.get("first_time_tokens")
    for figures in (billed, first):  # a row written before inherited context had its category held none
        if isinstance(figures, dict):
            figures.setdefault(INHERITED, 0)
    for name, figures in (("billed_tokens", billed), ("first_time_tokens", first)):
        if not isinstance(figures, dict) or not _counts(list(map(figures.get, CATEGORIES)), limit):
            return f"missing or impossible {name}"
    usage, tasks = row.get("usage"), row.get("unrecorded_tasks")
    if not (usage is None or isinstance(usage, dict) and _counts(list(usage.values()), limit)) or not (
            tasks is None or isinstance(tasks, dict) and _counts(list(tasks.values()), MAX_CALLS)):
        return "impossible usage"
    assert isinstance(billed, dict)  # the loop above returned otherwise
    if sum(billed[category] for category in CATEGORIES) > row["context_tokens"]:
        return "category tokens exceeding the context"
    if row.get("unrecorded_calls", 0) > calls or row.get("unrecorded_prompt_tokens", 0) > row["prompt_tokens_billed"]:
        return "more unrecorded calls or tokens than the session's"
    if not _share(row["exploration_share_of_context"]):
        return "an impossible share"
    return None


def _counts(values: list, limit: int) -> bool:
    """Every value a count from 0 to `limit` (null is none: a report would sum it). map/min/max: a rows
    file of a million lines checks some thirty figures a line."""
    return not values or set(map(type, values)) == _INT and min(values) >= 0 and max(values) <= limit


def _share(value: object) -> bool:
    """A share is unknown (null) or a fraction of its whole."""
    if value is None:
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value <= 1
