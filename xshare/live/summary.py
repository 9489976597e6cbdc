"""The summary the hook writes after each update and the status line reads (one small JSON file per session,
xshare.state.paths.line_file): one structure both name. Standard library only; the hook and the status line
import it for the type checker alone, as typing costs a few ms of every call."""

from __future__ import annotations

from typing import TypedDict


class LastCall(TypedDict):
    prompt: int
    usage: dict[str, int]


class Rebuild(TypedDict):
    cause: str
    detail: str


class LiveSummary(TypedDict, total=False):
    """What the status line shows, precomputed (live/session_state.py `summary` writes it). Every key is
    read with care: a summary written by an older version, or damaged, may lack any of them."""

    method: int
    tokenizer: str
    offset: int  # bytes of the transcript read
    mtime_ns: int | None  # of the transcript as read
    transcript: str
    updated: float
    api_calls: int
    exploration_share_of_context: float | None
    exploration_share_of_prompt: float | None
    recorded_over_billed: float | None
    unknown_because: str | None  # why the shares are unknown (the records cannot explain the bill), else None
    compactions: int
    html: str
    usage: dict[str, int]
    weighted: float
    last: LastCall | None  # with the ledger's economics (measure/economics.py Watch) only
    # the last call's context by ledger category (measure/ledger.py CATEGORIES, "overhead" included), in the
    # tokenizer's counts; None when the ledger's state predates it (until the next call)
    last_context: dict[str, int] | None
    rebuilds: int
    last_rebuild: Rebuild | None
    rebuild_now: bool
    nudge: dict | None
