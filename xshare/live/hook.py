"""The live ledger: the Claude Code hook keeps each session's account up to date as it is written.

Every hook call takes the session's lock, resumes the reader from its saved state, reads only the
bytes appended since (a half-written last line waits for the next call; a file that shrank or was
replaced is read again from the start), and saves the state and a small summary atomically. It is the
same reader and ledger the report runs, so the live row equals the retrospective one, token for token.

The tokenizer (about 0.4 s to load) is loaded only when there are new bytes to count, and then once per
idle period: a call with new bytes hands the paths to a warm worker (xshare/live/worker.py) that runs this
same update with the tokenizer already loaded; a call with nothing new returns after two stats and a
small JSON read. The hook is registered async, so Claude Code never waits for it.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

from xshare import METHOD_VERSION
from xshare.state.paths import file_name, hook_log, html_file, line_file, live_dir
from xshare.state.private import read_regular

# the reader, the tokenizer and orjson are imported only once there is work to do: the idle call
# (nothing appended since the last one) is the common case and must stay cheap
_LOG_LIMIT = 1 << 20


def state_file(session_id: str) -> Path:
    return live_dir() / f"{file_name(session_id)}.state.json"


class _LazyCount:
    """A token counter that loads the tokenizer on its first use, so an idle call never pays for it."""

    def __init__(self, choice) -> None:
        self.choice = choice
        self._counter = None

    def __call__(self, text: str) -> int:
        if self._counter is None:
            from xshare.measure.tokens import Counter

            self._counter = Counter(self.choice, warn=log)  # counts other processes kept are read
        return self._counter.count(text)

    def flush(self) -> None:
        if self._counter is not None:
            self._counter.flush()


def _resume(file, choice, count):
    from xshare.sources.claude.transcript import ClaudeTranscript
    from xshare.state.store import read_json

    saved = read_json(state_file(file.session_id))
    if isinstance(saved, dict) and saved.get("method") == METHOD_VERSION and saved.get("tokenizer") == choice.name:
        try:
            return ClaudeTranscript.from_state(saved["reader"], file, count, choice.name)
        except (KeyError, TypeError, ValueError):
            pass  # a state from a broken write or an older layout: read the transcript again
    return ClaudeTranscript(file, count, choice.name)


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


def update(path: Path, choice=None) -> dict | None:
    """Bring one transcript's live state up to date; returns its row (None if it already was)."""
    from xshare.measure import tokens
    from xshare.sources.claude.transcript import describe
    from xshare.state.store import atomic_write, dumps, locked

    file = describe(path)
    choice = choice or tokens.choose()
    with locked(live_dir() / f"{file_name(file.session_id)}.lock"):
        if is_current(path, file.session_id, choice.name):
            return None
        count = _LazyCount(choice)
        transcript = _resume(file, choice, count)
        transcript.catch_up()
        count.flush()  # the new counts, for the report and the other sessions' updates
        if transcript.unreadable:  # missing, unreadable, a folder, a FIFO: say so, keep what was measured
            log(f"transcript of session {file.session_id} could not be read ({transcript.unreadable}); "
                 "its live ledger is left as it was")
            return None
        try:  # the state first: row() closes the call still open, which a later line may yet revise
            atomic_write(state_file(file.session_id), dumps(
                {"method": METHOD_VERSION, "tokenizer": choice.name, "reader": transcript.to_state()}))
            row = transcript.row()
            shown = _with_family(row, file, choice, update)
            atomic_write(line_file(file.session_id), dumps(summary(shown, transcript.offset, path,
                                                                   transcript.mtime_ns, transcript.ledger.watch)))
        except OSError as error:  # a dangling symlink or a folder where a state file goes, a full disk
            log(f"the live state of session {file.session_id} could not be saved ({error.strerror or error}); "
                "it is left as it was")
            return None
        return shown


def _with_family(row: dict, file, choice, member_row) -> dict:
    """A session's row with the calls Claude Code billed but wrote into none of its files, from the
    rows of its subagent files (`member_row(path, choice)`, or their live state when that is None)."""
    if not row.get("cost_state"):
        return row
    from xshare.measure.family import complete_with_unrecorded
    from xshare.sources.claude.transcript import family_files

    family = []
    for member in family_files(file):
        member_now = member_row(member.path, choice) or live_row(member.session_id, choice)
        if member_now is not None:
            family.append(member_now)
    return complete_with_unrecorded(row, family)


def summary(row: dict, offset: int, path: Path, mtime_ns: int | None = None, watch=None) -> dict:
    """What the status line shows, precomputed: it must never tokenize or read history itself. `watch`
    (the ledger's economics.Watch) adds the last call, the rebuilds and the /compact nudge."""
    return {
        "method": METHOD_VERSION,
        "tokenizer": row["tokenizer"],
        "offset": offset,
        "mtime_ns": mtime_ns,  # of the transcript as read
        "transcript": str(path),
        "updated": time.time(),
        "api_calls": row["api_calls"],
        "exploration_share_of_context": row["exploration_share_of_context"],
        "exploration_share_of_prompt": row["exploration_share_of_prompt"],
        "recorded_over_billed": row["recorded_over_billed"],
        "compactions": row["compactions"],
        "html": str(html_file(row["id"])),
        **_economics(row, watch),
    }


