"""The live ledger: the Claude Code hook keeps each session's account up to date as it is written.

Every hook call takes the session's lock, resumes the reader from its saved state, reads only the
bytes appended since (a half-written last line waits for the next call; a file that shrank or was
replaced is read again from the start), and saves the state and a small summary atomically. It is the
same reader and ledger the report runs, so the live row equals the retrospective one, token for token.

The tokenizer (about 0.4 s to load) is loaded only when there are new bytes to count; a call with
nothing new returns after two stats and a small JSON read. The hook is registered async, so Claude
Code never waits for it.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from xshare import METHOD_VERSION
from xshare import tokens as tokenizers
from xshare.paths import file_name, html_file, line_file, live_dir, state_dir
from xshare.sources.claude import ClaudeTranscript, TranscriptFile, describe
from xshare.store import atomic_write, dumps, locked, read_json

_LOG_LIMIT = 1 << 20


def state_file(session_id: str) -> Path:
    return live_dir() / f"{file_name(session_id)}.state.json"


class _LazyCount:
    """A token counter that loads the tokenizer on its first use, so an idle call never pays for it."""

    def __init__(self, choice: tokenizers.TokenizerChoice) -> None:
        self.choice = choice
        self._counter: tokenizers.Counter | None = None

    def __call__(self, text: str) -> int:
        if self._counter is None:
            self._counter = tokenizers.Counter(self.choice)
        return self._counter.count(text)


def _resume(file: TranscriptFile, choice: tokenizers.TokenizerChoice) -> ClaudeTranscript:
    count = _LazyCount(choice)
    saved = read_json(state_file(file.session_id))
    if isinstance(saved, dict) and saved.get("method") == METHOD_VERSION and saved.get("tokenizer") == choice.name:
        try:
            return ClaudeTranscript.from_state(saved["reader"], file, count, choice.name)
        except (KeyError, TypeError, ValueError):
            pass  # a state from a broken write or an older layout: read the transcript again
    return ClaudeTranscript(file, count, choice.name)


def _unchanged(file: TranscriptFile, choice: tokenizers.TokenizerChoice) -> bool:
    """True when the summary already covers every byte of the transcript (the common hook call)."""
    summary = read_json(line_file(file.session_id))
    try:
        size = file.path.stat().st_size
    except OSError:
        return False
    return (isinstance(summary, dict) and summary.get("offset") == size and summary.get("tokenizer") == choice.name
            and summary.get("method") == METHOD_VERSION)


def update(path: Path, choice: tokenizers.TokenizerChoice | None = None) -> dict | None:
    """Bring one transcript's live state up to date; returns its row (None if nothing was read)."""
    file = describe(path)
    choice = choice or tokenizers.choose()
    with locked(live_dir() / f"{file_name(file.session_id)}.lock"):
        if _unchanged(file, choice):
            return None
        transcript = _resume(file, choice)
        transcript.catch_up()
        row = transcript.row()
        atomic_write(state_file(file.session_id), dumps(
            {"method": METHOD_VERSION, "tokenizer": choice.name, "reader": transcript.to_state()}))
        atomic_write(line_file(file.session_id), dumps(summary(row, transcript.offset, path)))
        return row


def summary(row: dict, offset: int, path: Path) -> dict:
    """What the status line shows, precomputed: it must never tokenize or read history itself."""
    return {
        "method": METHOD_VERSION,
        "tokenizer": row["tokenizer"],
        "offset": offset,
        "transcript": str(path),
        "updated": time.time(),
        "api_calls": row["api_calls"],
        "exploration_share_of_context": row["exploration_share_of_context"],
        "exploration_share_of_prompt": row["exploration_share_of_prompt"],
        "recorded_over_billed": row["recorded_over_billed"],
        "compactions": row["compactions"],
        "html": str(html_file(row["id"])),
    }


def live_row(session_id: str, choice: tokenizers.TokenizerChoice | None = None) -> dict | None:
    """A session's row from its live state, if the hook has one under the current tokenizer."""
    choice = choice or tokenizers.choose()
    saved = read_json(state_file(session_id))
    if not isinstance(saved, dict) or saved.get("method") != METHOD_VERSION or saved.get("tokenizer") != choice.name:
        return None
    summary_now = read_json(line_file(session_id))
    path = Path(summary_now["transcript"]) if isinstance(summary_now, dict) else Path(f"{session_id}.jsonl")
    try:
        # no bytes are read here, so no counter is needed
        return ClaudeTranscript.from_state(saved["reader"], describe(path), None, choice.name).row()
    except (KeyError, TypeError, ValueError):
        return None


def transcripts_of(payload: dict) -> list[Path]:
    """The transcript files a hook call is about: the session's, and a finished subagent's."""
    found = []
    for key in ("transcript_path", "agent_transcript_path"):
        value = payload.get(key)
        if isinstance(value, str) and value.endswith(".jsonl"):
            found.append(Path(value).expanduser())
    return found


def run_hook(stdin: bytes) -> None:
    """`xshare hook`: never prints, never fails; problems go to the log in xshare's state directory."""
    try:
        from xshare.store import loads

        payload = loads(stdin) if stdin.strip() else {}
        if isinstance(payload, dict):
            for path in transcripts_of(payload):
                update(path)
    except Exception:  # the hook must exit 0 whatever happens; the log says what went wrong
        _log(traceback.format_exc())


def _log(text: str) -> None:
    try:
        log = state_dir() / "logs" / "hook.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        mode = "w" if log.exists() and log.stat().st_size > _LOG_LIMIT else "a"
        with open(log, mode, encoding="utf-8") as handle:
            handle.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}\n{text}\n")
    except OSError:
        pass


def main() -> int:
    run_hook(sys.stdin.buffer.read())
    return 0
