"""What the Codex, Gemini, OpenCode and OpenClaw readers share: replaying a session through the ledger.

These agents record the provider's usage per API call, so a call's bill is exact and caps what it may
carry, and its overhead (system prompt, tool schemas: never recorded) is fixed at the thread's first
call, as for Claude Code. The model's own output of a call (its text, reasoning summaries, tool calls)
is held back until that call is counted, then becomes present for the next one; a tool's result is
present from the call after it. A call whose bill is zero (a failed request) is no call.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from xshare.agents.common.counting import TokenCounter
from xshare.measure.ledger import FIRST_CALL, Ledger, session_row
from xshare.measure.plausible import call_counts
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import refused
from xshare.measure.tool_tables import ToolTable, explain_tool
from xshare.state.store import dumps, loads

_SETTLED_NS = 2_000_000_000  # a folder changed this recently may change again within its clock's tick
# (folder, key) -> (the folder's mtime, its names grouped): one listing a folder for all its files' reads
_GROUPED: dict[tuple[str, Callable], tuple[int, dict[str, tuple[str, ...]]]] = {}

USAGE_UNKNOWN = "usage_unknown"  # row field: why the agent's records hold no token usage
IMPOSSIBLE_USAGE = "calls with impossible token counts (not counted, no cap applied)"


def number(value: object) -> int:
    """A positive number as an int, anything else 0 (never raises: Infinity and NaN are 0 too)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 and math.isfinite(value):
        return int(value)
    return 0


def parse_json(text: object) -> object:
    if isinstance(text, (dict, list)):
        return text
    if not isinstance(text, (str, bytes)):
        return None
    try:
        return loads(text)
    except ValueError:
        return None


def as_text(value: object) -> str:
    """What the model sees of a value: text as it is, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return dumps(value).decode("utf-8", "replace")
    except TypeError:
        return str(value)


def content_text(content: object) -> str:
    """The text of a message's content: a string, or a list of parts with text (images are not text)."""
    if isinstance(content, str):
        return content
    found = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, str):
            found.append(part)
        elif isinstance(part, dict):
            for key in ("text", "thinking"):
                if isinstance(part.get(key), str):
                    found.append(part[key])
                    break
    return "\n".join(found)


def json_objects(data: bytes, problems: Counter, what: str) -> Iterator[dict]:
    """A JSON Lines file's objects, in order. A line that is not JSON, or JSON of another shape (an array, a
    number: no agent writes one), is skipped and counted under `what` ("Codex rollout") once all are read."""
    not_json = not_object = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = loads(line)
        except ValueError:
            not_json += 1
            continue
        if isinstance(record, dict):
            yield record
        else:
            not_object += 1
    if not_json:
        problems[f"{what} lines that are not JSON (skipped)"] += not_json
    if not_object:
        problems[f"{what} lines that are not JSON objects (skipped)"] += not_object


def holds_no_record(what: str, data: bytes, problems: Counter) -> None:
    """A file that holds none of its agent's records (not JSON, or JSON of another shape) is no session, not
    one with no calls: counted for stderr under `what`, unless it is empty (created, not yet written)."""
    if data.strip():
        problems[f"{what} files that hold no record (not JSON, or JSON of another shape; not read)"] += 1


def names_by(folder: Path, key: Callable[[str], str | None]) -> dict[str, tuple[str, ...]]:
    """The names in a folder grouped by `key` (a name it gives None is left out), each group sorted; none when
    the folder cannot be listed. Kept until the folder changes, so reading each of thousands of files beside
    each other lists their folder once, not once a file."""
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return {}
    kept = _GROUPED.get((str(folder), key))
    if kept is not None and kept[0] == stamp:
        return kept[1]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    grouped: dict[str, list[str]] = {}
    for name in names:
        found = key(name)
        if found is not None:
            grouped.setdefault(found, []).append(name)
    result = {found: tuple(members) for found, members in grouped.items()}
    if time.time_ns() - stamp > _SETTLED_NS:
        _GROUPED[(str(folder), key)] = (stamp, result)
    return result


