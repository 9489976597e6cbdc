"""Hermes-Agent: read state.db (read-only, every schema from 6 on) and turn each session into a ledger.

One row of the `sessions` table is one session. Its messages are read in `id` order (Hermes's own order:
clocks regress and compaction copies keep old timestamps), columns are found by name with PRAGMA
table_info because upgraded databases hold them in another order than fresh ones, and a column a version
lacks takes Hermes's own default (`active` 1, `compacted` 0).

Hermes bills per session, so every API call (assistant row) gets the session's mean prompt as its bill and
its cap, and whatever the bill exceeds the recorded context by is overhead spread over the calls (spec,
pass 2). Rows with compacted = 1 or active = 0 stay present until the next summary row drops them.

Compaction copies. Both compaction layouts write the compressed list as new rows: a protected head, the
summary, then the protected tail (in place: into the same session after archiving the old rows; rotation:
as the first rows of a child session whose parent ended with end_reason 'compression'). The copies are
context, not calls: Hermes's own `api_call_count` does not count them (the fixture generator's in-place
session has 9 assistant rows for 8 calls). A row is taken as a copy when it sits in the block around a
summary and either repeats an earlier row or carries a timestamp no later than the summary's (rows
inserted without one share the insert's clock, the summary's), and, where `api_call_count` says there are
still more assistant rows than calls, the first assistant rows after a summary are copies too.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from xshare.classify import classify_tool
from xshare.ledger import SPREAD, Ledger, session_row
from xshare.paths import home as user_home
from xshare.printable import safe_label
from xshare.sources.agent_common import number, parse_json
from xshare.sources.hermes_db import Unreadable, is_locked, open_database
from xshare.sources.hermes_usage import add_unrecorded, read_auxiliary
from xshare.store import dumps

AGENT = "hermes"
# a person at the keyboard: the classic CLI, the TUI (`hermes chat --tui`), the desktop app, chat platforms
INTERACTIVE = frozenset({"cli", "tui", "desktop", "local", "telegram"})
AUTOMATED = frozenset({"cron", "oneshot", "a2a", "api_server"})
SUBAGENT, BENCHMARK = "subagent", "tool"
JSON_PREFIX = "\x00json:"
# every current and frozen summary prefix starts with one of these (agent/context_compressor.py)
SUMMARY_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
MERGED_SUMMARY_DELIMITER = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"
LOCK_RETRIES = 2  # with hermes_db.BUSY_TIMEOUT_MS: about 2 s in all before a locked database is reported
LOCKED = "is locked by another program"  # the problem's words, which `xshare html` looks for
NO_CAP = sys.maxsize  # a session without token counts has no bill to cap its context by
NO_CALLS = "Hermes sessions billed for prompt tokens but with no assistant row (billed as overhead)"

_SESSION_COLUMNS = (
    "id", "source", "model", "model_config", "parent_session_id", "started_at", "ended_at", "end_reason",
    "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "api_call_count",
    "last_activity_at",
)
_MESSAGE_COLUMNS = (
    "id", "role", "content", "api_content", "tool_call_id", "tool_calls", "tool_name", "timestamp",
    "active", "compacted", "_compressed_summary",
)
_DEFAULTS = {"active": 1, "compacted": 0}


# --- where the databases are --------------------------------------------------------------------


def default_databases() -> list[Path]:
    """$HERMES_HOME/state.db if set, else ~/.hermes/state.db, plus every profile's; existing files only."""
    user, explicit = user_home(), os.environ.get("HERMES_HOME")
    home = user / ".hermes" if user else None  # no home folder (cron, docker --user): nothing there to find
    found = [Path(explicit).expanduser() / "state.db"] if explicit else [home / "state.db"] if home else []
    found += sorted((home / "profiles").glob("*/state.db")) if home else []
    unique: list[Path] = []
    for path in found:
        if path.is_file() and path not in unique:
            unique.append(path)
    return unique


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def _select(available: set[str], wanted: tuple[str, ...]) -> str:
    """Every wanted column by name; a missing one as Hermes's default, or NULL."""
    parts = []
    for name in wanted:
        if name in available:
            parts.append(f'"{name}"')
        else:
            default = _DEFAULTS.get(name)
            parts.append(f'{"NULL" if default is None else default} AS "{name}"')
    return ", ".join(parts)


