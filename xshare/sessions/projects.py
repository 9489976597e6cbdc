"""The folder name of each session's project, for `xshare sessions` (a list a person reads to find a session;
never the report, never a rows file): each agent's rule is its adapter's `project_names` (Claude Code's,
Codex CLI's and Gemini CLI's say it; the others' records do not, shown as "-")."""

from __future__ import annotations

from collections.abc import Iterable

from xshare.agents.protocol import Looking
from xshare.measure.row import SessionRow
from xshare.sessions.registry import REGISTRY


def project_names(looking: Looking, rows: Iterable[SessionRow]) -> dict[tuple[str, str], str]:
    """(agent, session id) -> the project's folder name, for the rows whose records say it."""
    ids: dict[str, list[str]] = {}
    for row in rows:
        ids.setdefault(row["agent"], []).append(row["id"])
    names: dict[tuple[str, str], str] = {}
    for adapter in REGISTRY:
        given = looking.given(adapter.agent)
        if given != [] and ids.get(adapter.agent):
            found = adapter.project_names(given, ids[adapter.agent])
            names.update(((adapter.agent, session_id), name) for session_id, name in found.items())
    return names
