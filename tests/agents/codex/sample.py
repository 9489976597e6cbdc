"""One Codex CLI session in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from agent_fixtures import codex_session

CODEX_ID = "0190aaaa-1111-7000-8000-000000000001"


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    return codex_session(home / ".codex", CODEX_ID)[0], (CODEX_ID,)
