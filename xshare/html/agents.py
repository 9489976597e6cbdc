"""The HTML page of a Codex, Gemini CLI, OpenCode or OpenClaw session: the same page as Claude Code's,
from the same detailed ledger (these agents record the bill per call, so every section has its data)."""

from __future__ import annotations

from pathlib import Path

from xshare.html.write import from_ledger, page_path, shown_path
from xshare.measure import tokens as tokenizers
from xshare.state.store import atomic_write


def write_agent_page(session_id: str, agent_homes: dict[str, list[str] | None] | None,
                     choice: tokenizers.TokenizerChoice, out: Path | None = None) -> tuple[Path | None, dict]:
    """The page of the session with this id, written to `out` (default: html/ in xshare's state folder);
    None when no agent's files hold it. Also returns the problems met on the way."""
    from xshare.html.session_page import render_session
    from xshare.sessions import measure as sessions

    ledgers: dict = {}
    row, problems, origin = sessions.find_agent_session(session_id, choice, agent_homes, ledgers)
    if row is None:
        return None, dict(problems)
    note = sessions._counter.choice.note if sessions._counter else ""
    data = from_ledger(ledgers[session_id], row, origin=shown_path(Path(origin)), tokenizer_note=note,
                       problems=dict(problems), turn_markers=False)
    target = out or page_path(session_id)
    atomic_write(target, render_session(data).encode("utf-8"))
    return target, dict(problems)
