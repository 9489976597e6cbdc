"""One Claude Code session in its default place under a home (the demo's), for the tests over every agent."""

from __future__ import annotations

from pathlib import Path

from xshare.agents.claude_code.files import discover
from xshare.demo.corpus import write_demo_corpus


def sample_sessions(home: Path) -> tuple[Path, tuple[str, ...]]:
    """The file of the demo's first interactive session, and the ids whose pages the index links (none checked)."""
    projects = write_demo_corpus(home / ".claude")
    return next(f.path for f in discover([projects]) if f.source == "interactive"), ()
