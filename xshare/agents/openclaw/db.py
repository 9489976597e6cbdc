"""OpenClaw's SQLite transcripts (2026.9 on): agents/<agentId>/agent/openclaw-agent.sqlite, read-only.

Table `transcript_events(session_id, seq, event_json, event_zstd, event_utf8_bytes, ...)` holds one
transcript entry per row, the same JSON entries the older `sessions/<id>.jsonl` files held (session
header version 4). OpenClaw compresses a row with zstd when its JSON is 1 KiB or more and shrinks by at
least a tenth, whenever its Node has zstd (every Node it supports does), and no setting turns that off:
so big tool results, and at times assistant messages, are in `event_zstd` with their size in
`event_utf8_bytes`. They are decompressed by xshare/agents/common/unzstd.py; a session with a row that cannot
be decompressed here is skipped and counted, never read with that row missing. `session_windows` names
each session's key (`agent:main:main`, `...:subagent:...`, `...:cron:...`). A session whose transcript
OpenClaw moved to cold storage (`session_transcript_cold_archives`: a zstd JSONL of `{kind: "event",
row: {seq, event_json}}` records, in the row's `archive_blob` or in `sessions/cold/<name>`) is read from
there. Nothing else in the database is read (it also holds credentials, `auth_profile_store`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from xshare.agents.common import unzstd
from xshare.agents.common.replay import parse_json
from xshare.agents.common.sqlite import Unreadable, read_with_retries, table_columns
from xshare.agents.common.stated import read_stated

DATABASE_NAME = "openclaw-agent.sqlite"
NOT_OPENCLAW = "OpenClaw databases without OpenClaw's transcript_events and session_windows tables, skipped"
COMPRESSED_UNREADABLE = ("OpenClaw sessions skipped: a transcript row or archive compressed with zstd could not be "
                         "decompressed here (needs Python 3.14+ or the system's libzstd)")
BAD_ROWS = "OpenClaw transcript rows that are not JSON (skipped)"
COLD_MISSING = "OpenClaw sessions in cold storage whose archive is missing (skipped)"


@dataclass
class StoredSession:
    session_id: str
    session_key: str = ""
    created: object = None  # epoch milliseconds
    updated: object = None
    entries: list = field(default_factory=list)


def _entries_of_rows(rows: list[tuple], problems: Counter) -> list | None:
    """The parsed entries of one session's rows; None when a compressed row cannot be decompressed."""
    entries, bad = [], 0
    for text, packed, size in rows:
        if text is None and packed is not None:
            data = unzstd.decompress(packed, size if isinstance(size, int) else None)
            if data is None:
                return None
            text = data
        entry = parse_json(text)
        if isinstance(entry, dict):
            entries.append(entry)
        else:
            bad += 1
    if bad:
        problems[BAD_ROWS] += bad
    return entries


def _cold_entries(archive: tuple, folder: Path, problems: Counter) -> list | None:
    """A cold archive's entries; None when it cannot be read (counted)."""
    name, storage, blob, raw = archive
    if storage == "sqlite":
        packed = blob
    else:
        try:
            packed = read_stated(folder / "cold" / str(name)) if "/" not in str(name) else None
        except OSError:
            packed = None
        if packed is None:
            problems[COLD_MISSING] += 1
            return []
    data = unzstd.decompress(packed, raw if isinstance(raw, int) and raw > 0 else None)
    if data is None:
        return None
    rows = []
    for line in data.splitlines():
        record = parse_json(line)
        row = record.get("row") if isinstance(record, dict) and record.get("kind") == "event" else None
        if isinstance(row, dict) and isinstance(row.get("event_json"), str):
            rows.append((value if isinstance(value := row.get("seq"), int) else 0, row["event_json"]))
    return _entries_of_rows([(text, None, None) for _, text in sorted(rows, key=lambda item: item[0])], problems)


def _sessions(connection: sqlite3.Connection, path: Path, problems: Counter) -> Iterator[StoredSession]:
    if not {"session_id", "seq", "event_json"} <= table_columns(connection, "transcript_events") or \
            not {"session_id", "session_key"} <= table_columns(connection, "session_windows"):
        raise Unreadable(NOT_OPENCLAW)
    packed = {"event_zstd", "event_utf8_bytes"} <= table_columns(connection, "transcript_events")
    cold_columns = table_columns(connection, "session_transcript_cold_archives")
    windows = connection.execute("SELECT session_id, session_key, created_at, updated_at FROM session_windows "
                                 "ORDER BY created_at, session_id").fetchall()
    known = {row[0] for row in windows}
    # a transcript whose window is gone is still a session that was billed
    orphans = [(session_id, "", None, None) for (session_id,) in connection.execute(
        "SELECT DISTINCT session_id FROM transcript_events") if session_id not in known]
    select = "SELECT event_json, event_zstd, event_utf8_bytes" if packed else "SELECT event_json, NULL, NULL"
    for session_id, key, created, updated in windows + orphans:
        stored = StoredSession(str(session_id), key if isinstance(key, str) else "", created, updated)
        rows = connection.execute(f"{select} FROM transcript_events WHERE session_id = ? ORDER BY seq",
                                  (session_id,)).fetchall()
        if rows:
            entries = _entries_of_rows(rows, problems)
        elif {"session_id", "archive_name", "storage", "archive_blob", "raw_bytes"} <= cold_columns:
            archive = connection.execute("SELECT archive_name, storage, archive_blob, raw_bytes FROM "
                                         "session_transcript_cold_archives WHERE session_id = ?",
                                         (session_id,)).fetchone()
            entries = _cold_entries(archive, path.parent.parent / "sessions", problems) if archive else []
        else:
            entries = []
        if entries is None:
            problems[COMPRESSED_UNREADABLE] += 1
            continue
        if entries:
            stored.entries = entries
            yield stored


def read_sessions(path: Path, problems: Counter) -> list[StoredSession]:
    """Every session with a transcript in one OpenClaw database; problems are counted, never raised.
    Opened as Hermes's and OpenCode's databases are (nothing written, no file left beside it); a locked
    database is tried again, then reported."""
    def sessions(connection: sqlite3.Connection, trouble: Counter) -> list[StoredSession]:
        connection.execute("BEGIN")  # one snapshot for every query
        try:
            return list(_sessions(connection, path, trouble))
        finally:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("COMMIT")

    return read_with_retries(path, "OpenClaw", problems, sessions)
