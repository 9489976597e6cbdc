"""Claude Code as every command sees it (agents/protocol.py): its transcripts under its roots, measured by
many.py with the rows cache, a session found by id or path, a backup of a session passed over for the file
it copies."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import cast

from xshare.agents.claude_code import transcript as claude
from xshare.agents.claude_code.many import copy_source, find_sessions, measure_claude, measure_session, read_file
from xshare.agents.common import recognise
from xshare.agents.common.counting import TokenCounter
from xshare.agents.protocol import Adapter, Ambiguous, Found, Gathered, Looking
from xshare.measure.row import SessionRow
from xshare.measure.tokens import TokenizerChoice


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
            only_id = cast(SessionRow, {"id": file.session_id})  # the page measures the rest from `transcript`
            return Found(self.agent, only_id, Counter(), file.path, transcript=file)
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


ADAPTER = ClaudeCode()
_CHECKED: Adapter = ADAPTER  # mypy holds it to the protocol (the registry checks only names)
