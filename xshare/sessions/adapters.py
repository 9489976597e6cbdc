"""The six agents' adapters (the shape: sources/adapter.py; the registry: sessions/registry.py). Each wraps its
agent's reader in sources/ and its own way of measuring many sessions: Claude Code's rows cache and parallel
workers (sessions/claude_code.py), Hermes's database cache and the four others' file cache
(sessions/agent_rows.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import ModuleType

from xshare.measure.ids import normal_id
from xshare.measure.tokens import TokenizerChoice
from xshare.sessions import agent_rows, counter
from xshare.sessions.claude_code import copy_source, find_sessions, measure_claude, measure_session, read_file
from xshare.sources import recognise
from xshare.sources.adapter import Ambiguous, Found, Gathered, Looking
from xshare.sources.claude import transcript as claude
from xshare.sources.hermes import state_db as hermes


def _one(agent: str, path: Path, rows: list[dict], problems: Counter, ledgers: dict) -> Found | Ambiguous | None:
    """The session a file holds: the one row, or the candidates when it holds several (a database)."""
    if len(rows) > 1:
        return Ambiguous(str(path), sorted(row["id"] for row in rows))
    if not rows:
        return None
    return Found(agent, rows[0], problems, path, ledgers.get(rows[0]["id"]))


def _only(session_id: str, held: list[Found]) -> Found | Ambiguous | None:
    """The one session an id names, or the files holding it when there are several."""
    if len(held) > 1:
        return Ambiguous(session_id, [f"{session_id} ({found.agent}, in {found.path})" for found in held], "same id")
    return held[0] if held else None


def _read_one(adapter: Hermes | FileAgent, path: Path, looking: Looking, problems: Counter) -> Found | Ambiguous | None:
    """The session a file of the adapter's holds, read whole (its problems added to `problems`)."""
    found: Counter = Counter()
    ledgers: dict = {}
    rows = adapter.read(path, looking.choice, found, ledgers)
    problems.update(found)
    return _one(adapter.agent, path, rows, found, ledgers)


class ClaudeCode:
    agent, name, flag, kind = claude.AGENT, "Claude Code", "claude_root", "transcripts"
    origin_label, turn_markers = "", True

    def default_homes(self) -> list[Path]:
        return claude.default_roots()

    def roots(self, given: list[str] | None) -> list[Path]:
        return [claude.resolve_root(root) for root in given] if given else claude.default_roots()

    def describe(self, given: list[str] | None) -> list[str]:
        return [f"Claude Code transcripts under {root}" for root in self.roots(given)]

    def discover(self, given: list[str] | None) -> list[Path]:
        return [file.path for file in claude.discover(self.roots(given))]

    def unread(self, given: list[str] | None) -> list[str]:
        return []

    def recognises(self, path: Path) -> bool:
        return recognise.claude(path)

    def read(self, path: Path, choice: TokenizerChoice, problems: Counter, ledgers: dict | None = None) -> list[dict]:
        counter.use(choice)
        transcript = read_file(claude.describe(path), detail=ledgers is not None)
        counter.flush()
        problems.update(transcript.problems)
        row = transcript.row()
        if ledgers is not None:
            ledgers[row["id"]] = transcript.ledger
        return [row]

    def measure(self, looking: Looking) -> Gathered | None:
        if looking.given(self.agent) == []:
            return None  # not looked for: other agents' folders were named, and a report on them is on those alone
        roots = self.roots(looking.given(self.agent))
        skipped: Counter = Counter()
        files = claude.discover(roots, skipped)
        result = measure_claude(files, looking.choice, since=looking.since, use_cache=looking.use_cache)
        result.problems.update(skipped)
        return Gathered(result.rows, result.problems, result.tokenizer, bool(files),
                        [f"Claude Code transcripts under {root}" for root in roots], result.copied,
                        result.copy_files)

    def session_ids(self, looking: Looking) -> list[str]:
        if looking.given(self.agent) == []:
            return []
        return [file.session_id for file in claude.discover(self.roots(looking.given(self.agent)))]

    def _found(self, file: claude.TranscriptFile, looking: Looking, problems: Counter, detail: bool) -> Found:
        """The session of this transcript; a file that only copies another's session (a backup) answers with
        that file's, said on stderr, as the report counts it there."""
        roots = self.roots(looking.given(self.agent))
        if detail:  # its page measures it (and its subagents' files) itself: html/write.py
            file = _original(file, looking.choice, roots, problems)
            return Found(self.agent, {"id": file.session_id}, Counter(), file.path, transcript=file)
        transcript, row, trouble = measure_session(file, looking.choice, roots=roots)
        if transcript.copies.copied and not transcript.ledger.calls:  # no call of its own: a copy?
            original = _original(file, looking.choice, roots, problems)
            if original != file:
                transcript, row, trouble = measure_session(original, looking.choice, roots=roots)
                file = original
        problems.update(trouble)
        return Found(self.agent, row, Counter(trouble), file.path, transcript=file)

    def find(self, session_id: str, looking: Looking, problems: Counter,
             detail: bool = False) -> Found | Ambiguous | None:
        """A backup of the session's transcript (beside it, or in another root) is passed over for the file it
        copies; two files of one id that each bill calls of their own are refused, as other agents' are."""
        if looking.given(self.agent) == []:
            return None
        files = find_sessions(session_id, looking.given(self.agent))
        if len(files) > 1:
            roots = self.roots(looking.given(self.agent))
            files = [file for file in files if copy_source(file, looking.choice, roots) is None] or files[:1]
        if len(files) > 1:
            return Ambiguous(session_id, [f"{session_id} ({self.agent}, in {file.path})" for file in files], "same id")
        return self._found(files[0], looking, problems, detail) if files else None

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        return self._found(claude.describe(path.resolve()), looking, problems, detail)


