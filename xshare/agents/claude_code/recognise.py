"""A Claude Code transcript told by its content. The loosest test of all the agents' (a JSON Lines file of
typed records), so the registry asks it last."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.sniff import first_record, sniff, starts_with_other_json


def recognises(path: Path) -> bool:
    """A Claude Code transcript: JSON Lines of typed records (or an empty .jsonl file, a session not yet
    written to). A .jsonl file whose first line is JSON of another shape (an array, a number) is no one's."""
    head = sniff(path)
    record = first_record(head)
    if record is not None and isinstance(record.get("type"), str):
        return True
    return path.suffix == ".jsonl" and not starts_with_other_json(head)
