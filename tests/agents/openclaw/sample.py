"""One OpenClaw session in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from agent_fixtures import openclaw_session

OPENCLAW_ID = "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d"


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    return openclaw_session(home / ".openclaw", OPENCLAW_ID)[0], (OPENCLAW_ID,)
