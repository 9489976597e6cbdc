"""A session's row: the one structure the report, the rows file, the history, the team rollup and the HTML
pages read (measure/ledger.py `session_row` makes it; an agent's reader adds what only it records). A
TypedDict costs nothing at run time: rows stay plain dicts, packed as JSON between processes."""

from __future__ import annotations

from typing import TypedDict


class _SessionRowRequired(TypedDict):
    id: str
    agent: str  # "claude-code", "hermes", "codex", "gemini", "opencode", "openclaw"
    source: str  # "interactive", "subagent", "automated", ...
    parent: str | None  # a subagent's session
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

    cost_state: dict | None  # Claude Code's own totals, for calls no file recorded
    compaction_snapshots: list
    unrecorded_calls: int
    unrecorded_prompt_tokens: int
    unrecorded_reviews: int  # Hermes
    unrecorded_tasks: dict  # Hermes's auxiliary tasks
    unseen_calls: dict[str, int]  # sources/unseen.py
    bill_short: bool  # the records show more sent than was billed: both shares unknown (ledger.bill_short)
    unknown_because: str  # why the shares are unknown, in words
    usage_unknown: str
    machine: str  # stamped into a rows file (report/identity.py)
    person: str
