"""Every agent's sessions on this machine, measured: Claude Code's transcripts (sessions/claude_code.py),
Hermes's databases and the four other agents' files (sessions/agents.py), one `Measured` for the report."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path

from xshare.measure import tokens as tokenizers
from xshare.sessions import counter
from xshare.sessions.agents import measure_agents, measure_hermes
from xshare.sessions.claude_code import measure_claude
from xshare.sessions.measured import Measured
from xshare.sources.claude import transcript as claude
from xshare.sources.hermes import state_db as hermes


def measure_all(
    claude_roots: list[str] | None,
    choice: tokenizers.TokenizerChoice,
    since: datetime | None = None,
    use_cache: bool = True,
    hermes_dbs: list[str] | None = None,
    agent_homes: dict[str, list[str] | None] | None = None,
) -> Measured:
    """Every agent's sessions on this machine (or under the roots and databases given; hermes_dbs=[]: none)."""
    roots = [claude.resolve_root(root) for root in claude_roots] if claude_roots else claude.default_roots()
    skipped: Counter = Counter()
    files = claude.discover(roots, skipped)
    result = measure_claude(files, choice, since=since, use_cache=use_cache)
    result.problems.update(skipped)
    result.sources["Claude Code"] = "read" if files else "not found"
    result.looked_in += [f"Claude Code transcripts under {root}" for root in roots]
    if hermes_dbs is None:
        databases = hermes.default_databases()
        result.looked_in.append("Hermes state.db in $HERMES_HOME or ~/.hermes, and ~/.hermes/profiles/*")
    else:
        databases = [Path(path).expanduser() for path in hermes_dbs]
        result.looked_in += [f"Hermes state.db at {path}" for path in databases]
    if databases:
        rows, problems = measure_hermes(databases, result.tokenizer or choice, since, use_cache)
        result.rows += rows
        result.problems.update(problems)
        if counter.current():
            result.tokenizer = counter.current().choice  # the vocabulary may have proved unusable on load
    if hermes_dbs != []:  # an explicit empty list (the demo) looks for no Hermes database at all
        result.sources["Hermes"] = "read" if any(path.is_file() for path in databases) else "not found"
    measure_agents(result, agent_homes, since, use_cache)
    return result
