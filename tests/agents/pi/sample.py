"""One pi session in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from pi_fixtures import PI_ID, pi_session


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    return pi_session().write(home / ".pi" / "agent" / "sessions"), (PI_ID,)
