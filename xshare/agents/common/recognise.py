"""Whose file is this? Each agent's records told apart by their content, never their name, so that
`xshare session PATH` reads a Codex rollout as Codex's, whatever it is called (docs/: each format's first
record). Claude Code's test is the loosest (a JSON Lines file of typed records) and is asked last."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common import unzstd
from xshare.agents.common.sqlite import tables
from xshare.agents.common.stated import read_stated
from xshare.agents.protocol import first_record, sniff

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def codex(path: Path) -> bool:
    """A rollout: its first line is the session_meta record (or, before 0.3x, a bare header with
    instructions), or the fork's one JSON document {session, items}."""
    head = sniff(path)
    record = first_record(head)
    if record is not None and (record.get("type") == "session_meta"
                               or ("id" in record and "instructions" in record and "type" not in record)):
        return True
    start = head.lstrip()[:1]
    return start == b"{" and b'"session"' in head and b'"items"' in head and b'"sessionId"' not in head


def gemini(path: Path) -> bool:
    """A chat: one JSON document with sessionId, projectHash and messages, or JSON Lines headed by them."""
    head = sniff(path)
    record = first_record(head)
    if record is not None and "sessionId" in record and "projectHash" in record and "type" not in record:
        return True
    return head.lstrip()[:1] == b"{" and all(key in head for key in (b'"sessionId"', b'"projectHash"',
                                                                       b'"messages"'))


def openclaw(path: Path) -> bool:
    """A transcript (zstd-compressed when archived) whose first entry is the session header, or the
    agent's database with its transcript tables."""
    head = sniff(path)
    if head.startswith(ZSTD_MAGIC):
        head = (unzstd.decompress(read_stated(path)) or b"")[: 1 << 16] if _small(path) else b""
    record = first_record(head)
    if record is not None and record.get("type") == "session" and "id" in record:
        return True
    return {"transcript_events", "session_windows"} <= tables(path)


def opencode(path: Path) -> bool:
    """OpenCode's database: its session, message and part tables."""
    return {"session", "message", "part"} <= tables(path)


def hermes(path: Path) -> bool:
    """Hermes's state.db: its sessions and messages tables."""
    return {"sessions", "messages"} <= tables(path)


def claude(path: Path) -> bool:
    """A Claude Code transcript: JSON Lines of typed records (or an empty .jsonl file, a session not yet
    written to). A .jsonl file whose first line is JSON of another shape (an array, a number) is no one's."""
    head = sniff(path)
    record = first_record(head)
    if record is not None and isinstance(record.get("type"), str):
        return True
    return path.suffix == ".jsonl" and not _starts_with_other_json(head)


def _starts_with_other_json(head: bytes) -> bool:
    """Whether a head's first line is whole JSON that is not an object (no agent writes such a line)."""
    import json  # only when a path is given, as first_record

    line = next((line for line in head.splitlines() if line.strip()), b"")
    try:
        return not isinstance(json.loads(line), dict)
    except ValueError:
        return False  # empty, or a first line still being written


def _small(path: Path, limit: int = 64 << 20) -> bool:
    try:
        return path.stat().st_size <= limit
    except OSError:
        return False


def one_document(path: Path, data: bytes) -> bool:
    """Whether a record file is one JSON document rather than JSON Lines: by its name where the agent named
    it (.json, .jsonl), else by its content (a file renamed or saved under another name)."""
    if path.suffix in (".json", ".jsonl"):
        return path.suffix == ".json"
    import json  # only for a file under a name no agent gives

    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


def compressed(path: Path, data: bytes) -> bool:
    """zstd-compressed (OpenClaw's archived transcripts: `....zst`), by name or by the frame's magic."""
    return path.name.endswith(".zst") or data.startswith(ZSTD_MAGIC)
