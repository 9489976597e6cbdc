"""The adapter of an agent whose reader is one module of plain functions (Codex CLI, Gemini CLI, OpenCode,
OpenClaw: the shape in agents/protocol.py), and the helpers every adapter uses to answer with one session."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType

from xshare.agents.common import file_rows
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.whole_files import WholeFiles
from xshare.agents.protocol import Adapter, Ambiguous, Found, Gathered, Looking
from xshare.measure.ids import normal_id
from xshare.measure.row import SessionRow
from xshare.measure.tool_tables import ToolTable


def one_session(agent: str, path: Path, rows: list[SessionRow], problems: Counter,
                ledgers: dict) -> Found | Ambiguous | None:
    """The session a file holds: the one row, or the candidates when it holds several (a database)."""
    if len(rows) > 1:
        return Ambiguous(str(path), sorted(row["id"] for row in rows))
    if not rows:
        return None
    return Found(agent, rows[0], problems, path, ledgers.get(rows[0]["id"]))


def only_one(session_id: str, held: list[Found]) -> Found | Ambiguous | None:
    """The one session an id names, or the files holding it when there are several."""
    if len(held) > 1:
        return Ambiguous(session_id, [f"{session_id} ({found.agent}, in {found.path})" for found in held], "same id")
    return held[0] if held else None


def read_one(adapter: Adapter, path: Path, looking: Looking, problems: Counter) -> Found | Ambiguous | None:
    """The session a file of the adapter's holds, read whole (its problems added to `problems`)."""
    found: Counter = Counter()
    ledgers: dict = {}
    rows = adapter.read(path, looking.counter.made(), found, ledgers)
    problems.update(found)
    return one_session(adapter.agent, path, rows, found, ledgers)



class FileAgent(WholeFiles):
    """Codex CLI, Gemini CLI, OpenCode and OpenClaw: one shape, their reader modules (agents/<name>/reader.py)."""

    origin_label, turn_markers = "", False

    def __init__(self, reader: ModuleType, recognises: Callable[[Path], bool], tools: ToolTable,
                 project_names: Callable[[list[Path], list[str]], dict[str, str]] | None = None) -> None:
        self.reader = reader
        self.tools = tools
        self._project_names = project_names  # agents/<name>/projects.py, where its records say the project
        self.agent, self.name, self.flag = reader.AGENT, reader.NAME, reader.FLAG
        self._recognises = recognises

    def homes(self, given: list[str] | None) -> list[Path]:
        return [Path(home).expanduser() for home in given] if given else self.reader.default_homes()

    def default_homes(self) -> list[Path]:
        return self.reader.default_homes()

    def describe(self, given: list[str] | None) -> list[str]:
        return self.reader.describe(self.homes(given))

    def discover(self, given: list[str] | None) -> list[Path]:
        return self.reader.discover(self.homes(given))

    def unread(self, given: list[str] | None) -> list[str]:
        return getattr(self.reader, "unread", lambda _: [])(self.homes(given))

    def recognises(self, path: Path) -> bool:
        return self._recognises(path)

    def read(self, path: Path, counter: TokenCounter, problems: Counter,
             ledgers: dict | None = None) -> list[SessionRow]:
        rows = self.reader.read(path, counter, problems, ledgers)
        counter.flush()
        return rows

    def measure(self, looking: Looking) -> Gathered | None:
        given = looking.given(self.agent)
        if given == []:
            return None  # not looked for (the demo)
        homes = self.homes(given)
        problems = Counter(self.unread(given))
        files = self.reader.discover(homes)
        rows: list[SessionRow] = []
        if files:
            rows, more = file_rows.measure_agent(self.reader, files, looking)
            problems.update(more)
        return Gathered(rows, problems, looking.counter.choice, bool(files), self.reader.describe(homes))

    def session_ids(self, looking: Looking) -> list[str]:
        gathered = self.measure(replace(looking, since=None))
        return [row["id"] for row in gathered.rows] if gathered else []

    def find(self, session_id: str, looking: Looking, problems: Counter,
             detail: bool = False) -> Found | Ambiguous | None:
        """Files whose name holds the id are read first, every one of them: two holding the id (two homes named
        holding one session) are refused, not one picked; the files of one session in one folder give one row
        (a reader's `session_file`). Its page lists its own file's problems."""
        given = looking.given(self.agent)
        if given == []:
            return None
        session_id = normal_id(session_id)  # rows' ids are
        files = self.discover(given)
        likely = [path for path in files if session_id in path.name or session_id[:8] in path.name]
        held: list[Found] = []
        for path in likely + [path for path in files if path not in likely]:
            if held and path not in likely:
                break  # a file not named for it is read only while none named for it held it
            found: Counter = Counter()
            ledgers: dict = {}
            rows = self.read(path, looking.counter.made(), found, ledgers)
            problems.update(found)
            row = next((row for row in rows if row["id"] == session_id), None)
            if row is not None:
                held.append(Found(self.agent, row, found, path, ledgers.get(session_id)))
        return only_one(session_id, held)

    def project_names(self, given: list[str] | None, session_ids: list[str]) -> dict[str, str]:
        return self._project_names(self.discover(given), session_ids) if self._project_names else {}

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        """A file whose session another file's row holds (a rotated copy beside its live file, a chat continued
        in a later file) answers with that row, said on stderr."""
        holder = self.reader.session_file(path) if hasattr(self.reader, "session_file") else path
        if holder.name != path.name:
            problems[f"{path} holds part of the session of {holder}: shown as that file"] += 1
        return read_one(self, holder, looking, problems)
