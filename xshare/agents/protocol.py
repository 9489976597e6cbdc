"""The one shape every agent's adapter has (sessions/registry.py holds them, one for each line of
agents/table.py): what the report, `session`, `html` and `collect` ask of an agent, so none of them branches
per agent.

An adapter knows its agent's records: where they lie by default, which files hold them, how to tell one
of its files by its content (never its name), how to read a session into the one ledger, and how to find
a session by id. How its rows are cached and spread over processes is its own business.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from xshare.agents.common.counting import LazyCounter, TokenCounter
from xshare.measure.row import SessionRow
from xshare.measure.tokens import TokenizerChoice

if TYPE_CHECKING:  # for the checker only: the hot paths never load these
    from xshare.agents.common.packed import PackedRows
    from xshare.measure.ledger import Ledger
    from xshare.measure.tool_tables import ToolTable

Homes = dict[str, "list[str] | None"]  # by agent: the folders or databases named (None: the defaults; []: none)


@dataclass(frozen=True)
class Looking:
    """What a command asks the adapters for: where to look (by agent), with which tokenizer, since when; and
    the counter every adapter counts with (made for `choice` when none is given), so the tokenizer is made
    once a request and a fallback to the estimate holds for every agent after it."""

    homes: Homes
    choice: TokenizerChoice
    since: datetime | None = None
    use_cache: bool = True
    counter: LazyCounter = field(default=None, compare=False)  # type: ignore[assignment]  # set below

    def __post_init__(self) -> None:
        if self.counter is None:
            object.__setattr__(self, "counter", LazyCounter(self.choice))  # frozen: set once, here

    def given(self, agent: str) -> list[str] | None:
        return self.homes.get(agent)


@dataclass
class Found:
    """One session found: its row, the ledger it was replayed into (when asked for detail; `Adapter.detail`
    adds it), where it came from and what could not be read; the sessions it ran (subagents: their pages go
    beside its page) and the one that ran it; the files its page is built from, where a page may be kept
    while they are unchanged (its stamp; None: the page is written every time)."""

    agent: str
    row: SessionRow
    problems: Counter = field(default_factory=Counter)  # its own file's (its page lists them)
    path: Path | None = None
    ledger: Ledger | None = None
    children: list[Found] = field(default_factory=list)
    parent: Found | None = None  # its path None when the parent's file is gone
    sources: list[Path] | None = None


@dataclass
class Gathered:
    """An agent's sessions measured: rows (a list, or packed rows), the problems met, the tokenizer that
    counted them (an unusable vocabulary falls back), whether any record was found (None: not said), where
    it looked."""

    rows: list[SessionRow] | PackedRows
    problems: Counter
    tokenizer: TokenizerChoice
    found: bool | None
    looked_in: list[str]


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
    origin_label: str  # before the path a page says it was read from ("Hermes ")
    turn_markers: bool  # whether its records mark the person's turns (the page draws them)

    @property
    def tools(self) -> ToolTable | None:
        """Its tools by category (agents/<name>/tools.py), for `classify --jsonl`; None: judged by
        measure/classify.py."""

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

    def has_records(self, place: str) -> bool:
        """Whether a folder or file the user named holds any of its records (else a warning: a typo?)."""

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

    def project_names(self, given: list[str] | None, session_ids: list[str]) -> dict[str, str]:
        """Session id -> its project's folder name, for those of `session_ids` whose records say it cheaply
        (for `xshare sessions`; none when they don't)."""

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        """The session a file of this agent's holds (a database holding several: Ambiguous)."""

    def detail(self, found: Found, looking: Looking, problems: Counter) -> Found | None:
        """The session found (by `listed`, `latest` or a child's) with its ledger; None if it cannot be read."""

    def listed(self, looking: Looking, problems: Counter) -> Iterator[Found]:
        """Every session as the index lists it, each once (a file that only copies another's session has none),
        with its ledger where reading it gave one (else `detail` adds it); the problems met are said once, here."""

    def latest(self, looking: Looking, problems: Counter) -> Found | None:
        """Its most recently active session (its row's `last_activity` says when), for the bare `html`."""

    def live(self, session_id: str, looking: Looking) -> SessionRow | None:
        """The session's row as the agent's live state holds it (fresher than its records), if it keeps one."""

    def holds(self, path: Path, given: list[str] | None) -> str | None:
        """Why `path` lies among its records (no output file may be written there); None when it does not."""

    def detailed_files(self, looking: Looking) -> list[Path]:
        """Its files whose sessions are read in detail (habits, pages): not those that only copy another's."""

    def read_detail(self, path: Path, looking: Looking, problems: Counter,
                    wanted: set[str] | None = None) -> list[Found] | None:
        """Each session of one of its files with its ledger (None: nothing to keep, as a file holding none of
        the `wanted` ids, where it can tell that before reading)."""

    def measure_in_parts(self, looking: Looking, part_bytes: int) -> None:
        """Its rows cached (the background pass), at most about `part_bytes` of records read at a time where
        it can."""

