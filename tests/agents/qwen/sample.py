"""One Qwen Code session in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from qwen_fixtures import SESSION, session


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    return session(home / ".qwen")[0], (SESSION,)
