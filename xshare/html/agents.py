"""The HTML page of a Hermes, Codex, Gemini CLI, OpenCode or OpenClaw session: the same page as Claude Code's,
from the same detailed ledger. The four record the bill per call, so every section has its data; Hermes
records it per session, so its page says it cannot have the cache sections."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from xshare.html.analysis import from_ledger
from xshare.html.session_page import render_session
from xshare.html.write import page_path, shown_path
from xshare.measure import tokens as tokenizers
from xshare.sessions import counter as session_counter
from xshare.sessions.agents import find_agent_session
from xshare.sources.hermes import state_db as hermes
from xshare.state.store import atomic_write


def write_agent_page(session_id: str, agent_homes: dict[str, list[str] | None] | None,
                     choice: tokenizers.TokenizerChoice, out: Path | None = None) -> tuple[Path | None, dict]:
    """The page of the session with this id, written to `out` (default: html/ in xshare's state folder);
    None when no agent's files hold it. Also returns the problems met on the way."""
    ledgers: dict = {}
    row, problems, origin = find_agent_session(session_id, choice, agent_homes, ledgers)
    if row is None:
        return None, dict(problems)
    current = session_counter.current()
    note = current.choice.note if current else ""
    data = from_ledger(ledgers[session_id], row, origin=shown_path(Path(origin)), tokenizer_note=note,
                       problems=dict(problems), turn_markers=False)
    target = out or page_path(session_id)
    atomic_write(target, render_session(data).encode("utf-8"))
    return target, dict(problems)


def write_hermes_page(session_id: str, databases: list[Path], choice: tokenizers.TokenizerChoice,
                      out: Path | None = None, problems: Counter | None = None) -> Path | None:
    """A Hermes session's page, with what its data supports: Hermes records the bill per session, not
    per call, so the page says it cannot have the cache sections. None if no database holds the id;
    what went wrong in each database looked in (one locked, say) is added to `problems`."""
    counter = session_counter.use(choice)
    for database in databases:
        found: Counter = Counter()
        ledgers: dict = {}
        rows = hermes.read_database(database, counter.count, counter.name, found, only=session_id,
                                    ledgers=ledgers)
        counter.flush()
        if problems is not None:
            problems.update(found)
        if rows:
            data = from_ledger(ledgers[session_id], rows[0], origin=f"Hermes {shown_path(database)}",
                               tokenizer_note=counter.choice.note, problems=dict(found))
            target = out or page_path(session_id)
            atomic_write(target, render_session(data).encode("utf-8"))
            return target
    return None
