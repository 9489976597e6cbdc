"""One Kilo CLI session in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from kilo_fixtures import kilo_db


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    return kilo_db(home / ".local" / "share" / "kilo" / "kilo.db")[0], ("ses_k001",)