# --- message text and tool calls ----------------------------------------------------------------------


def message_text(value: object) -> str:
    """What the model saw of a content cell: text as stored, or the text parts of a multimodal list."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = str(value)
    if not text.startswith(JSON_PREFIX):
        return text
    parts = parse_json(text[len(JSON_PREFIX):])
    if isinstance(parts, str):
        return parts
    found = []
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, str):
            found.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            found.append(part["text"])  # images and audio are not text
    return "\n".join(found)


def tool_calls(value: object) -> list[tuple[list[str], str, str]]:
    """(ids, name, arguments) of an assistant row's calls, in either stored shape:
    [{"id", "call_id", "function": {"name", "arguments"}}] (live) or [{"name", "arguments"}] (fallback)."""
    parsed = parse_json(value)
    if isinstance(parsed, dict):
        parsed = [parsed]
    calls = []
    for call in parsed if isinstance(parsed, list) else ():
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        name = function.get("name") if isinstance(function.get("name"), str) else ""
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = dumps(arguments).decode()
        ids = [call[key] for key in ("id", "call_id") if isinstance(call.get(key), str) and call[key]]
        calls.append((ids, name, arguments or ""))
    return calls


def is_summary(text: str) -> bool:
    """Hermes's own test (_is_context_summary_content), for databases without `_compressed_summary`."""
    text = text.lstrip()
    if MERGED_SUMMARY_DELIMITER in text:
        text = text.split(MERGED_SUMMARY_DELIMITER, 1)[1].lstrip()
    return text.startswith(SUMMARY_PREFIXES)


