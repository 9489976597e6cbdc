"""A session's row as metric points: counters a team can sum across sessions and machines, never a ratio.

The points are plain tuples, built without OpenTelemetry (the exporter, export/otlp.py, loads it): the figures
are the row's own (prompt tokens billed and modelled, exploration and re-sent read tokens, API calls), so the
exported counters equal the report's and the rows file's. Attributes are ids, names and kinds only: no text,
no path. `session.id` is the value Claude Code puts on its own metrics, so a dashboard can join the two: a
subagent's or an internal helper's row gives its parent's, and its own id as `thread.id`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from xshare.measure.row import RUN_INSIDE
from xshare.printing import printable

PROMPT = "xshare.prompt.tokens"
EXPLORATION = "xshare.exploration.tokens"
REREAD = "xshare.reread.tokens"
CALLS = "xshare.api.calls"
# name -> (unit, description); every one is a monotonic sum (an OTel counter)
METRICS = {
    PROMPT: ("tokens", "prompt tokens of a session's API calls: billed (basis=bill) or as xshare modelled them "
                       "(basis=context)"),
    EXPLORATION: ("tokens", "prompt tokens that were code the agent read or searched, counted on every call that "
                            "carried them (only where the session's share is known)"),
    REREAD: ("tokens", "files the agent re-sent on its own after a compaction, counted as sent (only where the "
                       "session's share is known)"),
    CALLS: ("{call}", "a session's API calls"),
}
BASES = ("bill", "context")
LONGEST = 256  # characters of an attribute value: a model name or id, never a text


class Point(NamedTuple):
    metric: str
    attributes: Mapping[str, str]
    value: int


def _text(value: object) -> str:
    """An attribute's value from the data: printable, bounded (a record may hold anything)."""
    return printable("" if value is None else value)[:LONGEST]


def session_attributes(row: Mapping) -> dict[str, str]:
    """What every point of a row carries."""
    inside = row.get("source") in RUN_INSIDE and row.get("parent")
    return {"session.id": _text(row["parent"] if inside else row["id"]), "thread.id": _text(row["id"]),
            "agent": _text(row.get("agent")), "source": _text(row.get("source")),
            "model": _text(row.get("model") or "unknown"), "tokenizer": _text(row.get("tokenizer"))}


def share_known(row: Mapping) -> bool:
    """The row's exploration share is a figure (not unknown: a bill short of the records, no usage)."""
    return row.get("exploration_share_of_context") is not None and not row.get("bill_short")


def row_points(row: Mapping) -> list[Point]:
    """One row's points: prompt tokens on both bases and its calls always; exploration and re-sent reads on
    both bases where its share is known (the same tokens over either basis: filter by basis, never sum both)."""
    base = session_attributes(row)
    points = [Point(CALLS, base, int(row.get("api_calls") or 0))]
    prompts = {"bill": row.get("prompt_tokens_billed"), "context": row.get("context_tokens")}
    tokens = row.get("billed_tokens") or {}
    for basis in BASES:
        attributes = {**base, "basis": basis}
        points.append(Point(PROMPT, attributes, int(prompts[basis] or 0)))
        if share_known(row):
            points.append(Point(EXPLORATION, attributes, int(tokens.get("exploration") or 0)))
            points.append(Point(REREAD, attributes, int(tokens.get("reread") or 0)))
    return points


def points_of(rows: Iterable[Mapping]) -> list[Point]:
    """Every row's points; a session given twice (a rows file and a fresh measure) counts once, the last."""
    by_thread = {(row.get("agent"), row["id"]): row for row in rows}
    return [point for row in by_thread.values() for point in row_points(row)]
