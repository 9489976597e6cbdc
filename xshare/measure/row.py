"""A session's row: the one structure the report, the rows file, the history, the team rollup and the HTML
pages read (measure/ledger.py `session_row` makes it; an agent's reader adds what only it records). A
TypedDict costs nothing at run time: rows stay plain dicts, packed as JSON between processes. Also the
one vocabulary of a session's kind, which every view counts by."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypedDict

# A session's kind is its row's `source`: the report's groups, `sessions`, `session`, the index and the pages
# all name and count a session by it, never by whether it has a parent (a Hermes session continuing another
# after a compaction has one and is still the platform's session). The report's order; others follow it.
KINDS = ("interactive", "automated", "subagent", "benchmark", "internal")
RUN_INSIDE = frozenset({"subagent", "internal"})  # kinds run by another session: `sessions` lists them on request
# what a report's window places a row by (report/render.py `Window.place`): kept beside packed rows where they
# were known, so the window need not decode every row (agents/common/packed.py)
PLACED_BY = ("started_at", "last_activity", "ended_at")


def kind_order(kind: str) -> tuple[int, str]:
    """A kind's place: KINDS in their order, then any other (a Hermes platform) by name."""
    return (KINDS.index(kind), "") if kind in KINDS else (len(KINDS), kind)


def count_kinds(rows: Iterable[Mapping]) -> dict[str, int]:
    """How many sessions of each kind, in kind_order."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["source"]] = counts.get(row["source"], 0) + 1
    return dict(sorted(counts.items(), key=lambda item: kind_order(item[0])))


def kinds_text(counts: dict[str, int]) -> str:
    """A count_kinds in words: "253 interactive, 87 subagent and 16 internal"."""
    parts = [f"{count:,} {kind}" for kind, count in counts.items()]
    return " and ".join(parts) if len(parts) < 3 else ", ".join(parts[:-1]) + " and " + parts[-1]


class _SessionRowRequired(TypedDict):
    id: str
    agent: str  # "claude-code", "hermes", "codex", "gemini", "opencode", "openclaw"
    source: str  # its kind (KINDS), or for Hermes the platform it came from ("weixin")
    parent: str | None  # the session that started it (a subagent's) or that it continues (Hermes's rotation)
    model: str | None
    models: list[str]
    started_at: str | None
    last_activity: str | None
    api_calls: int
    compactions: int
    trimmed_messages: int
    context_tokens: int
    prompt_tokens_billed: int
    billed_tokens: dict[str, int]  # by category
    first_time_tokens: dict[str, int]
    usage: dict[str, int]  # input, cache_read, cache_write, output
    exploration_share_of_context: float | None
    exploration_share_of_prompt: float | None
    reread_share_of_context: float | None
    reread_share_of_prompt: float | None
    recorded_over_billed: float | None
    tokenizer: str
    method: int


class SessionRow(_SessionRowRequired, total=False):
    """A row; the keys below are there only where the agent records them (or a rows file was stamped)."""

    usage_by_model: dict[str, dict[str, dict[str, int]]]  # by model, by price band: usage and calls (prices.row_cost)
    cost_state: dict | None  # Claude Code's own totals, for calls no file recorded
    compaction_snapshots: list
    unrecorded_calls: int
    unrecorded_prompt_tokens: int
    unrecorded_reviews: int  # Hermes
    unrecorded_tasks: dict  # Hermes's auxiliary tasks
    unseen_calls: dict[str, int]  # agents/common/unseen.py
    bill_short: bool  # the records show more sent than was billed: both shares unknown (ledger.bill_short)
    unknown_because: str  # why the shares are unknown, in words
    usage_unknown: str
    machine: str | None  # stamped into a rows file (report/identity.py; None: no state folder to keep it in)
    person: str
