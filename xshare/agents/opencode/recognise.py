"""OpenCode's database told by its content, whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.sqlite import tables


def recognises(path: Path) -> bool:
    """OpenCode's database: its session, message and part tables."""
    return {"session", "message", "part"} <= tables(path)
