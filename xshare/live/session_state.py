"""A session's live state: the Claude Code hook keeps each session's account up to date as it is written.

Every update takes the session's lock, resumes the reader from its saved state, reads only the bytes
appended since (a half-written last line waits for the next call; a file that shrank or was replaced is
read again from the start), and saves the state and a small summary atomically. It is the same reader
and ledger the report runs, so the live row equals the retrospective one, token for token. The hook
(live/hook.py) and its warm worker (live/worker.py) both run `update`; agents/claude_code/live_state.py
reads a state back.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from xshare import METHOD_VERSION
from xshare.agents.claude_code.live_state import state_file, with_family
from xshare.live.log import log
from xshare.state.paths import file_name, html_file, line_file, live_dir
from xshare.state.private import read_regular

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing (a few ms of every idle call); checkers see True
if TYPE_CHECKING:  # a hot path: the types only for the type checker, never loaded by the idle call
    from xshare.live.summary import LiveSummary
    from xshare.measure.row import SessionRow
    from xshare.measure.tokens import Counter

# the reader, the tokenizer and orjson are imported only once there is work to do: the idle call
# (nothing appended since the last one) is the common case and must stay cheap


class _LazyCount:
    """A token counter that loads the tokenizer on its first use, so an idle call never pays for it."""

    def __init__(self, choice) -> None:
        self.choice = choice
        self.name = choice.name  # what its rows say, as the saved state does
        self._counter: Counter | None = None

    def count(self, text: str) -> int:
        if self._counter is None:
            from xshare.measure.tokens import Counter

            self._counter = Counter(self.choice, warn=log)  # counts other processes kept are read
        return self._counter.count(text)

    def flush(self) -> None:
        if self._counter is not None:
            self._counter.flush()

    @property
    def fallbacks(self) -> int:
        return self._counter.fallbacks if self._counter is not None else 0


def _resume(file, choice, counter: _LazyCount):
    from xshare.agents.claude_code.transcript import ClaudeTranscript
    from xshare.state.store import read_json

    saved = read_json(state_file(file.session_id))
    if isinstance(saved, dict) and saved.get("method") == METHOD_VERSION and saved.get("tokenizer") == choice.name:
        try:
            return ClaudeTranscript.from_state(saved["reader"], file, counter)
        except (KeyError, TypeError, ValueError):
            pass  # a state from a broken write or an older layout: read the transcript again
    return ClaudeTranscript(file, counter)


def is_current(path: Path, session_id: str, tokenizer: str | None = None) -> bool:
    """True when the saved summary already covers every byte of the transcript (the common call): same
    size and modification time (a file overwritten in place with as many bytes changes only the latter)."""
    try:
        summary = json.loads(read_regular(line_file(session_id)))  # a FIFO in its place is refused
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return (isinstance(summary, dict) and summary.get("offset") == stat.st_size
            and summary.get("mtime_ns") == stat.st_mtime_ns and summary.get("method") == METHOD_VERSION
            and tokenizer in (None, summary.get("tokenizer")))


def update(path: Path, choice=None) -> SessionRow | None:
    """Bring one transcript's live state up to date; returns its row (None if it already was)."""
    from xshare.agents.claude_code.transcript import describe
    from xshare.measure import tokens
    from xshare.state.store import atomic_write, dumps, locked

    file = describe(path)
    choice = choice or tokens.choose()
    with locked(live_dir() / f"{file_name(file.session_id)}.lock"):
        if is_current(path, file.session_id, choice.name):
            return None
        counter = _LazyCount(choice)
        transcript = _resume(file, choice, counter)
        transcript.catch_up()
        counter.flush()  # the new counts, for the report and the other sessions' updates
        if transcript.unreadable:  # missing, unreadable, a folder, a FIFO: say so, keep what was measured
            log(f"transcript of session {file.session_id} could not be read ({transcript.unreadable}); "
                 "its live ledger is left as it was")
            return None
        try:  # the state first: row() closes the call still open, which a later line may yet revise
            atomic_write(state_file(file.session_id), dumps(
                {"method": METHOD_VERSION, "tokenizer": choice.name, "reader": transcript.to_state()}))
            row = transcript.row()
            shown = with_family(row, file, choice, update)
            atomic_write(line_file(file.session_id), dumps(summary(shown, transcript.offset, path,
                                                                   transcript.mtime_ns, transcript.ledger.watch)))
        except OSError as error:  # a dangling symlink or a folder where a state file goes, a full disk
            log(f"the live state of session {file.session_id} could not be saved ({error.strerror or error}); "
                "it is left as it was")
            return None
        return shown


def summary(row: SessionRow, offset: int, path: Path, mtime_ns: int | None = None, watch=None) -> LiveSummary:
    """What the status line shows, precomputed: it must never tokenize or read history itself. `watch`
    (the ledger's economics.Watch) adds the last call, the rebuilds and the /compact nudge."""
    from xshare.measure.ledger import UNEXPLAINED, bill_short  # loaded already by the update that calls this

    short = bill_short(row["context_tokens"], row["prompt_tokens_billed"])
    return {
        "method": METHOD_VERSION,
        "tokenizer": row["tokenizer"],
        "offset": offset,
        "mtime_ns": mtime_ns,  # of the transcript as read
        "transcript": str(path),
        "updated": time.time(),
        "api_calls": row["api_calls"],
        # the ledger's invariant once more, where the line is made: a share the bill cannot support is unknown
        "exploration_share_of_context": None if short else row["exploration_share_of_context"],
        "exploration_share_of_prompt": None if short else row["exploration_share_of_prompt"],
        "recorded_over_billed": row["recorded_over_billed"],
        "unknown_because": UNEXPLAINED if short else None,
        "compactions": row["compactions"],
        "html": str(html_file(row["id"])),
        **_economics(row, watch),
    }


def _economics(row: SessionRow, watch) -> dict:
    """The cache figures the status line shows (`{last}`, `{session}`, `{nudge}`, `{rebuilds}`), by the
    HTML page's weights and rules; a rebuild is `rebuild_now` while it is the latest call, so the line
    shows it with its cause once, at the next update, and not again after the next call."""
    from xshare.measure.economics import weighted

    usage = row.get("usage") or {}
    figures = {"usage": dict(usage), "weighted": weighted(usage)}
    if watch is None:
        return figures
    last, rebuild = watch.last, watch.last_rebuild
    return figures | {
        "last": last and {"prompt": last["prompt"], "usage": last["usage"]},
        "last_context": (last or {}).get("context"),
        "rebuilds": watch.rebuilds,
        "last_rebuild": rebuild and {"cause": rebuild["cause"], "detail": rebuild["detail"]},
        "rebuild_now": bool(rebuild and last and rebuild["call"] == last["at"]),
        "nudge": watch.nudge(),
    }
