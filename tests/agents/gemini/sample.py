"""One Gemini CLI session in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from agent_fixtures import gemini_json

GEMINI_ID = "3c2a1b0d-aaaa-4bbb-8ccc-000000000001"


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    return gemini_json(home / ".gemini", session_id=GEMINI_ID)[0], (GEMINI_ID,)
