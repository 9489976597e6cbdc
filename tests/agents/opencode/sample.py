"""OpenCode's sessions (one with a child) in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from agent_fixtures import opencode_db


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    return opencode_db(home / ".local" / "share" / "opencode" / "opencode.db")[0], ("ses_b002", "ses_b001")
