"""Kilo CLI's database told by its content, whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.sqlite import tables


def recognises(path: Path) -> bool:
    """Kilo CLI's database: OpenCode's session, message and part tables, and Kilo's own board table (an
    OpenCode database has none)."""
    return {"session", "message", "part", "kilo_board"} <= tables(path)
