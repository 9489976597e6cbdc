"""Claude Code's pages as the tests write them: through its adapter and html/write.py, as `xshare html` does."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from xshare.agents.claude_code.adapter import ADAPTER
from xshare.agents.claude_code.pages import children_by_parent, session_found
from xshare.agents.claude_code.transcript import TranscriptFile, discover, resolve_root
from xshare.agents.protocol import Found, Looking
from xshare.html.analysis import SessionData
from xshare.html.write import page_data, write_page
from xshare.measure.tokens import TokenizerChoice
from xshare.sessions.registry import BY_AGENT


def claude_looking(roots: list[str] | None, choice: TokenizerChoice, use_cache: bool = True) -> Looking:
    """Claude Code's sessions under `roots` alone (None: its default folders)."""
    return Looking({agent: [] for agent in BY_AGENT} | {"claude-code": roots}, choice, use_cache=use_cache)


def projects_of(file: TranscriptFile) -> list[str]:
    """The projects folder a transcript lies in (its subagents' files lie under it too)."""
    return [str(next((folder for folder in file.path.parents if folder.name == "projects"), file.path.parent.parent))]


def detailed(file: TranscriptFile, choice: TokenizerChoice, roots: list[str] | None = None,
             problems: Counter | None = None, looking: Looking | None = None) -> Found:
    """The transcript's session with its ledger, its subagents' sessions beside it, as its page takes it."""
    roots = roots or projects_of(file)
    files = discover([resolve_root(root) for root in roots])
    found = session_found(file, {"id": file.session_id}, files,  # type: ignore[typeddict-item]
                          children_by_parent(files).get(file.session_id, []))
    looking = looking or claude_looking(roots, choice)
    result = ADAPTER.detail(found, looking, Counter() if problems is None else problems)
    assert result is not None
    return result


def claude_data(file: TranscriptFile, choice: TokenizerChoice) -> SessionData:
    looking = claude_looking(projects_of(file), choice)
    return page_data(detailed(file, choice, looking=looking), ADAPTER, looking)


def write_claude_page(file: TranscriptFile, choice: TokenizerChoice, out: Path | None = None,
                      roots: list[str] | None = None, problems: Counter | None = None, **options) -> Path:
    """Its page (and its subagents' beside it), as `xshare html PATH` writes it."""
    roots = roots or projects_of(file)
    return write_page(detailed(file, choice, roots, problems), ADAPTER, claude_looking(roots, choice), out,
                      problems=problems, **options)