class Replay:
    """One session's messages, in order, through a ledger with per-call bills."""

    def __init__(self, table: ToolTable, counter: TokenCounter, problems: Counter, detail: bool = False) -> None:
        self.agent, self.problems = table.agent, problems
        self.count, self.tokenizer = counter.count, counter.name
        self.table = table  # the agent's tools (agents/<name>/tools.py)
        self.ledger = Ledger(overhead_mode=FIRST_CALL, detail=detail)
        self.pending: list[tuple[str, str, str | None, str | None]] = []
        self.tools: dict[str, tuple[str, object]] = {}  # call id -> (tool name, arguments)
        self.model: str | None = None
        self.thread = "main"  # the context the calls carry (start_over begins another)
        self.conversations = 1

    def seen(self, timestamp: object) -> str | None:
        """A record's time: the session's activity if plausible; a time present but refused is counted."""
        if timestamp is None:
            return None
        found = self.ledger.seen_time(timestamp)
        if found is None:
            self.problems[refused(self.agent)] += 1
        return found

    def add(self, category: str, text: str, key: str | None = None, label: str | None = None) -> None:
        """Input to the model (a prompt, a tool result): present from the next call on."""
        self.flush()
        self._add(category, text, key, label)

    def output(self, category: str, text: str, key: str | None = None, label: str | None = None) -> None:
        """The model's own output: present once the call that produced it is counted."""
        self.pending.append((category, text, key, label))

    def tool_call(self, call_id: object, name: object, arguments: object, key: str | None = None) -> str:
        """A tool call the model made (output); returns its category, which its result takes too."""
        name = name if isinstance(name, str) else ""
        if isinstance(call_id, str) and call_id:
            self.tools[call_id] = (name, arguments)
        category = explain_tool(self.table, name, arguments).category
        self.output(category, f"{name} {as_text(arguments)}".strip(), key)
        return category

    def tool_result(self, call_id: object, text: str, name: object = None, key: str | None = None) -> None:
        found = self.tools.get(call_id) if isinstance(call_id, str) else None
        tool = found[0] if found else name if isinstance(name, str) else ""
        if found is None:
            self.problems[f"{self.agent} tool results whose call was not found (judged by name alone)"] += 1
        category = explain_tool(self.table, tool, found[1] if found else None).category
        self.add(category, text, key, tool if self.ledger.detail else None)

    def usage(self, values: Iterable[object], prompt_parts: int) -> list[int] | None:
        """A call's usage fields as counts (xshare/measure/plausible.py), or None, counted as a problem, when the
        agent recorded an impossible one: that call is then no call, like a failed request."""
        counts = call_counts(values, prompt_parts)
        if counts is None:
            self.problems[f"{self.agent} {IMPOSSIBLE_USAGE}"] += 1
        return counts

    def call(self, billed: int, usage: dict[str, int], time: str | None = None) -> bool:
        """One API call billed `billed` prompt tokens; what the model produced before it joins after it."""
        if billed <= 0:
            self.flush()
            return False
        self.ledger.call(billed, usage=usage, thread=self.thread, cap=billed, model=self.model, time=time)
        self.flush()
        return True

    def compact(self, summary: str = "") -> None:
        self.flush()
        self.ledger.compact(self.thread)
        self._add("conversation", summary)

    def start_over(self) -> None:
        """A new conversation under the session's id (Gemini CLI's /clear before it gave a new id): nothing said
        before it is sent again, and its first call says its overhead anew, as a new thread's does. Not a
        compaction: nothing was summarised."""
        self.flush()
        self.conversations += 1
        self.thread = f"conversation {self.conversations}"

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        for category, text, key, label in pending:
            self._add(category, text, key, label)

    def _add(self, category: str, text: str, key: str | None = None, label: str | None = None) -> None:
        if text:
            self.ledger.add(category, self.count(text), key=key, thread=self.thread, label=label)

    def row(self, session_id: str, source: str, parent: str | None = None,
            usage_unknown: str | None = None) -> SessionRow:
        self.flush()
        row = session_row(self.ledger, session_id=session_id, agent=self.agent, source=source,
                          tokenizer=self.tokenizer, parent=parent)
        if usage_unknown:
            row["usage_unknown"] = usage_unknown  # USAGE_UNKNOWN
        return row
