"""OpenCode (sst/opencode): every session in one SQLite database, opencode.db, in OpenCode's data folder
($XDG_DATA_HOME/opencode, default ~/.local/share/opencode; other release channels: opencode-<channel>.db).
Checked against the corpus's database (1.17.x) and the real OpenCode 1.18.33 run offline
(tests/agents/opencode/test_realhost.py).

What is recorded. Tables `session` (id, parent_id: a subagent's child session, times), `message` (one row
per message, its fields as JSON in `data`) and `part` (the message's pieces, JSON in `data`: `text`,
`reasoning`, `step-start`, `step-finish`, `tool`, `compaction`, ...). Only these three are read, read-only
(the database also holds accounts and credentials: never touched). A session with a parent is
`opencode/subagent` (the `task` tool's child), the others `opencode/interactive`.

Usage. One API call = one `step-finish` part (an assistant message can hold several steps; the message's
own `tokens` are its last step's, so they are not used). Its `tokens` are `{input, output, reasoning,
cache: {read, write}}`, and `input` excludes both cache reads and cache writes: OpenCode's getUsage()
(packages/opencode/src/session/session.ts; session/index.ts before) stores `input = inputTokens -
cacheRead - cacheWrite` since AI SDK v6 made inputTokens include cached tokens for every provider (and,
before it, subtracted them for every provider but Anthropic and Bedrock, whose inputTokens already
excluded them). So prompt billed = input + cache.read + cache.write; cache write is counted as 5-minute
writes (OpenCode does not say which); output = output + reasoning.

Presence and compaction. A step's reasoning, text and tool calls are its call's output; its tool results
(`state.output`, or `state.error`) are present from the next step. A `compaction` part starts a
compaction: the summary message that follows (`summary: true`) is billed on the whole history, then
everything before it is dropped and the summary stays. Tool outputs OpenCode prunes from old turns are left
to the billing cap (each step's bill), which drops the oldest context first.

Title requests. OpenCode names a new top-level session with one more request (no tools, about 600 prompt
tokens: SessionPrompt.ensureTitle, on the first prompt of a session with no parent and the default title
"New session - <time>"). The provider bills it; OpenCode records its usage nowhere (not in the steps, nor
in the session's totals). So it is not counted: a session that was given a title that way says so in its
`unseen_calls` ({"opencode_title": 1}, agents/common/unseen.py), and the report names them.

Unknown. OpenCode before 1.2 kept JSON files under storage/ instead: they are not read (said on stderr). A
part type or message role this reader does not know is counted on stderr (the billing cap still bounds
what each step carried).
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path

from xshare.agents.common import same_file, unseen
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import Replay, as_text, parse_json
from xshare.agents.common.sqlite import Unreadable, read_with_retries, table_columns
from xshare.agents.opencode.tools import TOOLS
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import stamp
from xshare.state.paths import home as user_home

AGENT = "opencode"
NAME = "OpenCode"
FLAG = "opencode_db"
KIND = "database"
TITLE = "opencode_title"  # the row's unseen_calls key (agents/common/unseen.py): its title request, recorded nowhere
DEFAULT_TITLE = re.compile(r"(New session - |Child session - )\d{4}-\d{2}-\d{2}T")  # session.ts isDefaultTitle
# part types (message-v2.ts) and roles this reader knows; any other is counted as unknown
KNOWN_PARTS = frozenset({"text", "reasoning", "tool", "step-start", "step-finish", "compaction", "patch", "file",
                         "snapshot", "agent", "subtask", "retry"})
UNKNOWN_PART = "OpenCode message parts of a type this xshare does not know (skipped)"
UNKNOWN_ROLE = "OpenCode messages with a role this xshare does not know (skipped)"


def default_homes() -> list[Path]:
    data, home = os.environ.get("XDG_DATA_HOME"), user_home()
    base = Path(data).expanduser() if data else home / ".local" / "share" if home else None
    return [base / "opencode"] if base else []


def describe(homes: list[Path]) -> list[str]:
    return [f"OpenCode databases at {home}" + ("" if home.suffix == ".db" else "/opencode*.db") for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    found: list[Path] = []
    for home in homes:
        found += [home] if home.is_file() else sorted(home.glob("opencode*.db"))
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


def unread(homes: list[Path]) -> list[str]:
    """What is there but not read: OpenCode's pre-1.2 JSON storage."""
    found = same_file.unique(home for home in homes if (home / "storage" / "session").is_dir())
    return ["OpenCode JSON storage (before 1.2) found but not read"] * len(found)


