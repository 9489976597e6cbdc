"""A Codex CLI rollout told by its content (docs/: its first record), whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.sniff import first_record, sniff


def recognises(path: Path) -> bool:
    """A rollout: its first line is the session_meta record (or, before 0.3x, a bare header with
    instructions), or the fork's one JSON document {session, items}."""
    head = sniff(path)
    record = first_record(head)
    if record is not None and (record.get("type") == "session_meta"
                               or ("id" in record and "instructions" in record and "type" not in record)):
        return True
    start = head.lstrip()[:1]
    return start == b"{" and b'"session"' in head and b'"items"' in head and b'"sessionId"' not in head
