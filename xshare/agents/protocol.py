"""The one shape every agent's adapter has (sessions/registry.py holds the six): what the report, `session`,
`html` and `collect` ask of an agent, so none of them branches per agent.

An adapter knows its agent's records: where they lie by default, which files hold them, how to tell one
of its files by its content (never its name), how to read a session into the one ledger, and how to find
a session by id. How its rows are cached and spread over processes is its own business.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.stated import read_stated
from xshare.measure.row import SessionRow
from xshare.measure.tokens import TokenizerChoice

Homes = dict[str, "list[str] | None"]  # by agent: the folders or databases named (None: the defaults; []: none)


@dataclass(frozen=True)
class Looking:
    """What a command asks the adapters for: where to look (by agent), with which tokenizer, since when."""

    homes: Homes
    choice: TokenizerChoice
    since: datetime | None = None
    use_cache: bool = True

    def given(self, agent: str) -> list[str] | None:
        return self.homes.get(agent)


@dataclass
class Found:
    """One session found: its row, the ledger it was replayed into (when asked for detail), where it came
    from and what could not be read."""

    agent: str
    row: SessionRow
    problems: Counter = field(default_factory=Counter)  # its own file's (its page lists them)
    path: Path | None = None
    ledger: Any = None
    transcript: Any = None  # Claude Code's TranscriptFile: its page is measured with its subagents' files


@dataclass
class Gathered:
    """An agent's sessions measured: rows (a list, or Claude Code's packed rows), the problems met, the
    tokenizer that counted them (an unusable vocabulary falls back), whether any record was found (None:
    not said), where it looked, the calls each file holds that an earlier one bills, and the files that only
    copy another's session, which have no row (Claude Code)."""

    rows: Any
    problems: Counter
    tokenizer: TokenizerChoice
    found: bool | None
    looked_in: list[str]
    copied: dict = field(default_factory=dict)
    copy_files: frozenset = frozenset()


@dataclass
class Ambiguous:
    """An id prefix (or a database's path, or an id two files hold) that names more than one session: the
    candidates, as git lists them."""

    wanted: str
    candidates: list[str]
    # "prefix"; "subagents": a prefix no session's own id starts with, only subagents' whose session is gone;
    # "same id": one id in several files or databases (a copy, a resume written to a second file)
    why: str = "prefix"


@runtime_checkable
class Adapter(Protocol):
    """One agent, as every command sees it."""

    agent: str  # the rows' agent ("claude-code", "hermes", "codex", ...)
    name: str  # shown in the report's header and messages ("Claude Code")
    flag: str  # the CLI option's dest (--codex-home -> codex_home)
    kind: str  # "transcripts" (a session's file, its subagents' beside it), "files" (one session a file), "database"
    origin_label: str  # before the path a page says it was read from ("Hermes ")
    turn_markers: bool  # whether its records mark the person's turns (the page draws them)

    def default_homes(self) -> list[Path]:
        """Where the agent keeps its records when the user names none."""

    def describe(self, given: list[str] | None) -> list[str]:
        """Where it looked, for stderr when nothing is found."""

    def discover(self, given: list[str] | None) -> list[Path]:
        """The files (or databases) holding its sessions."""

    def unread(self, given: list[str] | None) -> list[str]:
        """What is there but not read (problems for stderr)."""

    def recognises(self, path: Path) -> bool:
        """A file of this agent's, by its content."""

    def read(self, path: Path, counter: TokenCounter, problems: Counter,
             ledgers: dict | None = None) -> list[SessionRow]:
        """Every session's row in one of its files, replayed into the ledger and counted with the caller's
        counter (with `ledgers`, their ledgers by id)."""

    def measure(self, looking: Looking) -> Gathered | None:
        """Every session's row (cached where it can); None when the user asked for none of its sessions."""

    def session_ids(self, looking: Looking) -> list[str]:
        """The ids of its sessions (for an id prefix)."""

    def find(self, session_id: str, looking: Looking, problems: Counter,
             detail: bool = False) -> Found | Ambiguous | None:
        """The session with this exact id (with `detail`, its ledger too); None if no file holds it, Ambiguous
        ("same id") if several do. What went wrong on the way is added to `problems`."""

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        """The session a file of this agent's holds (a database holding several: Ambiguous)."""


def sniff(path: Path, size: int = 1 << 16) -> bytes:
    """A file's first bytes, for telling whose it is (b"" when it cannot be read)."""
    try:  # a FIFO is refused, not waited on; a file that never ends is read to its stated size
        return read_stated(path, size)
    except OSError:
        return b""


def first_record(head: bytes) -> dict | None:
    """The first non-empty line of a JSON Lines head, as an object (None when it is not one)."""
    import json  # only when a path is given: the hot paths never tell files apart

    line = next((line for line in head.splitlines() if line.strip()), b"")
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
