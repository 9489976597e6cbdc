"""Hermes's state.db told by its content, whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.common.sqlite import tables


def recognises(path: Path) -> bool:
    """Hermes's state.db: its sessions and messages tables."""
    return {"sessions", "messages"} <= tables(path)
