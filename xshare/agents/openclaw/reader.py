"""OpenClaw (pi-agent based): its transcripts under the state folder ($OPENCLAW_STATE_DIR, else
$OPENCLAW_HOME/.openclaw, else ~/.openclaw). Checked against the corpus's session files (header version
3) and the real OpenClaw 2026.9.6 run offline (header version 4, in SQLite; tests/agents/openclaw/test_realhost.py).

Where. Until 2026.9: `agents/<agentId>/sessions/<uuid>.jsonl`, with rotated copies
`<uuid>.jsonl.reset.<time>` (a /reset started a new session) and `<uuid>.jsonl.deleted.<time>`: they are
sessions that were billed, so they are read too (2026.9 compresses them: `....zst`, decompressed by
xshare/agents/common/unzstd.py). A reset renames the live file, so one session's live file and its archive lie side
by side only as copies (a backup taken before the reset): the files of one id are one session, each entry
read once (`session_files`). From 2026.9: one SQLite database per agent,
`agents/<agentId>/agent/openclaw-agent.sqlite`, a transcript entry per row (xshare/agents/openclaw/db.py).
`sessions.json` (files) or `session_windows.session_key` (SQLite) name each session's key: a key with
`:subagent:` is `openclaw/subagent`, with `:cron:` `openclaw/automated`; the others (the person's chats,
on any channel) are `openclaw/interactive`.

What is recorded. Entries `{type, id, parentId, timestamp, ...}`: `session` (the header), `model_change`,
`message` (`user`; `assistant` with `text`/`thinking`/`toolCall {id, name, arguments}` content and its
`usage`; `toolResult {toolCallId, toolName, content}`; `bashExecution {command, output}`, a shell command
the person ran; `custom`/`hookMessage`, an extension's text), `compaction {summary, firstKeptEntryId}`,
`reset {firstKeptEntryId?}`, `branch_summary`, `custom_message` (an extension's text for the model) and
bookkeeping entries (`thinking_level_change`, `custom`, `label`, `session_info`, `leaf`). A message marked
`excludeFromContext` is never sent. An entry type or message role not listed here is counted on stderr
as unknown (it may have been sent: the billing cap still bounds every call). 2026.9 hides most tools
behind `tool_search` and `tool_call {id, args}`: a `tool_call` is judged by the tool it calls
(measure/tool_tables.py), so a read made that way is a read.

Usage. Each assistant message is one API call with `usage {input, output, cacheRead, cacheWrite,
totalTokens}`, where `input` excludes cache reads and writes (totalTokens = the four summed): prompt billed
= input + cacheRead + cacheWrite; cache write counted as 5-minute writes. An errored request whose usage is
all zero billed nothing and is no call; an assistant message with no usage at all is counted on stderr.

Presence and compaction. A message is present from the call after it. A compaction entry drops every
entry before `firstKeptEntryId` (all of them when that id is unknown) and adds its summary; a reset entry
does the same without a summary. OpenClaw's transcript is a tree (`parentId`): a branch the person moved
away from stays present until the billing cap (each call's bill) drops it, as it drops the oldest context
first.

Unknown. No reasoning-token figure (output includes it, if billed); the system prompt is overhead.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from xshare.agents.common import same_file, unzstd
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import holds_no_record, json_objects, names_by
from xshare.agents.common.sniff import compressed, sniff
from xshare.agents.common.sqlite import SQLITE_MAGIC
from xshare.agents.common.stated import read_stated
from xshare.agents.common.v3_entries import EntryKind, Transcript
from xshare.agents.openclaw.db import COMPRESSED_UNREADABLE, DATABASE_NAME, read_sessions
from xshare.agents.openclaw.tools import TOOLS
from xshare.measure.row import SessionRow
from xshare.state.paths import home as user_home
from xshare.state.store import dumps, loads

AGENT = "openclaw"
NAME = "OpenClaw"
FLAG = "openclaw_home"
KIND = "database"  # a database changes through its -wal too; a session file's stamp is the same as before
ROTATED = (".jsonl.reset.", ".jsonl.deleted.")
ENTRIES = EntryKind(NAME, TOOLS, "exec")  # its entries are pi's (agents/common/v3_entries.py)
UNKNOWN_ENTRY, UNKNOWN_ROLE, NO_USAGE = ENTRIES.unknown_entry, ENTRIES.unknown_role, ENTRIES.no_usage
TRANSCRIPT = "OpenClaw transcript"  # what its problems call the files and lines they were met in
SAME_SESSION = ("OpenClaw transcripts of a session an earlier file of it holds too (a live file beside its reset "
                "archive: read with it as one session, each call once)")


def default_homes() -> list[Path]:
    state = os.environ.get("OPENCLAW_STATE_DIR")
    if state:
        return [Path(state).expanduser()]
    home = os.environ.get("OPENCLAW_HOME")
    base = Path(home).expanduser() if home else user_home()
    return [base / ".openclaw"] if base else []


def describe(homes: list[Path]) -> list[str]:
    return [f"OpenClaw transcripts under {home}/agents/*/sessions and {home}/agents/*/agent/{DATABASE_NAME}"
            for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    found: list[Path] = []
    for home in homes:
        for path in sorted(home.glob("agents/*/sessions/*.jsonl*")):
            if _session_of_name(path.name) is not None:
                found.append(path)
        found += sorted(home.glob(f"agents/*/agent/{DATABASE_NAME}"))
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


def _session_of_name(name: str) -> str | None:
    """The session a transcript's name is for (`<id>.jsonl`, `<id>.jsonl.reset.<time>`, ...); None for any
    other file."""
    if name.endswith(".jsonl") or any(mark in name for mark in ROTATED):
        return name.split(".jsonl", 1)[0]
    return None


def session_files(path: Path) -> list[Path]:
    """Every transcript of this file's session in its folder, in name order (the live file first). OpenClaw
    renames the live file on a reset or a delete, so it never leaves the live file beside its archive; where
    both lie there (a backup of the folder taken before the reset, beside the reset's archive), each holds
    the session's entries up to where it stops: they are read as one session, each entry once."""
    session = _session_of_name(path.name)
    names = names_by(path.parent, _session_of_name).get(session, ()) if session is not None else ()
    return [path.parent / name for name in names] or [path]


def session_file(path: Path) -> Path:
    """The transcript whose row is this file's session: the first of its `session_files`."""
    return session_files(path)[0]


def group_of(key: str) -> str:
    """A session key's group: `agent:main:subagent:...`, `agent:main:cron:...`, else the person's chats."""
    return "subagent" if ":subagent:" in key else "automated" if ":cron:" in key else "interactive"


def _groups(folder: Path) -> dict[str, str]:
    """session id -> group, from the folder's sessions.json index (missing or unreadable: none)."""
    try:
        index = loads(read_stated(folder / "sessions.json"))
    except (OSError, ValueError):
        return {}
    groups = {}
    for key, entry in index.items() if isinstance(index, dict) else ():
        session_id = entry.get("sessionId") if isinstance(entry, dict) else None
        if isinstance(session_id, str) and isinstance(key, str):
            groups[session_id] = group_of(key)
    return groups


def _read_database(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None) -> list[SessionRow]:
    rows = []
    for stored in read_sessions(path, problems):
        transcript = Transcript(ENTRIES, stored.session_id, counter, problems, ledgers is not None)
        transcript.replay.seen(stored.created)
        for entry in stored.entries:
            transcript.entry(entry)
        rows.append(transcript.row(group_of(stored.session_key), ledgers))
    return rows


def _transcript_bytes(path: Path, problems: Counter) -> bytes | None:
    """A transcript's bytes, decompressed when 2026.9 archived it compressed; None, counted, when unreadable."""
    try:
        data = read_stated(path)
    except OSError:
        problems["OpenClaw transcripts that vanished or could not be read"] += 1
        return None
    if compressed(path, data):  # 2026.9's archived transcripts
        unpacked = unzstd.decompress(data)
        if unpacked is None:
            problems[COMPRESSED_UNREADABLE] += 1
        return unpacked
    return data


def _session_entries(files: list[Path], problems: Counter) -> list[dict]:
    """The entries of one session's transcripts, each once: an entry another of its files holds too (the same
    id: OpenClaw's ids are unique within a session) is read where it came first."""
    entries, seen = [], set()
    for path in files:
        data = _transcript_bytes(path, problems)
        if data is None:
            continue
        held = 0
        for entry in json_objects(data, problems, TRANSCRIPT):
            held += 1
            key = entry["id"] if isinstance(entry.get("id"), str) else dumps(entry)
            if key not in seen:
                seen.add(key)
                entries.append(entry)
        if not held:  # no entry of OpenClaw's: no session, not one with no calls
            holds_no_record(TRANSCRIPT, data, problems)
    return entries


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """The session row of one transcript (with the session's other files: its rotated copies), or of every
    session in a database (with `ledgers`, their detailed ledgers too). A transcript whose session an earlier
    one of its files holds has no row: that file's row is the session's."""
    if path.name == DATABASE_NAME or sniff(path, len(SQLITE_MAGIC)) == SQLITE_MAGIC:
        return _read_database(path, counter, problems, ledgers)
    files = session_files(path)
    if files[0].name != path.name:
        problems[SAME_SESSION] += 1
        return []
    entries = _session_entries(files, problems)
    if not entries:
        return []
    transcript = Transcript(ENTRIES, path.name.split(".jsonl", 1)[0], counter, problems, ledgers is not None)
    for entry in entries:
        transcript.entry(entry)
    return [transcript.row(_groups(path.parent).get(transcript.session_id, "interactive"), ledgers)]
