"""The registry of the other agents' adapters, so the session measurer and the CLI need no branch per agent.

Each adapter module exposes AGENT (the rows' agent), NAME (for the report's header), FLAG (the CLI
option's dest, e.g. codex_home), KIND ("files": one session per file, cached by size and mtime;
"database": many sessions per file, cached by the file's and its -wal's stamp), default_homes(),
describe(homes) (where it looked, for stderr), discover(homes) -> files, and
read(file, count, tokenizer, problems, ledgers=None) -> rows; optionally unread(homes) -> problems (what
is there but not read).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from xshare.sources import codex, gemini, openclaw, opencode

ADAPTERS: tuple[ModuleType, ...] = (codex, gemini, opencode, openclaw)
BY_AGENT = {adapter.AGENT: adapter for adapter in ADAPTERS}


def homes_given(options: object) -> dict[str, list[str] | None]:
    """--codex-home, --gemini-home, ... by agent, from parsed options (None: the agent's default homes)."""
    return {adapter.AGENT: getattr(options, adapter.FLAG, None) for adapter in ADAPTERS}


def homes(adapter: ModuleType, given: list[str] | None) -> list[Path]:
    """The folders (or databases) the user named, else the agent's documented defaults."""
    return [Path(home).expanduser() for home in given] if given else adapter.default_homes()