class _Session:
    """One session's messages through the ledger, step by step."""

    def __init__(self, counter: TokenCounter, problems: Counter, detail: bool) -> None:
        self.replay = Replay(TOOLS, counter, problems, detail)
        self.compacting = False

    def message(self, data: dict, parts: list[dict]) -> None:
        replay = self.replay
        if data.get("role") not in ("user", "assistant"):
            replay.problems[UNKNOWN_ROLE] += 1
            return
        unknown = sum(1 for part in parts if not isinstance(part.get("type"), str) or part["type"] not in KNOWN_PARTS)
        if unknown:
            replay.problems[UNKNOWN_PART] += unknown
        stamp = replay.seen((data.get("time") or {}).get("created") if isinstance(data.get("time"), dict) else None)
        if data.get("role") == "assistant":
            if isinstance(data.get("modelID"), str):
                replay.model = data["modelID"]
            self._assistant(data, parts, stamp)
            return
        if self.compacting:
            replay.compact()  # a compaction with no summary message: drop what came before anyway
            self.compacting = False
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                replay.add("conversation", value if isinstance(value := part.get("text"), str) else "")
            elif kind == "compaction":
                self.compacting = True

    def _assistant(self, data: dict, parts: list[dict], stamp: str | None) -> None:
        replay, results = self.replay, []
        summary = data.get("summary") is True
        summary_text = []
        for part in parts:
            kind = part.get("type")
            if kind in ("text", "reasoning"):
                text = value if isinstance(value := part.get("text"), str) else ""
                if summary and kind == "text":
                    summary_text.append(text)
                else:
                    replay.output("conversation", text)
            elif kind == "tool":
                state = value if isinstance(value := part.get("state"), dict) else {}
                replay.tool_call(part.get("callID"), part.get("tool"), state.get("input"))
                output = state.get("output") if "output" in state else state.get("error")
                results.append((part.get("callID"), as_text(output), part.get("tool")))
            elif kind == "step-finish":
                self._call(part, replay.seen(_end(part)) or stamp)
                for call_id, text, tool in results:
                    replay.tool_result(call_id, text, tool)
                results = []
        for call_id, text, tool in results:  # a step cut short: its results are still sent next
            replay.tool_result(call_id, text, tool)
        if summary:
            replay.compact("\n".join(summary_text))
            self.compacting = False

    def _call(self, part: dict, stamp: str | None) -> None:
        tokens = value if isinstance(value := part.get("tokens"), dict) else {}
        cache = value if isinstance(value := tokens.get("cache"), dict) else {}
        counts = self.replay.usage((tokens.get("input"), cache.get("read"), cache.get("write"), tokens.get("output"),
                                    tokens.get("reasoning")), prompt_parts=3)
        fresh, read, write, output, reasoning = counts or (0, 0, 0, 0, 0)  # impossible: no call
        usage = {"input": fresh, "cache_read": read, "cache_write_5m": write, "output": output + reasoning}
        self.replay.call(fresh + read + write, usage, stamp)


def _end(part: dict) -> object:
    time = part.get("time")
    return time.get("end") if isinstance(time, dict) else None


def _read(connection: sqlite3.Connection, counter: TokenCounter, problems: Counter,
          ledgers: dict | None) -> list[SessionRow]:
    wanted = {"session": {"id", "parent_id", "time_created", "time_updated"},
              "message": {"id", "session_id", "data"}, "part": {"id", "message_id", "data"}}
    for table, columns in wanted.items():
        if not columns <= table_columns(connection, table):
            raise Unreadable("OpenCode databases without OpenCode's session, message and part tables, skipped")
    title = "title" if "title" in table_columns(connection, "session") else "NULL"
    connection.execute("BEGIN")  # one snapshot for the three queries
    try:
        sessions = connection.execute(f"SELECT id, parent_id, time_created, time_updated, {title} FROM session"
                                      ).fetchall()
        messages: dict[str, list[tuple[str, dict]]] = defaultdict(list)
        for message_id, session_id, data in connection.execute(
                "SELECT id, session_id, data FROM message ORDER BY session_id, id"):
            parsed = parse_json(data)
            if isinstance(parsed, dict):
                messages[session_id].append((message_id, parsed))
        parts: dict[str, list[dict]] = defaultdict(list)
        for message_id, data in connection.execute("SELECT message_id, data FROM part ORDER BY message_id, id"):
            parsed = parse_json(data)
            if isinstance(parsed, dict):
                parts[message_id].append(parsed)
    finally:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("COMMIT")
    rows = []
    for session_id, parent, created, updated, named in sessions:
        session = _Session(counter, problems, ledgers is not None)
        session.replay.seen(created)
        for message_id, data in messages.get(session_id, []):
            session.message(data, parts.get(message_id, []))
        session.replay.seen(updated)
        started = stamp(created)
        if started:
            session.replay.ledger.first_seen = started  # the session's own start places it in a window
        row = session.replay.row(str(session_id), "subagent" if parent else "interactive",
                                 str(parent) if parent else None)
        if not parent and isinstance(named, str) and named and not DEFAULT_TITLE.match(named):
            row[unseen.FIELD] = {TITLE: 1}  # OpenCode's own title request gave it this title
        if ledgers is not None:
            ledgers[row["id"]] = session.replay.ledger
        rows.append(row)
    return rows


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """Every session's row in one OpenCode database; problems are counted, never raised."""
    return read_with_retries(path, "OpenCode", problems,
                             lambda connection, trouble: _read(connection, counter, trouble, ledgers))