def _economics(row: dict, watch) -> dict:
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
        "rebuilds": watch.rebuilds,
        "last_rebuild": rebuild and {"cause": rebuild["cause"], "detail": rebuild["detail"]},
        "rebuild_now": bool(rebuild and last and rebuild["call"] == last["at"]),
        "nudge": watch.nudge(),
    }


def live_row(session_id: str, choice=None) -> dict | None:
    """A session's row from its live state, if the hook keeps one under the current tokenizer (with
    the calls its subagent files' live states and Claude Code's usage totals show it did not record)."""
    from xshare.measure import tokens
    from xshare.sources.claude.transcript import ClaudeTranscript, describe
    from xshare.state.store import read_json

    choice = choice or tokens.choose()
    saved = read_json(state_file(session_id))
    if not isinstance(saved, dict) or saved.get("method") != METHOD_VERSION or saved.get("tokenizer") != choice.name:
        return None
    summary_now = read_json(line_file(session_id))
    path = Path(summary_now["transcript"]) if isinstance(summary_now, dict) else Path(f"{session_id}.jsonl")
    file = describe(path)
    try:
        # no bytes are read here, so no counter is needed
        row = ClaudeTranscript.from_state(saved["reader"], file, None, choice.name).row()
    except (KeyError, TypeError, ValueError):
        return None
    return _with_family(row, file, choice, lambda path, choice: None)


def transcripts_of(payload: dict) -> list[tuple[Path, str | None]]:
    """The transcripts a hook call is about, each with its session id when the payload names it: the
    session's own (its file stem is the session id) and, at SubagentStop, the subagent's."""
    found = []
    session = payload.get("session_id")
    for key in ("transcript_path", "agent_transcript_path"):
        value = payload.get(key)
        if isinstance(value, str) and value.endswith(".jsonl"):
            path = Path(value).expanduser()
            found.append((path, session if key == "transcript_path" and path.stem == session else None))
    return found


# the turns' ends: the history gains a line per turn, not one per tool batch
REMEMBER_ON = ("Stop", "SubagentStop", "PreCompact", "SessionEnd")


def run_hook(stdin: bytes) -> None:
    """`xshare hook`: never prints, never fails; problems go to the log in xshare's state directory."""
    try:
        payload = json.loads(stdin) if stdin.strip() else {}
        starting = isinstance(payload, dict) and payload.get("hook_event_name") == "SessionStart"
        if starting:
            _start_plugin_env()
        stale = []
        for path, session_id in transcripts_of(payload) if isinstance(payload, dict) else ():
            if starting and not os.path.lexists(path):
                continue  # Claude Code writes the transcript at the first message: not there yet is normal
            if session_id is None or not is_current(path, session_id):
                stale.append(path)
        if stale and _cannot_keep_state():
            return  # a read-only disk, XSHARE_HOME a file, no home: nothing counted could be kept
        if stale and not _ask_worker(stale):
            for path in stale:
                update(path)
        if stale and payload.get("hook_event_name") in REMEMBER_ON:
            _remember(stale)
    except Exception:  # the hook must exit 0 whatever happens; the log says what went wrong
        log(traceback.format_exc())


def _remember(paths: list[Path]) -> None:
    """At a turn's end: the sessions' rows, as the live ledger has them, go into xshare's history (which
    outlives the transcripts); the update itself may have run in the worker."""
    from xshare.report.history import remember
    from xshare.sources.claude.transcript import describe

    rows = [row for path in paths if path.is_file() and (row := live_row(describe(path).session_id))]
    if rows:
        remember(rows)


def _cannot_keep_state() -> bool:
    """The state folder cannot be written: every call would read the whole transcript again for
    nothing. The status line tells the user (xshare.statusline); the log is in that folder too."""
    from xshare.state.private import writable

    return writable() is not None


def _ask_worker(paths: list[Path]) -> bool:
    """The warm worker (xshare/live/worker.py) runs the same update with the tokenizer already loaded."""
    try:
        from xshare.live import worker

        return worker.ask(paths)
    except Exception:  # a worker that cannot help must not stop the hook counting itself
        log(traceback.format_exc())
        return False


def _start_plugin_env() -> None:
    """Once per session: build the plugin's own env in the background if it is missing or stale."""
    try:
        from xshare.install.plugin_env_build import start_build

        start_build()
    except Exception:  # the session's ledger matters more than the env: log and go on
        log(traceback.format_exc())


def log(text: str) -> None:
    """Say in the hook's log (private, in the state folder) what went wrong: the hook never prints."""
    from xshare.state.private import append_text

    try:
        path = hook_log()
    except OSError:  # no state folder at all: nowhere to say it
        return
    append_text(path, f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}\n{text}\n", _LOG_LIMIT)


def main() -> int:
    run_hook(sys.stdin.buffer.read())
    return 0
