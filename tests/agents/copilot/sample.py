"""One GitHub Copilot CLI session in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from copilot_fixtures import SESSION, copilot_session


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    return copilot_session(home / ".copilot")[0], (SESSION,)
