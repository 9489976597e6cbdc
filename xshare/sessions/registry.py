"""The one registry of agents: each line of the agents' table (agents/table.py) with its adapter
(agents/<name>/adapter.py, the shape agents/protocol.py), checked at import, and a session found among them
by path (told by its content), id, or unique id prefix (as git does: a prefix several sessions share is
refused with the candidates). `report`, `collect`, `session` and `html` reach every agent through here
(sessions/every_agent.py measures them all)."""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path
from typing import cast

from xshare.agents.protocol import Adapter, Ambiguous, Found, Looking
from xshare.agents.table import AGENTS, AgentLine
from xshare.measure.ids import normal_id


def _adapter(line: AgentLine) -> Adapter:
    adapter = importlib.import_module(line.adapter).ADAPTER
    for what in ("agent", "name", "flag"):
        if getattr(adapter, what) != getattr(line, what):
            raise ValueError(f"{line.adapter}: its {what} {getattr(adapter, what)!r} is not its table line's")
    check((adapter,))
    return adapter


class Listed:
    """An agent's adapter known by its table line: its names without importing it, the rest from the adapter,
    imported (and checked) the first time it is asked for; a report on one agent's folders imports no other
    agent's reader (a tenth of a warm report's start-up)."""

    def __init__(self, line: AgentLine) -> None:
        self.line, self.agent, self.name, self.flag = line, line.agent, line.name, line.flag
        self.loaded: Adapter | None = None

    def __getattr__(self, what: str):  # only for what the table line does not give
        if what.startswith("__") or what in ("line", "loaded"):  # copy and pickle ask before __init__ ran
            raise AttributeError(what)
        if self.loaded is None:
            self.loaded = _adapter(self.line)
        return getattr(self.loaded, what)

    def __repr__(self) -> str:
        return f"Listed({self.line.adapter})"


# the report's order (its sources line, its rows); Claude Code's test of a file is the loosest, asked last
REGISTRY: tuple[Adapter, ...] = tuple(cast(Adapter, Listed(line)) for line in AGENTS)
BY_AGENT: dict[str, Adapter] = {adapter.agent: adapter for adapter in REGISTRY}
FLAGS: tuple[str, ...] = tuple(adapter.flag for adapter in REGISTRY)


def check(adapters: tuple[Adapter, ...]) -> None:
    """Every adapter has the whole shape, and no two share an agent, a name or a flag."""
    for adapter in adapters:
        if not isinstance(adapter, Adapter):
            raise TypeError(f"{adapter!r} lacks part of the adapter protocol (agents/protocol.py)")
    distinct(adapters)


def distinct(adapters: tuple[Adapter, ...]) -> None:
    """No two adapters share an agent, a name or a flag (asked of their names only: nothing is imported)."""
    for what in ("agent", "name", "flag"):
        values = [getattr(adapter, what) for adapter in adapters]
        if len(set(values)) != len(values):
            raise ValueError(f"two adapters share an {what}: {values}")


distinct(REGISTRY)


def names() -> str:
    """"Claude Code, Hermes, ... or OpenClaw", for messages."""
    all_names = [adapter.name for adapter in REGISTRY]
    return ", ".join(all_names[:-1]) + " or " + all_names[-1]


def owner(path: Path) -> Adapter | None:
    """The agent whose file this is, by its content."""
    return next((adapter for adapter in reversed(REGISTRY) if adapter.recognises(path)), None)


def find(wanted: str, looking: Looking, problems: Counter, detail: bool = False) -> Found | Ambiguous | None:
    """A session by the path of its file, its id, or a unique prefix of its id; what went wrong on the way
    is added to `problems`."""
    path = Path(wanted).expanduser()
    if path.is_file():
        adapter = owner(path)
        return adapter.find_path(path, looking, problems, detail) if adapter else None
    for adapter in REGISTRY:
        found = adapter.find(wanted, looking, problems, detail)
        if found is not None:
            return found
    full = complete(wanted, looking)
    if isinstance(full, tuple):
        return BY_AGENT[full[0]].find(full[1], looking, problems, detail)
    return full


def complete(prefix: str, looking: Looking) -> tuple[str, str] | Ambiguous | None:
    """The (agent, id) of the one session whose id starts with `prefix`. A prefix names a session before its
    subagents (session/agent), as `sessions` shows them; only where no session's own id matches (its main
    transcript is gone, only its subagents' remain) do the subagents whose id it starts answer, as git
    answers a prefix: one is the session, several are listed."""
    prefix = normal_id(prefix)
    if not prefix:
        return None
    matches = sorted({(adapter.agent, session_id) for adapter in REGISTRY
                      if looking.given(adapter.agent) != [] for session_id in adapter.session_ids(looking)
                      if session_id.startswith(prefix)})
    named = [match for match in matches if "/" not in match[1]] or matches
    if len(named) > 1:
        return Ambiguous(prefix, [f"{session_id} ({agent})" for agent, session_id in named],
                         "subagents" if all("/" in session_id for _, session_id in named) else "prefix")
    return named[0] if named else None