def iso(timestamp: object) -> str | None:
    """Epoch seconds as the ISO-8601 UTC text Claude Code rows use, so rows of both agents sort as text."""
    if isinstance(timestamp, str):
        try:
            timestamp = float(timestamp)
        except ValueError:
            try:  # a text column written as ISO-8601
                moment = datetime.fromisoformat(timestamp.strip().replace("Z", "+00:00"))
            except ValueError:
                return None
            timestamp = (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    if not isinstance(timestamp, (int, float)) or timestamp != timestamp or timestamp <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(round(float(timestamp), 3), timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def source_label(source: object, model_config: object) -> str:
    """The spec's group, or the stored value itself when the spec names no group for it and it is a
    plain word (printable.safe_label: a path or escape sequences become `other`)."""
    label = source if isinstance(source, str) and source else "unknown"
    config = parse_json(model_config)
    if label == SUBAGENT or (isinstance(config, dict) and config.get("_delegate_from") is not None):
        return "subagent"
    if label in INTERACTIVE:
        return "interactive"
    if label in AUTOMATED:
        return "automated"
    if label == BENCHMARK:
        return "benchmark"
    return safe_label(label)


def _split(total: int, parts: int) -> list[int]:
    """`total` over `parts` calls as evenly as integers allow; the sum is exact."""
    base, extra = divmod(total, parts)
    return [base + (1 if index < extra else 0) for index in range(parts)]


# --- one session ------------------------------------------------------------------------------------


def signature(row: dict) -> tuple:
    """What a compaction copy shares with its original (ids and timestamps are new)."""
    return row["role"], row["content"], row["tool_calls"], row["tool_call_id"]


def _copies(rows: list[dict], summaries: list[int], calls_recorded: int | None,
            parent: set[tuple] | None) -> set[int]:
    """Indexes of rows a compaction wrote as copies (see the module docstring). `parent` holds the
    signatures of a rotation parent's rows: the child starts with copies of them."""
    copies: set[int] = set()
    signatures = [signature(row) for row in rows]
    first_seen: dict[tuple, int] = {}
    for index, item in enumerate(signatures):
        first_seen.setdefault(item, index)

    def repeats(index: int) -> bool:
        return first_seen[signatures[index]] < index or (parent is not None and signatures[index] in parent)

    rotation_child = parent is not None

    for index, at in enumerate(summaries):
        stamp = rows[at]["timestamp"]
        if rotation_child and index == 0:
            copies.update(range(at))  # a continuation session starts with the compressed list
        else:
            index = at - 1  # the protected head, inserted just before the summary
            while index >= 0 and index not in copies and not rows[index]["summary"] and (
                    rows[index]["timestamp"] == stamp or repeats(index)):
                copies.add(index)
                index -= 1
        index = at + 1
        while index < len(rows) and not rows[index]["summary"]:
            row_stamp = rows[index]["timestamp"]
            same_clock = stamp is not None and row_stamp is not None and row_stamp <= stamp
            if not (same_clock or repeats(index)):
                break
            copies.add(index)
            index += 1
    assistants = [index for index, row in enumerate(rows) if row["role"] == "assistant" and index not in copies]
    excess = len(assistants) - calls_recorded if calls_recorded else 0
    for at in summaries:
        index = at + 1
        while excess > 0 and index < len(rows) and not rows[index]["summary"]:
            if rows[index]["role"] == "user" and index not in copies:
                break  # a new turn: everything after it was sent after the compaction
            if rows[index]["role"] == "assistant" and index not in copies:
                copies.add(index)
                excess -= 1
            index += 1
    return copies


def measure_session(
    session: dict,
    rows: list[dict],
    count: Callable[[str], int],
    tokenizer: str,
    problems: Counter,
    parent_rows: set[tuple] | None = None,
    ledgers: dict | None = None,
) -> dict:
    """One session's row from its `sessions` row and its messages (dicts, in id order). `parent_rows`:
    the signatures of the parent's rows when this session continues one by rotation. With `ledgers`
    (a dict), the ledger keeps its per-call log and is left there under the session id (the HTML page)."""
    reader = _SessionReader(session, rows, count, problems, detail=ledgers is not None)
    if ledgers is not None:
        ledgers[str(session["id"])] = reader.ledger
    reader.replay(parent_rows)
    parent = session.get("parent_session_id")
    return session_row(
        reader.ledger,
        session_id=str(session["id"]),
        agent=AGENT,
        source=source_label(session.get("source"), session.get("model_config")),
        tokenizer=tokenizer,
        parent=parent if isinstance(parent, str) and parent else None,
    )


class _SessionReader:
    """Replays one session's messages through a ledger, in Hermes's own order."""

    def __init__(self, session: dict, rows: list[dict], count: Callable[[str], int], problems: Counter,
                 detail: bool) -> None:
        self.session, self.rows, self.count, self.problems = session, rows, count, problems
        self.ledger = Ledger(overhead_mode=SPREAD, detail=detail)
        self.calls_by_id: dict[str, tuple[str, str]] = {}
        self.unanswered: list[tuple[str, str]] = []  # fallback-shape calls (no ids) still waiting for results
        self.copy = False  # the row being replayed is a compaction copy
        self.model = session.get("model") if isinstance(session.get("model"), str) else None

    def replay(self, parent_rows: set[tuple] | None) -> None:
        self._prepare()
        rows = self.rows
        summaries = [index for index, row in enumerate(rows) if row["summary"]]
        recorded = self.session.get("api_call_count")
        copies = _copies(rows, summaries, number(recorded) if recorded is not None else None,
                         parent_rows) if summaries else set()
        # a compaction drops what came before its block, so the head copies of that block survive it
        compact_at = set()
        for at in summaries:
            start = at
            while start - 1 in copies and not rows[start - 1]["summary"]:
                start -= 1
            compact_at.add(start)
        calls = [index for index, row in enumerate(rows) if row["role"] == "assistant" and index not in copies]
        self._bill(len(calls))
        for index, row in enumerate(rows):
            self.copy = index in copies
            stamp = iso(row["timestamp"])
            if stamp:
                self.ledger.seen_time(stamp)
            if index in compact_at:
                self.ledger.compact()
            self._row(row, stamp, calls=not self.copy)
        self._times()

    def _prepare(self) -> None:
        # The flag (schema 30) decides where it was written; a session with no flagged row was written
        # before the column existed (an upgraded database: the column arrives with DEFAULT 0), so its
        # text decides.
        flagged = any(row.get("_compressed_summary") for row in self.rows)
        for row in self.rows:
            row["text"] = message_text(row["content"])
            row["summary"] = bool(row.get("_compressed_summary")) if flagged else is_summary(row["text"])
            if row["role"] == "assistant":
                row["calls"] = tool_calls(row["tool_calls"])
                for ids, name, arguments in row["calls"]:
                    for call_id in ids:
                        self.calls_by_id[call_id] = (name, arguments)

    def _bill(self, calls: int) -> None:
        """Hermes bills per session: every call gets an even share of it, as its bill and as its cap."""
        session = self.session
        self.prompt = sum(number(session.get(name)) for name in ("input_tokens", "cache_read_tokens",
                                                                   "cache_write_tokens"))
        self.bills = _split(self.prompt, calls) if calls else []
        self.usage_parts = {
            field: _split(number(session.get(column)), calls) if calls else []
            for field, column in (("input", "input_tokens"), ("cache_read", "cache_read_tokens"),
                                  ("cache_write_5m", "cache_write_tokens"), ("output", "output_tokens"))
        }
        self.call_number = 0
        if calls and not self.prompt:
            self.problems["Hermes sessions with API calls but no token counts (no billing cap applied)"] += 1
        if self.prompt and not calls:
            # the bill is real even when its messages are gone: all of it is context nobody recorded
            self.problems[NO_CALLS] += 1
            self.ledger.prompt_billed = self.prompt

    def _add(self, category: str, text: str, compactable: bool, key: str | None = None,
             label: str | None = None) -> None:
        if text:
            tokens = self.count(text)
            self.ledger.add(category, tokens, key=key, compactable=compactable, label=label)
            if self.copy:
                self.ledger.first_time[category] -= tokens  # present again, but first seen in the original

    def _row(self, row: dict, stamp: str | None, calls: bool) -> None:
        compactable = row["compacted"] == 1 or row["active"] == 0
        role = row["role"]
        if row["summary"]:
            self._add("conversation", _seen_text(row), compactable)
        elif role == "assistant":
            if calls:
                at = self.call_number
                usage = {field: parts[at] for field, parts in self.usage_parts.items()}
                bill = self.bills[at]
                self.ledger.call(bill, cap=bill if self.prompt else NO_CAP, usage=usage, model=self.model, time=stamp)
                self.call_number += 1
            self._add("conversation", _seen_text(row), compactable)
            self.unanswered = [(name, arguments) for ids, name, arguments in row["calls"] if not ids]
            for ids, name, arguments in row["calls"]:
                self._add(classify_tool(name, arguments), f"{name} {arguments}".strip(), compactable,
                          ids[0] if ids else None)
        elif role == "tool":
            self._tool_result(row, compactable)
        elif role == "user":
            api = message_text(row["api_content"]) if row["api_content"] is not None else ""
            if api and row["text"] and api.startswith(row["text"]) and len(api) > len(row["text"]):
                self._add("conversation", row["text"], compactable)
                self._add("neuralmind", api[len(row["text"]):], compactable)  # the block the plugin appended
            else:
                self._add("conversation", api or row["text"], compactable)
        elif role == "system":
            self._add("injected", _seen_text(row), compactable)
        # other roles (session_meta, ...) are bookkeeping, never sent to the model

    def _tool_result(self, row: dict, compactable: bool) -> None:
        name = row["tool_name"] if isinstance(row["tool_name"], str) and row["tool_name"] else ""
        found = self.calls_by_id.get(row["tool_call_id"]) if isinstance(row["tool_call_id"], str) else None
        if found is None and self.unanswered and (not name or self.unanswered[0][0] == name):
            found = self.unanswered.pop(0)  # the fallback shape has no ids: results follow their calls in order
        if found is None and not name:
            self.problems["Hermes tool results whose call was not found (counted as other)"] += 1
        name = name or (found[0] if found else "")
        category = classify_tool(name, found[1] if found else None) if name else "other"
        self._add(category, _seen_text(row), compactable, row["tool_call_id"], name if self.ledger.detail else None)

    def _times(self) -> None:
        session, ledger = self.session, self.ledger
        for column in ("ended_at", "last_activity_at"):
            stamp = iso(session.get(column))
            if stamp:
                ledger.seen_time(stamp)
        started = iso(session.get("started_at"))
        if started:
            # the session's own start places it in a window; copies may carry their originals' older times
            ledger.first_seen = started
            if ledger.last_seen is None or ledger.last_seen < started:
                ledger.last_seen = started


def _seen_text(row: dict) -> str:
    """api_content (the exact text sent) when the row has one, else its content."""
    return message_text(row["api_content"]) if row["api_content"] is not None else row["text"]


# --- a whole database ---------------------------------------------------------------------------


def _read(
    connection: sqlite3.Connection,
    count: Callable[[str], int],
    tokenizer: str,
    problems: Counter,
    since: datetime | None,
    only: str | None,
    ledgers: dict | None = None,
) -> list[dict]:
    session_columns = _columns(connection, "sessions")
    message_columns = _columns(connection, "messages")
    if not {"id", "source"} <= session_columns or not {"session_id", "role"} <= message_columns:
        raise Unreadable("Hermes databases without Hermes's sessions and messages tables, skipped")
    connection.execute("BEGIN")  # one snapshot for every query below
    try:
        sessions = [
            dict(zip(_SESSION_COLUMNS, values, strict=True))
            for values in connection.execute(f"SELECT {_select(session_columns, _SESSION_COLUMNS)} FROM sessions")
        ]
        end_reasons = {session["id"]: session["end_reason"] for session in sessions}
        auxiliary = read_auxiliary(connection)
        oldest = since.timestamp() - 86400 if since else None
        query = (
            f"SELECT {_select(message_columns, _MESSAGE_COLUMNS)} FROM messages WHERE session_id = ? ORDER BY id"
        )
        found = []
        for session in sessions:
            if only is not None and session["id"] != only:
                continue
            started = session["started_at"]
            if oldest is not None and isinstance(started, (int, float)) and started < oldest:
                continue  # started before the window: never placed in it
            rows = [dict(zip(_MESSAGE_COLUMNS, values, strict=True)) for values in
                    connection.execute(query, (session["id"],))]
            for row in rows:
                row["active"] = 1 if row["active"] is None else row["active"]  # Hermes's own reading of NULL
                row["compacted"] = row["compacted"] or 0
            parent_rows = None
            if end_reasons.get(session["parent_session_id"]) == "compression":  # a rotation continuation
                parent_rows = {
                    signature(dict(zip(_MESSAGE_COLUMNS, values, strict=True)))
                    for values in connection.execute(query, (session["parent_session_id"],))
                }
            row = measure_session(session, rows, count, tokenizer, problems, parent_rows, ledgers)
            found.append(add_unrecorded(row, auxiliary.get(str(session["id"]))))
    finally:
        with contextlib.suppress(sqlite3.Error):  # ends a read; never hides the error that ended it early
            connection.execute("COMMIT")
    return found


def read_database(
    path: Path,
    count: Callable[[str], int],
    tokenizer: str,
    problems: Counter,
    since: datetime | None = None,
    only: str | None = None,
    ledgers: dict | None = None,
) -> list[dict]:
    """Every session's row in one database (with `ledgers`, their detailed ledgers too); problems are
    counted, never raised.

    The first read takes the cheapest way in; when a writer moved the file under it (or it failed), the
    next reads are `careful` (mode=ro wherever the sidecars exist). A lock is waited out a few times."""
    rows: list[dict] = []
    for attempt in range(LOCK_RETRIES + 1):
        last = attempt == LOCK_RETRIES
        try:
            with open_database(path, problems, careful=attempt > 0) as (connection, unchanged):
                rows = _read(connection, count, tokenizer, problems, since, only, ledgers)
                if unchanged() or last:
                    return rows
        except Unreadable as error:
            problems[str(error)] += 1
            return []
        except sqlite3.OperationalError as error:
            if is_locked(error):
                if last:
                    problems[f"Hermes database {path} {LOCKED}; skipped"] += 1
                    return []
                time.sleep(0.2 * (attempt + 1))
            elif attempt > 0:
                problems[f"Hermes database {path} could not be read ({error}); skipped"] += 1
                return []
        except sqlite3.DatabaseError as error:
            if attempt > 0:  # once more with care: a writer may have been checkpointing under the first read
                problems[f"Hermes database {path} is corrupt or not a database ({error}); skipped"] += 1
                return []
        except OSError as error:
            problems[f"Hermes database {path} could not be read ({error.strerror or error}); skipped"] += 1
            return []
    return rows


def measure_hermes(
    databases: list[Path],
    count: Callable[[str], int],
    tokenizer: str,
    since: datetime | None = None,
) -> tuple[list[dict], Counter]:
    """Rows of every session in these databases (even those with no call) and the problems met."""
    problems: Counter = Counter()
    rows: list[dict] = []
    for path in databases:
        path = Path(path).expanduser()
        if not path.is_file():
            problems[f"Hermes database {path} not found"] += 1
            continue
        rows += read_database(path, count, tokenizer, problems, since=since)
    return rows, problems
