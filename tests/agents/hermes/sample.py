"""One Hermes session in its default place under a home, for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from hermes_fixtures import HermesDb

HERMES_ID = "hermes-only-7f3e"


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    """Its database and the session's id."""
    return hermes_db(home / ".hermes" / "state.db"), (HERMES_ID,)


def hermes_db(path: Path) -> Path:
    """A Hermes database holding one session (a database path names a session only when it holds one)."""
    db = HermesDb(path)
    db.session(HERMES_ID, "cli", tokens=(400, 0, 0, 10), api_calls=1)
    db.message(HERMES_ID, "user", "what does main do")
    db.message(HERMES_ID, "assistant", "it prints")
    return db.close()
