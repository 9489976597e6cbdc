"""A Qwen Code chat told by its content (its first record), whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.sniff import first_record, sniff

RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})


def recognises(path: Path) -> bool:
    """JSON Lines whose first record has the chat record's keys: uuid, parentUuid, sessionId and a known type
    (a Claude Code transcript has no `parts` in its messages; Qwen Code's records say `message.parts`)."""
    record = first_record(sniff(path))
    if record is None or not all(key in record for key in ("uuid", "parentUuid", "sessionId")):
        return False
    message = record.get("message")
    if record.get("type") == "system":
        return "systemPayload" in record  # Claude Code's system records say `content`
    return record.get("type") in RECORD_TYPES and isinstance(message, dict) and "parts" in message
