"""A GitHub Copilot CLI session's events file told by its content, whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.sniff import first_record, sniff


def recognises(path: Path) -> bool:
    """Its first line is the `session.start` event whose producer is Copilot's agent."""
    record = first_record(sniff(path))
    data = record.get("data") if record is not None else None
    return (record is not None and record.get("type") == "session.start" and isinstance(data, dict)
            and "copilotVersion" in data)