def _original(file: claude.TranscriptFile, choice: TokenizerChoice, roots: list[Path],
              problems: Counter) -> claude.TranscriptFile:
    """The transcript whose session this one copies, said on stderr; itself when it is a session."""
    source = copy_source(file, choice, roots)
    if source is None:
        return file
    problems[f"{file.path} only copies the session of {source.path}: shown as that file"] += 1
    return source


class Hermes:
    agent, name, flag, kind = hermes.AGENT, "Hermes", "hermes_db", "database"
    origin_label, turn_markers = "Hermes ", False  # its records mark no turn (its ledger spreads the bill)

    def default_homes(self) -> list[Path]:
        return hermes.default_databases()

    def databases(self, given: list[str] | None) -> list[Path]:
        return [Path(path).expanduser() for path in given] if given is not None else hermes.default_databases()

    def describe(self, given: list[str] | None) -> list[str]:
        if given is None:
            return ["Hermes state.db in $HERMES_HOME or ~/.hermes, and ~/.hermes/profiles/*"]
        return [f"Hermes state.db at {path}" for path in self.databases(given)]

    def discover(self, given: list[str] | None) -> list[Path]:
        return [path for path in self.databases(given) if path.is_file()]

    def unread(self, given: list[str] | None) -> list[str]:
        return []

    def recognises(self, path: Path) -> bool:
        return recognise.hermes(path)

    def read(self, path: Path, choice: TokenizerChoice, problems: Counter, ledgers: dict | None = None) -> list[dict]:
        current = counter.use(choice)
        rows = hermes.read_database(path, current.count, current.name, problems, ledgers=ledgers)
        counter.flush()
        return rows

    def measure(self, looking: Looking) -> Gathered:
        given = looking.given(self.agent)
        databases = self.databases(given)
        rows: list[dict] = []
        problems: Counter = Counter()
        tokenizer = looking.choice
        if databases:
            rows, problems = agent_rows.measure_hermes(databases, tokenizer, looking.since, looking.use_cache)
            tokenizer = counter.current().choice if counter.current() else tokenizer
        found = None if given == [] else any(path.is_file() for path in databases)
        return Gathered(rows, problems, tokenizer, found, self.describe(given))

    def session_ids(self, looking: Looking) -> list[str]:
        rows, _ = agent_rows.measure_hermes(self.discover(looking.given(self.agent)), looking.choice,
                                            use_cache=looking.use_cache)
        return [row["id"] for row in rows]

    def find(self, session_id: str, looking: Looking, problems: Counter,
             detail: bool = False) -> Found | Ambiguous | None:
        """Every database is asked (read-only): two holding the id are refused, not one picked; none named
        (the demo): not looked for."""
        given = looking.given(self.agent)
        if given == []:
            return None
        held: list[Found] = []
        for path in self.databases(given):
            if not path.is_file():
                problems[f"Hermes database {path} not found"] += 1
                continue
            found: Counter = Counter()
            ledgers: dict | None = {} if detail else None
            current = counter.use(looking.choice)
            rows = hermes.read_database(path, current.count, current.name, found, only=session_id, ledgers=ledgers)
            counter.flush()
            problems.update(found)
            if rows:
                held.append(Found(self.agent, rows[0], found, path, (ledgers or {}).get(session_id)))
        return _only(session_id, held)

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        return _read_one(self, path, looking, problems)


class FileAgent:
    """Codex CLI, Gemini CLI, OpenCode and OpenClaw: one shape, their reader modules in sources/."""

    origin_label, turn_markers = "", False

    def __init__(self, reader: ModuleType, recognises) -> None:
        self.reader = reader
        self.agent, self.name, self.flag = reader.AGENT, reader.NAME, reader.FLAG
        self.kind = reader.KIND
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

    def read(self, path: Path, choice: TokenizerChoice, problems: Counter, ledgers: dict | None = None) -> list[dict]:
        current = counter.use(choice)
        rows = self.reader.read(path, current.count, current.name, problems, ledgers)
        counter.flush()
        return rows

    def measure(self, looking: Looking) -> Gathered | None:
        given = looking.given(self.agent)
        if given == []:
            return None  # not looked for (the demo)
        homes = self.homes(given)
        problems = Counter(self.unread(given))
        files = self.reader.discover(homes)
        rows: list[dict] = []
        tokenizer = looking.choice
        if files:
            rows, more = agent_rows.measure_agent(self.reader, files, tokenizer, looking.since, looking.use_cache)
            problems.update(more)
            tokenizer = counter.current().choice if counter.current() else tokenizer
        return Gathered(rows, problems, tokenizer, bool(files), self.reader.describe(homes))

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
            rows = self.read(path, looking.choice, found, ledgers)
            problems.update(found)
            row = next((row for row in rows if row["id"] == session_id), None)
            if row is not None:
                held.append(Found(self.agent, row, found, path, ledgers.get(session_id)))
        return _only(session_id, held)

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        """A file whose session another file's row holds (a rotated copy beside its live file, a chat continued
        in a later file) answers with that row, said on stderr."""
        holder = self.reader.session_file(path) if hasattr(self.reader, "session_file") else path
        if holder.name != path.name:
            problems[f"{path} holds part of the session of {holder}: shown as that file"] += 1
        return _read_one(self, holder, looking, problems)
