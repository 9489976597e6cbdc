"""Hermes-Agent: read state.db (read-only, every schema from 6 on) and turn each session into a ledger.

One row of the `sessions` table is one session. Its messages are read in `id` order (Hermes's own order:
clocks regress and compaction copies keep old timestamps), columns are found by name with PRAGMA
table_info because upgraded databases hold them in another order than fresh ones, and a column a version
lacks takes Hermes's own default (`active` 1, `compacted` 0).

Hermes bills per session, so every API call (assistant row) gets an even share of the session's prompt
as its bill, and whatever the bill exceeds the recorded context by is overhead spread over the calls (spec,
pass 2). No call is capped: Hermes drops messages only by compaction, which the summary rows show, and a
growing session's late calls carry more than the mean, so a mean as cap would drop messages Hermes still
sent. Where the recorded context exceeds the bill (another tokenizer, a bill Hermes lost), the
calibration (recorded / billed) says so, above 100%, rather than a cap hiding it. Rows with compacted = 1
or active = 0 stay present until the next summary row drops them.

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
from datetime import datetime
from pathlib import Path

from xshare.agents.common import same_file
from xshare.agents.common.replay import number, parse_json
from xshare.agents.common.sqlite import LOCKED, Unreadable, is_locked, open_database, table_columns
from xshare.agents.hermes.as_sent import is_summary, message_text, sent_text, tool_calls
from xshare.agents.hermes.review import background_reviews
from xshare.agents.hermes.usage import add_unrecorded, read_auxiliary
from xshare.measure.classify import classify_tool
from xshare.measure.ledger import SPREAD, Ledger, session_row
from xshare.measure.plausible import session_counts
from xshare.measure.timestamps import epoch_seconds, refused, stamp
from xshare.printing import safe_label
from xshare.state.paths import home as user_home

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing (the live paths read here); checkers see True
if TYPE_CHECKING:
    from xshare.agents.common.counting import TokenCounter
    from xshare.measure.row import SessionRow

AGENT = "hermes"
# a person at the keyboard: the classic CLI, the TUI (`hermes chat --tui`), the desktop app, chat platforms
INTERACTIVE = frozenset({"cli", "tui", "desktop", "local", "telegram"})
AUTOMATED = frozenset({"cron", "oneshot", "a2a", "api_server"})
SUBAGENT, BENCHMARK = "subagent", "tool"
LOCK_RETRIES = 2  # with sqlite.BUSY_TIMEOUT_MS: about 2 s in all before a locked database is reported
NO_CAP = sys.maxsize  # no call of a Hermes session is capped (the module docstring says why)
NO_CALLS = "Hermes sessions billed for prompt tokens but with no assistant row (billed as overhead)"
IMPOSSIBLE = "Hermes sessions with impossible token counts (counted without their bill, no cap applied)"

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
    """$HERMES_HOME/state.db if set, else ~/.hermes/state.db, plus every profile's; existing files only,
    each once ($HERMES_HOME may be ~/.hermes or one of its profiles by another path)."""
    user, explicit = user_home(), os.environ.get("HERMES_HOME")
    home = user / ".hermes" if user else None  # no home folder (cron, docker --user): nothing there to find
    found = [Path(explicit).expanduser() / "state.db"] if explicit else [home / "state.db"] if home else []
    found += sorted((home / "profiles").glob("*/state.db")) if home else []
    return same_file.unique_files(found)


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


def iso(timestamp: object) -> str | None:
    """Epoch seconds (or ISO text, in a TEXT column) as the ISO-8601 UTC text Claude Code rows use, so rows
    of both agents sort as text; None when unreadable or implausible (xshare.measure.timestamps)."""
    return stamp(timestamp, millis=False)


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
    clocks = [epoch_seconds(row["timestamp"]) for row in rows]  # compared as times: a column may mix types
    signatures = [signature(row) for row in rows]
    first_seen: dict[tuple, int] = {}
    for index, item in enumerate(signatures):
        first_seen.setdefault(item, index)

    def repeats(index: int) -> bool:
        return first_seen[signatures[index]] < index or (parent is not None and signatures[index] in parent)

    rotation_child = parent is not None

    for index, at in enumerate(summaries):
        clock = clocks[at]
        if rotation_child and index == 0:
            copies.update(range(at))  # a continuation session starts with the compressed list
        else:
            index = at - 1  # the protected head, inserted just before the summary
            while index >= 0 and index not in copies and not rows[index]["summary"] and (
                    clocks[index] == clock or repeats(index)):
                copies.add(index)
                index -= 1
        index = at + 1
        while index < len(rows) and not rows[index]["summary"]:
            same_clock = clock is not None and (other := clocks[index]) is not None and other <= clock
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
    counter: TokenCounter,
    problems: Counter,
    parent_rows: set[tuple] | None = None,
    ledgers: dict | None = None,
) -> SessionRow:
    """One session's row from its `sessions` row and its messages (dicts, in id order). `parent_rows`:
    the signatures of the parent's rows when this session continues one by rotation. With `ledgers`
    (a dict), the ledger keeps its per-call log and is left there under the session id (the HTML page)."""
    reader = _SessionReader(session, rows, counter.count, problems, detail=ledgers is not None)
    if ledgers is not None:
        ledgers[str(session["id"])] = reader.ledger
    reader.replay(parent_rows)
    parent = session.get("parent_session_id")
    row = session_row(
        reader.ledger,
        session_id=str(session["id"]),
        agent=AGENT,
        source=source_label(session.get("source"), session.get("model_config")),
        tokenizer=counter.name,
        parent=parent if isinstance(parent, str) and parent else None,
    )
    row["unrecorded_reviews"] = reader.reviews  # estimated, not counted: Hermes records them nowhere
    return row


class _SessionReader:
    """Replays one session's messages through a ledger, in Hermes's own order."""

    def __init__(self, session: dict, rows: list[dict], count: Callable[[str], int], problems: Counter,
                 detail: bool) -> None:
        self.session, self.rows, self.count, self.problems = session, rows, count, problems
        self.ledger = Ledger(overhead_mode=SPREAD, detail=detail)
        self.calls_by_id: dict[str, tuple[str, str]] = {}
        self.unanswered: list[tuple[str, str]] = []  # fallback-shape calls (no ids) still waiting for results
        self.copy = False  # the row being replayed is a compaction copy
        self.reviews = 0
        self.model = value if isinstance(value := session.get("model"), str) else None

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
        self.reviews = background_reviews(rows, set(calls), copies)
        for index, row in enumerate(rows):
            self.copy = index in copies
            stamp = self._seen(row["timestamp"])
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
                for ids, name, arguments, _ in row["calls"]:
                    for call_id in ids:
                        self.calls_by_id[call_id] = (name, arguments)

    def _bill(self, calls: int) -> None:
        """Hermes bills per session: every call gets an even share of it as its bill (never as a cap)."""
        session = self.session
        columns = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
        counts = session_counts((session.get(column) for column in columns),
                                max(calls, number(session.get("api_call_count"))))
        if counts is None:  # one impossible column makes the whole bill unknown
            self.problems[IMPOSSIBLE] += 1
        fresh, read, write, output = counts or (0, 0, 0, 0)
        self.prompt = fresh + read + write
        self.bills = _split(self.prompt, calls) if calls else []
        self.usage_parts = {field: _split(value, calls) if calls else [] for field, value in
                            (("input", fresh), ("cache_read", read), ("cache_write_5m", write), ("output", output))}
        self.call_number = 0
        if calls and not self.prompt and counts is not None:
            self.problems["Hermes sessions with API calls but no token counts (share of the bill unknown)"] += 1
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
                self.ledger.call(bill, cap=NO_CAP, usage=usage, model=self.model, time=stamp)
                self.call_number += 1
            self._add("conversation", _seen_text(row), compactable)
            self.unanswered = [(name, arguments) for ids, name, arguments, _ in row["calls"] if not ids]
            for ids, name, arguments, sent in row["calls"]:
                # the stored arguments decide the category; what Hermes re-serialised is what was sent
                self._add(classify_tool(name, arguments), f"{name} {sent}".strip(), compactable,
                          ids[0] if ids else None)
        elif role == "tool":
            self._tool_result(row, compactable)
        elif role == "user":
            api = message_text(row["api_content"]) if row["api_content"] is not None else ""
            if api and row["text"] and api.startswith(row["text"]) and len(api) > len(row["text"]):
                # the block the plugin appended; the whole is sent stripped, so each end loses its blanks
                self._add("conversation", row["text"].lstrip(), compactable)
                self._add("neuralmind", api[len(row["text"]):].rstrip(), compactable)
            else:
                self._add("conversation", sent_text(row["api_content"] if api else row["content"]), compactable)
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

    def _seen(self, value: object) -> str | None:
        """A time the session wrote: its activity if plausible; one present but refused is counted."""
        found = self.ledger.seen_time(value, millis=False) if value is not None else None
        if found is None and value is not None:
            self.problems[refused("Hermes")] += 1
        return found

    def _times(self) -> None:
        session, ledger = self.session, self.ledger
        for column in ("ended_at", "last_activity_at"):
            self._seen(session.get(column))
        started = iso(session.get("started_at"))
        if started is None and session.get("started_at") is not None:
            self.problems[refused("Hermes")] += 1
        if started:
            # the session's own start places it in a window; copies may carry their originals' older times
            ledger.first_seen = started
            if ledger.last_seen is None or ledger.last_seen < started:
                ledger.last_seen = started


def _seen_text(row: dict) -> str:
    """api_content (the exact text sent) when the row has one, else its content; as Hermes sends it."""
    return sent_text(row["api_content"] if row["api_content"] is not None else row["content"])


# --- a whole database ---------------------------------------------------------------------------


def _read(
    connection: sqlite3.Connection,
    counter: TokenCounter,
    problems: Counter,
    since: datetime | None,
    only: str | None,
    ledgers: dict | None = None,
) -> list[SessionRow]:
    session_columns = table_columns(connection, "sessions")
    message_columns = table_columns(connection, "messages")
    if not {"id", "source"} <= session_columns or not {"session_id", "role"} <= message_columns:
        raise Unreadable("Hermes databases without Hermes's sessions and messages tables, skipped")
    connection.execute("BEGIN")  # one snapshot for every query below
    try:
        sessions = [
            dict(zip(_SESSION_COLUMNS, values, strict=True))
            for values in connection.execute(f"SELECT {_select(session_columns, _SESSION_COLUMNS)} FROM sessions")
        ]
        end_reasons = {session["id"]: session["end_reason"] for session in sessions}
        auxiliary = read_auxiliary(connection, problems)
        oldest = since.timestamp() - 86400 if since else None
        query = (
            f"SELECT {_select(message_columns, _MESSAGE_COLUMNS)} FROM messages WHERE session_id = ? ORDER BY id"
        )
        found: list[SessionRow] = []
        for session in sessions:
            if only is not None and session["id"] != only:
                continue
            started = session["started_at"]
            if oldest is not None and isinstance(started, (int, float)) and started < oldest and iso(started):
                continue  # started before the window: never placed in it (an implausible start is not its start)
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
            measured = measure_session(session, rows, counter, problems, parent_rows, ledgers)
            found.append(add_unrecorded(measured, auxiliary.get(str(session["id"]))))
    finally:
        with contextlib.suppress(sqlite3.Error):  # ends a read; never hides the error that ended it early
            connection.execute("COMMIT")
    return found


def read_database(
    path: Path,
    counter: TokenCounter,
    problems: Counter,
    since: datetime | None = None,
    only: str | None = None,
    ledgers: dict | None = None,
) -> list[SessionRow]:
    """Every session's row in one database (with `ledgers`, their detailed ledgers too); problems are
    counted, never raised.

    The first read takes the cheapest way in; when a writer moved the file under it (or it failed), the
    next reads are `careful` (mode=ro wherever the sidecars exist). A lock is waited out a few times."""
    rows: list[SessionRow] = []
    for attempt in range(LOCK_RETRIES + 1):
        last = attempt == LOCK_RETRIES
        try:
            with open_database(path, problems, careful=attempt > 0) as (connection, unchanged):
                rows = _read(connection, counter, problems, since, only, ledgers)
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
    counter: TokenCounter,
    since: datetime | None = None,
) -> tuple[list[SessionRow], Counter]:
    """Rows of every session in these databases (even those with no call) and the problems met."""
    problems: Counter = Counter()
    rows: list[SessionRow] = []
    for path in databases:
        path = Path(path).expanduser()
        if not path.is_file():
            problems[f"Hermes database {path} not found"] += 1
            continue
        rows += read_database(path, counter, problems, since=since)
    return rows, problems
