"""A Gemini CLI chat told by its content (docs/: its first record), whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.sniff import first_record, sniff


def recognises(path: Path) -> bool:
    """A chat: one JSON document with sessionId, projectHash and messages, or JSON Lines headed by them."""
    head = sniff(path)
    record = first_record(head)
    if record is not None and "sessionId" in record and "projectHash" in record and "type" not in record:
        return True
    return head.lstrip()[:1] == b"{" and all(key in head for key in (b'"sessionId"', b'"projectHash"',
                                                                       b'"messages"'))
