"""A pi session file told by its content: OpenClaw's transcripts begin with the same header (`{type: session,
version: 3, id, timestamp, cwd}`), so the header alone cannot say whose a file is. pi 1.6 records the system
prompt as a `system` message among the first entries (OpenClaw does not); a file pi named
`<time>_<session id>.jsonl` is pi's too (an older pi's, without that message; OpenClaw names `<id>.jsonl`)."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.replay import parse_json
from xshare.agents.common.sniff import first_record, sniff

FIRST_ENTRIES = 8  # pi writes the system message after the header, a model change and a thinking level


def recognises(path: Path) -> bool:
    """A session header first, then a `system` message among the first entries, or pi's own file name."""
    head = sniff(path)
    record = first_record(head)
    if record is None or record.get("type") != "session" or not isinstance(record.get("id"), str):
        return False
    if path.name.endswith(f"_{record['id']}.jsonl"):
        return True
    for line in head.splitlines()[1:FIRST_ENTRIES]:
        entry = parse_json(line)
        message = entry.get("message") if isinstance(entry, dict) and entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "system":
            return True
    return False
