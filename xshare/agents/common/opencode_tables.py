"""OpenCode's database, read for OpenCode and for its forks that keep the same tables (Kilo CLI): the
`session`, `message` and `part` tables of one SQLite file, each message and part a JSON `data` column.
What the fields mean, and which versions were checked, is in each agent's reader.py (agents/opencode/,
agents/kilo/); a fork differs only in its name, its tools and how its title request is named.

One API call = one `step-finish` part; prompt billed = tokens.input + cache.read + cache.write (OpenCode's
`input` excludes both), output = output + reasoning. A part type or role not known, and a row whose data is not
a JSON object, is counted, never read as zero.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from xshare.agents.common import same_file, unseen
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import Replay, as_text, parse_json
from xshare.agents.common.sqlite import Unreadable, read_with_retries, table_columns
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import stamp
from xshare.measure.tool_tables import ToolTable
from xshare.state.paths import home as user_home

DEFAULT_TITLE = re.compile(r"(New session - |Child session - )\d{4}-\d{2}-\d{2}T")  # session.ts isDefaultTitle
# part types (message-v2.ts) and roles this reader knows; any other is counted as unknown
KNOWN_PARTS = frozenset({"text", "reasoning", "tool", "step-start", "step-finish", "compaction", "patch", "file",
                         "snapshot", "agent", "subtask", "retry"})


@dataclass(frozen=True)
class Fork:
    """What tells one agent keeping OpenCode's tables from another."""

    name: str  # "OpenCode", in its problems' words
    folder: str  # its data folder under $XDG_DATA_HOME or ~/.local/share, and its databases' prefix ("opencode")
    tools: ToolTable
    title: str  # the unseen_calls key of its title request (agents/common/unseen.py)
    # True where a default title does not prove there was no title request (Kilo CLI's `run` exits before
    # storing the title it was sent): every top-level session then names up to one
    title_may_be_lost: bool = False

    def default_homes(self) -> list[Path]:
        data, home = os.environ.get("XDG_DATA_HOME"), user_home()
        base = Path(data).expanduser() if data else home / ".local" / "share" if home else None
        return [base / self.folder] if base else []

    def describe(self, homes: list[Path]) -> list[str]:
        return [f"{self.name} databases at {home}" + ("" if home.suffix == ".db" else f"/{self.folder}*.db")
                for home in homes]

    def discover(self, homes: list[Path]) -> list[Path]:
        """A database named, or every one its folder holds (a release channel's too: `<folder>-<channel>.db`)."""
        found: list[Path] = []
        for home in homes:
            found += [home] if home.is_file() else sorted(home.glob(f"{self.folder}*.db"))
        return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once

    @property
    def unknown_part(self) -> str:
        return f"{self.name} message parts of a type this xshare does not know (skipped)"

    @property
    def unknown_role(self) -> str:
        return f"{self.name} messages with a role this xshare does not know (skipped)"

    @property
    def not_json(self) -> str:
        return f"{self.name} messages or parts whose data is not a JSON object (skipped)"


class _Session:
    """One session's messages through the ledger, step by step."""

    def __init__(self, fork: Fork, counter: TokenCounter, problems: Counter, detail: bool) -> None:
        self.fork = fork
        self.replay = Replay(fork.tools, counter, problems, detail)
        self.compacting = False

    def message(self, data: dict, parts: list[dict]) -> None:
        replay = self.replay
        if data.get("role") not in ("user", "assistant"):
            replay.problems[self.fork.unknown_role] += 1
            return
        unknown = sum(1 for part in parts if not isinstance(part.get("type"), str) or part["type"] not in KNOWN_PARTS)
        if unknown:
            replay.problems[self.fork.unknown_part] += unknown
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


def _read(connection: sqlite3.Connection, fork: Fork, counter: TokenCounter, problems: Counter,
          ledgers: dict | None) -> list[SessionRow]:
    wanted = {"session": {"id", "parent_id", "time_created", "time_updated"},
              "message": {"id", "session_id", "data"}, "part": {"id", "message_id", "data"}}
    for table, columns in wanted.items():
        if not columns <= table_columns(connection, table):
            raise Unreadable(f"{fork.name} databases without {fork.name}'s session, message and part tables, skipped")
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
            else:
                problems[fork.not_json] += 1
        parts: dict[str, list[dict]] = defaultdict(list)
        for message_id, data in connection.execute("SELECT message_id, data FROM part ORDER BY message_id, id"):
            parsed = parse_json(data)
            if isinstance(parsed, dict):
                parts[message_id].append(parsed)
            else:
                problems[fork.not_json] += 1
    finally:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("COMMIT")
    rows = []
    for session_id, parent, created, updated, named in sessions:
        session = _Session(fork, counter, problems, ledgers is not None)
        session.replay.seen(created)
        for message_id, data in messages.get(session_id, []):
            session.message(data, parts.get(message_id, []))
        session.replay.seen(updated)
        started = stamp(created)
        if started:
            session.replay.ledger.first_seen = started  # the session's own start places it in a window
        row = session.replay.row(str(session_id), "subagent" if parent else "interactive",
                                 str(parent) if parent else None)
        titled = isinstance(named, str) and bool(named) and not DEFAULT_TITLE.match(named)
        if not parent and (titled or fork.title_may_be_lost):
            row[unseen.FIELD] = {fork.title: 1}  # its own title request gave it this title
        if ledgers is not None:
            ledgers[row["id"]] = session.replay.ledger
        rows.append(row)
    return rows


def read(path: Path, fork: Fork, counter: TokenCounter, problems: Counter,
         ledgers: dict | None = None) -> list[SessionRow]:
    """Every session's row in one database of OpenCode's tables; problems are counted, never raised."""
    return read_with_retries(path, fork.name, problems,
                             lambda connection, trouble: _read(connection, fork, counter, trouble, ledgers))
