"""An OpenClaw transcript or database told by its content, whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common import unzstd
from xshare.agents.common.sniff import ZSTD_MAGIC, first_record, sniff
from xshare.agents.common.sqlite import tables
from xshare.agents.common.stated import read_stated


def recognises(path: Path) -> bool:
    """A transcript (zstd-compressed when archived) whose first entry is the session header, or the
    agent's database with its transcript tables."""
    head = sniff(path)
    if head.startswith(ZSTD_MAGIC):
        head = (unzstd.decompress(read_stated(path)) or b"")[: 1 << 16] if _small(path) else b""
    record = first_record(head)
    if record is not None and record.get("type") == "session" and "id" in record:
        return True
    return {"transcript_events", "session_windows"} <= tables(path)


def _small(path: Path, limit: int = 64 << 20) -> bool:
    try:
        return path.stat().st_size <= limit
    except OSError:
        return False
