"""Claude Code as every command sees it (agents/protocol.py): its transcripts under its roots, measured by
many.py with the rows cache, a session found by id or path, a backup of a session passed over for the file
it copies; its pages' sessions with their subagents' (pages.py), its live state (the hook's).

The adapter remembers what its last measure found of copies (the calls a file holds that an earlier one bills,
the files that only copy another's session), so the detailed reads after it (pages, habits) leave out what the
report left out."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from xshare.agents.claude_code import copies
from xshare.agents.claude_code import files as claude  # discovery: the reader is imported only to read
from xshare.agents.claude_code.files import any_transcript, describe_reached
from xshare.agents.claude_code.many import copy_source, find_sessions, measure_claude, measure_session, read_file
from xshare.agents.claude_code.pages import children_by_parent, most_recent, session_found
from xshare.agents.claude_code.projects import project_names
from xshare.agents.claude_code.recognise import recognises
from xshare.agents.common.counting import LazyCounter, TokenCounter
from xshare.agents.common.measured import Measured
from xshare.agents.protocol import Adapter, Ambiguous, Found, Gathered, Looking
from xshare.measure.ids import path_key
from xshare.measure.row import SessionRow


class ClaudeCode:
    agent, name, flag = claude.AGENT, "Claude Code", "claude_root"
    origin_label, turn_markers = "", True
    tools = None  # its tool names are measure/classify.py's

    def __init__(self) -> None:
        self.last: Measured | None = None  # the last measure's copies, of the files it was given:
        self.measured: frozenset[str] = frozenset()  # their path keys (a file not among them: worked out)

    def _remember(self, files: list[claude.TranscriptFile], result: Measured) -> None:
        self.last, self.measured = result, frozenset(path_key(file.path) for file in files)

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
        return recognises(path)

    def read(self, path: Path, counter: TokenCounter, problems: Counter,
             ledgers: dict | None = None) -> list[SessionRow]:
        transcript = read_file(claude.describe(path), counter, detail=ledgers is not None)
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
        result = measure_claude(files, looking.counter, since=looking.since, use_cache=looking.use_cache)
        self._remember(files, result)
        result.problems.update(skipped)
        return Gathered(result.rows, result.problems, result.tokenizer, bool(files),
                        [f"Claude Code transcripts under {root}" for root in roots])

    def session_ids(self, looking: Looking) -> list[str]:
        if looking.given(self.agent) == []:
            return []
        return [file.session_id for file in claude.discover(self.roots(looking.given(self.agent)))]

    def _found(self, file: claude.TranscriptFile, looking: Looking, problems: Counter, detail: bool) -> Found:
        """The session of this transcript; a file that only copies another's session (a backup) answers with
        that file's, said on stderr, as the report counts it there."""
        roots = self.roots(looking.given(self.agent))
        if detail:  # measured as its page shows it, its subagents' files beside it
            file = _original(file, looking.counter, roots, problems)
            files = claude.discover(roots)
            found = session_found(file, {"id": file.session_id}, files,  # type: ignore[typeddict-item]
                                  children_by_parent(files).get(file.session_id, []))
            return self._detail(found, file, looking.counter, problems, copied=None)
        transcript, row, trouble = measure_session(file, looking.counter, roots=roots)
        if transcript.copies.copied and not transcript.ledger.calls:  # no call of its own: a copy?
            original = _original(file, looking.counter, roots, problems)
            if original != file:
                transcript, row, trouble = measure_session(original, looking.counter, roots=roots)
                file = original
        problems.update(trouble)
        return Found(self.agent, row, Counter(trouble), file.path)

    def find(self, session_id: str, looking: Looking, problems: Counter,
             detail: bool = False) -> Found | Ambiguous | None:
        """A backup of the session's transcript (beside it, or in another root) is passed over for the file it
        copies; two files of one id that each bill calls of their own are refused, as other agents' are."""
        if looking.given(self.agent) == []:
            return None
        files = find_sessions(session_id, looking.given(self.agent))
        if len(files) > 1:
            roots = self.roots(looking.given(self.agent))
            files = [file for file in files if copy_source(file, looking.counter, roots) is None] or files[:1]
        if len(files) > 1:
            return Ambiguous(session_id, [f"{session_id} ({self.agent}, in {file.path})" for file in files], "same id")
        return self._found(files[0], looking, problems, detail) if files else None

    def project_names(self, given: list[str] | None, session_ids: list[str]) -> dict[str, str]:
        return project_names(self.roots(given), session_ids)

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        return self._found(claude.describe(path.resolve()), looking, problems, detail)

    def has_records(self, place: str) -> bool:
        """A project folder named beside its projects/ holds transcripts measured through the other root, though,
        named alone, they lie outside any project folder: not a typo."""
        folder = Path(place).expanduser()
        return (any_transcript(self.roots([place]))
                or (folder.is_dir() and next(folder.rglob("*.jsonl"), None) is not None))

    def holds(self, path: Path, given: list[str] | None) -> str | None:
        """A `.jsonl` inside a projects folder would be read as a transcript, if it is not one already."""
        if path.suffix != ".jsonl":
            return None
        for root in claude.default_roots() + [claude.resolve_root(root) for root in given or []]:
            if path.is_relative_to(os.path.realpath(root)):
                return f"it is inside Claude Code's projects folder {root}, where transcripts live"
        return None

    def live(self, session_id: str, looking: Looking) -> SessionRow | None:
        """The hook's state of the session (only when no folder of its was named: the state is of the default ones)."""
        if looking.given(self.agent) is not None:
            return None
        from xshare.agents.claude_code.live_state import live_row  # the hook's state; only `session` asks

        return live_row(session_id, looking.choice)

    def _copied(self, file: claude.TranscriptFile) -> frozenset[int] | None:
        """The calls of this file an earlier one bills, as the last measure found (None: work them out)."""
        key = path_key(file.path)
        return self.last.copied.get(key, frozenset()) if self.last and key in self.measured else None

    def _detail(self, found: Found, file: claude.TranscriptFile, counter: LazyCounter, problems: Counter,
                copied: frozenset[int] | None) -> Found:
        transcript, row, trouble = measure_session(file, counter, detail=True, copied=copied)
        problems.update(trouble)
        return Found(self.agent, row, Counter(trouble), found.path, transcript.ledger, found.children,
                     found.parent, found.sources)

    def detail(self, found: Found, looking: Looking, problems: Counter) -> Found | None:
        if found.path is None:
            return None
        file = describe_reached(found.path)
        return self._detail(found, file, looking.counter, problems, self._copied(file))

    def listed(self, looking: Looking, problems: Counter) -> Iterator[Found]:
        """Every transcript's session but those that copy another's, measured (the rows cache) and not yet in
        detail: a page of it that is current is kept."""
        if looking.given(self.agent) == []:
            return
        files = claude.discover(self.roots(looking.given(self.agent)))
        measured = measure_claude(files, looking.counter, use_cache=looking.use_cache)
        self._remember(files, measured)
        problems.update(measured.problems)
        rows = {row["id"]: row for row in measured.rows}
        children = children_by_parent(files)
        for file in files:
            row = rows.get(file.session_id)
            if row is None or path_key(file.path) in measured.copy_files:
                continue  # it vanished or could not be read (counted as a problem), or it copies another's session
            yield session_found(file, row, files, children.get(file.session_id, []))

    def latest(self, looking: Looking, problems: Counter) -> Found | None:
        if looking.given(self.agent) == []:
            return None
        files = claude.discover(self.roots(looking.given(self.agent)))
        recent = most_recent(files)
        if not recent:
            return None
        when, file = recent[0]
        return session_found(file, {"id": file.session_id, "last_activity": when or None},  # type: ignore[typeddict-item]
                             files, children_by_parent(files).get(file.session_id, []))

    def detailed_files(self, looking: Looking) -> list[Path]:
        copies = self.last.copy_files if self.last else frozenset()
        return [path for path in self.discover(looking.given(self.agent)) if path_key(path) not in copies]

    def read_detail(self, path: Path, looking: Looking, problems: Counter,
                    wanted: set[str] | None = None) -> list[Found] | None:
        file = claude.describe(path)
        if wanted is not None and file.session_id not in wanted:
            return None
        found = Found(self.agent, {"id": file.session_id}, path=path)  # type: ignore[typeddict-item]
        return [self._detail(found, file, looking.counter, problems, self._copied(file) or frozenset())]

    def measure_in_parts(self, looking: Looking, part_bytes: int) -> None:
        """A few whole project folders at a time, each part's rows cached at once (a copied call is settled within
        its project: copies.py), then all of them together from the cache."""
        projects: dict[Path | None, list[claude.TranscriptFile]] = {}
        for file in claude.discover(self.roots(looking.given(self.agent))):
            projects.setdefault(copies.project_folder(file.path), []).append(file)
        part: list[claude.TranscriptFile] = []
        size = 0
        for files in projects.values():
            part += files
            size += sum(_size(file.path) for file in files)
            if size >= part_bytes:
                measure_claude(part, looking.counter, workers=1)
                part, size = [], 0
        if part:
            measure_claude(part, looking.counter, workers=1)
        self.measure(looking)


def _original(file: claude.TranscriptFile, counter: LazyCounter, roots: list[Path],
              problems: Counter) -> claude.TranscriptFile:
    """The transcript whose session this one copies, said on stderr; itself when it is a session."""
    source = copy_source(file, counter, roots)
    if source is None:
        return file
    problems[f"{file.path} only copies the session of {source.path}: shown as that file"] += 1
    return source


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


ADAPTER = ClaudeCode()
_CHECKED: Adapter = ADAPTER  # mypy holds it to the protocol (the registry checks only names)
