"""pi (npm `@earendil-works/pi-coding-agent`, formerly `@mariozechner/pi-coding-agent`): its session files.
Checked against the real pi 1.6.0 run offline (tests/agents/pi/test_realhost.py) and its docs/session-format.md.

Where. The agent folder is $PI_CODING_AGENT_DIR, else ~/.pi/agent; its sessions lie in
`sessions/--<cwd with / as ->--/<time>_<session id>.jsonl` ($PI_CODING_AGENT_SESSION_DIR or `--session-dir`
move them: such a folder is given as a home itself). One file is one session; `--continue`/`--session`
append to it. A fork (`--fork`) is a new file whose header names its `parentSession`, holding the copied
entries: a session of its own, as billed.

What is recorded. The header `{type: session, version: 3, id, timestamp, cwd}` and the entries OpenClaw's
transcripts hold too (agents/common/v3_entries.py: `message` with roles `user`, `assistant` (`toolCall`
parts and `usage`), `toolResult`, `bashExecution`, `custom`; `model_change`, `compaction`, `branch_summary`,
`custom_message` and bookkeeping), plus pi 1.6's own:
- a `system` message (the system prompt's sections and the tools it declares): not replayed, as the first
  call's overhead holds it;
- `usage {kind, usage}` (cache warming, say): a call billed outside the conversation, counted as a call;
- a compaction's `usage`: the calls that wrote its summary (1.6.0 sums them: a turn split by the cut takes
  two requests, without tools), counted as one call before the compaction applies;
- `context_edit {targetId, replacement}`: the target's text leaves the context (null), or is replaced by
  `replacement` (counted as conversation).
An entry type or message role not listed here is counted on stderr as unknown, never read as zero.

Usage. Each assistant message is one API call, `usage {input, output, cacheRead, cacheWrite, reasoning,
totalTokens, cost}`, `input` excluding the cache's parts: prompt billed = input + cacheRead + cacheWrite
(1.6.0 against an OpenAI-compatible server: `prompt_tokens` split into cacheRead = `cached_tokens` and the
rest). Cache writes are counted as 5-minute writes. Output includes reasoning.

Unknown. pi 1.6.0 has no subagents of its own: every session is `pi/interactive`, print mode included.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from xshare.agents.common import same_file
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import content_text, holds_no_record, json_objects
from xshare.agents.common.stated import read_stated
from xshare.agents.common.v3_entries import EntryKind, Transcript
from xshare.agents.pi.tools import TOOLS
from xshare.measure.row import SessionRow
from xshare.state.paths import home as user_home

AGENT = "pi"
NAME = "pi"
FLAG = "pi_home"
KIND = "files"
ENTRIES = EntryKind(NAME, TOOLS, "bash", skipped_roles=frozenset({"system"}))
UNKNOWN_ENTRY, UNKNOWN_ROLE, NO_USAGE = ENTRIES.unknown_entry, ENTRIES.unknown_role, ENTRIES.no_usage
TRANSCRIPT = "pi session file"  # what its problems call the files and lines they were met in
UNREADABLE = "pi session files that vanished or could not be read"


def default_homes() -> list[Path]:
    agent = os.environ.get("PI_CODING_AGENT_DIR")
    if agent:
        homes = [Path(agent).expanduser()]
    else:
        base = user_home()
        homes = [base / ".pi" / "agent"] if base else []
    sessions = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    return homes + ([Path(sessions).expanduser()] if sessions else [])


def _sessions_folder(home: Path) -> Path:
    """An agent folder's `sessions`, or the home itself when it is a sessions folder (--session-dir)."""
    return home / "sessions" if (home / "sessions").is_dir() else home


def describe(homes: list[Path]) -> list[str]:
    return [f"pi sessions under {_sessions_folder(home)}/*/*.jsonl" for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    found: list[Path] = []
    for home in homes:
        found += sorted(_sessions_folder(home).glob("*/*.jsonl"))
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


class _PiTranscript(Transcript):
    """OpenClaw's entries and pi 1.6's own: usage entries, a compaction's usage, context edits."""

    def entry(self, entry: object) -> None:
        if not isinstance(entry, dict):
            return
        kind, usage = entry.get("type"), entry.get("usage")
        if kind == "usage":
            self.bill(usage if isinstance(usage, dict) else {}, self.replay.seen(entry.get("timestamp")))
        elif kind == "context_edit":
            self._context_edit(entry)
        else:
            if kind == "compaction" and isinstance(usage, dict):  # the summary's call, made before it applies
                self.bill(usage, self.replay.seen(entry.get("timestamp")))
            super().entry(entry)

    def _context_edit(self, entry: dict) -> None:
        """A target's text leaves the context; a replacement, if any, takes its place."""
        target = entry.get("targetId")
        if not isinstance(target, str):
            return
        self.replay.flush()
        self.replay.ledger.trim([target])
        replacement = entry.get("replacement")
        if replacement is not None:
            self.replay.add("conversation", content_text(replacement), target)


def _entries(path: Path, problems: Counter) -> list[dict] | None:
    try:
        data = read_stated(path)
    except OSError:
        problems[UNREADABLE] += 1
        return None
    entries = list(json_objects(data, problems, TRANSCRIPT))
    if not entries:  # no entry of pi's: no session, not one with no calls
        holds_no_record(TRANSCRIPT, data, problems)
    return entries


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """The session row of one session file (with `ledgers`, its detailed ledger too)."""
    entries = _entries(path, problems)
    if not entries:
        return []
    session_id = path.name.removesuffix(".jsonl").rpartition("_")[2]
    transcript = _PiTranscript(ENTRIES, session_id, counter, problems, ledgers is not None)
    for entry in entries:
        transcript.entry(entry)
    return [transcript.row("interactive", ledgers)]
