"""The Hermes-Agent plugin: `/xshare` inside a session, `hermes xshare ...` in the terminal.

Hermes finds it through the entry point group `hermes_agent.plugins` (naming this module) and loads it only
when the user enabled it (`hermes plugins enable xshare`; `disable` switches it off). Importing this module
does nothing; `register(ctx)` registers, and starts the background pass that fills the report's caches
(live/background.py: detached, low priority, at most once an hour, off with XSHARE_NO_BACKGROUND=1).

The hooks run on the agent's thread, so they only count: calls and the prompt tokens the provider reported
per call, per session, kept in memory and written to xshare's state directory at the end of each turn (a
small JSON file other tools may poll). The share itself is never computed twice: `/xshare` reads the
session's own rows from state.db, read-only, with the collector `xshare report` uses, so what it prints
for a finished session is exactly that session's row in the report.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from xshare.printing import pct, printable, usage_kinds

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing (Hermes's start-up); checkers see True
if TYPE_CHECKING:
    from xshare.measure.row import SessionRow

# Hermes imports this module at its start-up (an enabled plugin), so the rest of xshare is imported inside
# the functions that need it: a hook counts with nothing more, /xshare loads the reader and tokenizer

NAME = "xshare"
HOOKS = ("on_session_start", "post_api_request", "on_session_end", "on_session_finalize")

_lock = threading.Lock()
_live: dict[str, dict] = {}  # session id -> what the hooks saw in this process
_by_task: dict[str, str] = {}  # task id -> its latest session id (rotation changes the id mid-task)
_last_session: list[str | None] = [None]
_counter = None  # the tokenizer, loaded on the first /xshare, never by a hook


def register(ctx, run_cli) -> None:
    """Called (through xshare/hermes_plugin.py) by Hermes's plugin loader, only for an enabled plugin;
    `run_cli(argv) -> int` runs `xshare ARGS` for `hermes xshare ARGS` (the CLI sits above this layer)."""
    known = _valid_hooks()
    for hook, callback in zip(HOOKS, (_on_session_start, _on_api_response, _on_turn_end, _on_finalize), strict=True):
        if known is None or hook in known:  # an older Hermes warns about hooks it does not have
            ctx.register_hook(hook, callback)
    ctx.register_command(NAME, command, description="Exploration share of this session's context and bill",
                         args_hint="[session id]")
    ctx.register_cli_command(NAME, "Exploration share of your agents' token bill (xshare)", _setup_cli,
                             lambda args: _run_cli(args, run_cli),
                             description="Runs xshare; `hermes xshare` alone is `xshare report`.")
    _start_background()


def _start_background() -> None:
    """At plugin load: the history measured into the report's caches by a detached, low-priority pass
    (xshare/live/background.py), unless one ran lately, runs now or is turned off; never a problem for Hermes."""
    try:
        from xshare.live.background import start

        start()
    except Exception:  # the first report is then merely cold; the hook's log says why
        from xshare.live.log import log_exception

        log_exception()


def _valid_hooks() -> set[str] | None:
    try:
        from hermes_cli.plugins import VALID_HOOKS
    except Exception:
        return None
    return set(VALID_HOOKS)


# --- hooks: count, nothing more -------------------------------------------------------------------


def _now() -> str:
    moment = datetime.now(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _record(session_id: object, task_id: object = None, **fields) -> dict | None:
    if not isinstance(session_id, str) or not session_id:
        return None
    with _lock:
        record = _live.get(session_id)
        if record is None:
            previous = _by_task.get(task_id) if isinstance(task_id, str) and task_id else None
            record = _live[session_id] = {
                "session_id": session_id, "continues": previous if previous != session_id else None,
                "calls": 0, "prompt_tokens": 0, "first_seen": _now(), "last_seen": None,
                "hermes_home": str(_hermes_home()),
            }
        if isinstance(task_id, str) and task_id:
            _by_task[task_id] = session_id  # a rotation child shows up under the same task with a new id
        for name, value in fields.items():
            if isinstance(value, str) and value:
                record[name] = value
        record["last_seen"] = _now()
        _last_session[0] = session_id
        return record


def _on_session_start(session_id=None, model=None, platform=None, **_) -> None:
    _record(session_id, model=model, platform=platform)


def _on_api_response(session_id=None, task_id=None, usage=None, model=None, platform=None, **_) -> None:
    record = _record(session_id, task_id, model=model, platform=platform)
    if record is None:
        return
    prompt = 0
    if isinstance(usage, dict):
        given = usage.get("prompt_tokens")
        prompt = given if isinstance(given, int) else sum(
            value for name in ("input_tokens", "cache_read_tokens", "cache_write_tokens")
            if isinstance(value := usage.get(name), int))
    with _lock:
        record["calls"] += 1
        record["prompt_tokens"] += max(prompt, 0)
        if isinstance(usage, dict):
            _watch_call(record, max(prompt, 0), usage, model)


# post_api_request's usage (CanonicalUsage) by the ledger's kinds; Hermes reports no cache lifetime: 5 minutes
_KINDS = {"input": "input_tokens", "cache_read": "cache_read_tokens", "cache_write_5m": "cache_write_tokens",
          "output": "output_tokens"}


def _watch_call(record: dict, prompt: int, usage: dict, model: object) -> None:
    """The call through economics.Watch (the HTML page's rebuild rule), kept in the record: the last call
    and the cache rebuilds as /xshare shows them. Cheap: a few numbers per call."""
    from xshare.measure.economics import Watch

    kinds = {kind: value for kind, name in _KINDS.items() if isinstance(value := usage.get(name), int)}
    watch = Watch(record.get("watch"))
    watch.call(prompt, kinds, model=model if isinstance(model, str) else None, time=_now())
    record["watch"] = watch.to_state()


def _on_turn_end(session_id=None, task_id=None, **_) -> None:
    record = _record(session_id, task_id)
    if record is not None:
        _save(record)


def _on_finalize(session_id=None, **_) -> None:
    record = _live.get(session_id) if isinstance(session_id, str) else None
    if record is not None:
        _save(record)


def live_dir() -> Path:
    from xshare.state.store import state_dir

    return state_dir() / "hermes" / "live"


def _save(record: dict) -> None:
    """One small file per session; never let a full disk or a bad folder reach the agent."""
    try:
        from xshare.state.paths import file_name
        from xshare.state.store import atomic_write, dumps

        with _lock:
            data = dumps(dict(record))
        atomic_write(live_dir() / f"{file_name(record['session_id'])}.json", data)
    except Exception:
        pass


# --- /xshare ------------------------------------------------------------------------------------------


def _hermes_home() -> Path:
    try:
        from hermes_constants import get_hermes_home

        return Path(get_hermes_home())
    except Exception:
        explicit = os.environ.get("HERMES_HOME")
        from xshare.state.paths import home

        user = home()  # None with no home folder (cron, docker --user): a folder that is never there
        return Path(explicit).expanduser() if explicit else (user or Path("/nonexistent")) / ".hermes"


def current_session_id() -> str | None:
    """The session this command runs in. Hermes passes no id, and sets HERMES_SESSION_ID only when the
    agent starts (the first message), so before that ask the host that runs the command: the classic CLI
    or the TUI's backend, which both hold the id of the session they show from the start."""
    try:
        from gateway.session_context import get_session_env

        found = get_session_env("HERMES_SESSION_ID")
        if found:
            return found
    except Exception:
        pass
    return os.environ.get("HERMES_SESSION_ID") or _host_session_id() or _last_session[0]


def _host_session_id() -> str | None:
    """The classic CLI registers itself with the plugin manager; the TUI's backend keeps its sessions in
    tui_gateway.server (only looked at when Hermes itself imported it: this process is that backend)."""
    try:
        from hermes_cli.plugins import get_plugin_manager

        found = getattr(getattr(get_plugin_manager(), "_cli_ref", None), "session_id", None)
        if isinstance(found, str) and found:
            return found
    except Exception:
        pass
    server = sys.modules.get("tui_gateway.server")
    sessions = getattr(server, "_sessions", None)
    if not isinstance(sessions, dict):
        return None
    try:
        shown = [session for session in list(sessions.values()) if isinstance(session, dict)]
        latest = max(shown, key=lambda session: session.get("last_active") or 0, default=None)
    except Exception:
        return None
    found = latest.get("session_key") if latest else None
    return found if isinstance(found, str) and found else None


def _quiet(_message: str) -> None:
    """A count store that cannot be written only costs counting again: nothing to show the user."""


def measure_session(session_id: str, database: Path | None = None) -> tuple[SessionRow | None, Counter]:
    """The session's row from state.db (read-only), by the same code as `xshare report`."""
    global _counter
    from xshare.agents.hermes.state_db import read_database
    from xshare.measure import tokens

    if _counter is None:
        _counter = tokens.Counter(tokens.choose(), warn=_quiet)  # never print into Hermes's screen
    problems: Counter = Counter()
    path = database or _hermes_home() / "state.db"
    if not path.is_file():
        problems[f"no Hermes database at {path}"] += 1
        return None, problems
    rows = read_database(path, _counter, problems, only=session_id)
    _counter.flush()  # counts kept for the next /xshare and for `xshare report`
    return (rows[0] if rows else None), problems


def describe(row: SessionRow | None, live: dict | None, session_id: str) -> str:
    """What /xshare prints: this session's shares, calibration and calls."""
    if row is None:
        return f"xshare: nothing recorded in state.db yet for session {printable(session_id)}."
    lines = [
        f"xshare: session {printable(session_id)} ({printable(row['source'])})",
        f"  Exploration: {pct(row['exploration_share_of_context'], 'n/a')} of the recorded context, "
        f"{pct(row['exploration_share_of_prompt'], 'n/a')} of the billed prompt",
        f"  Recorded / billed: {pct(row['recorded_over_billed'], 'n/a')}; API calls: {row['api_calls']:,}; "
        f"prompt tokens billed: {row['prompt_tokens_billed']:,}",
        f"  NeuralMind block: {pct(_part(row, 'neuralmind'), 'n/a')}; edits: {pct(_part(row, 'edit'), 'n/a')}; "
        f"other shell: {pct(_part(row, 'shell'), 'n/a')}; compactions: {row['compactions']}",
    ]
    if row.get("unrecorded_calls"):
        tasks = ", ".join(f"{printable(task)} {count:,}" for task, count in (row.get("unrecorded_tasks") or {}).items())
        lines.append(f"  Billed calls state.db's messages do not show: {row['unrecorded_calls']:,} ({tasks}), "
                     f"{row['unrecorded_prompt_tokens']:,} prompt tokens (counted above as overhead)")
    if row.get("unrecorded_reviews"):
        from xshare.report.words import review_note

        lines.append(f"  Not counted: {review_note(row['unrecorded_reviews'])}")
    if live:
        lines.append(f"  Seen live by the plugin: {live['calls']:,} main-loop calls, "
                     f"{live['prompt_tokens']:,} prompt tokens")
    lines += _cache_lines(row, live)
    lines.append(f"  Tokenizer: {printable(row['tokenizer'])}")
    return "\n".join(lines)


def _cache_lines(row: SessionRow, live: dict | None) -> list[str]:
    """What the Claude Code status line's {session}, {last}, {rebuilds} and {nudge} say, as far as Hermes's
    data goes: state.db's totals by kind; the last call and the rebuilds only from the live hooks."""
    from xshare.measure.economics import Watch, weighted

    usage = row.get("usage") or {}
    lines = [f"  Session by kind: {weighted(usage):,.0f} weighted (as the HTML page weighs them): {usage_kinds(usage)}"]
    watch = Watch(live["watch"]) if live and isinstance(live.get("watch"), dict) else None
    if watch is None or watch.last is None:
        lines.append("  Last call and cache rebuilds: not seen live by the plugin in this process")
    else:
        last, rebuild = watch.last, watch.last_rebuild
        lines.append(f"  Last API call: {last['prompt']:,} prompt tokens ({usage_kinds(last['usage'])})")
        # the detail names models as the records spelled them: escaped, as every field from the data is
        cause = f" (last: {printable(rebuild['cause'])}, {printable(rebuild['detail'])})" if rebuild else ""
        lines.append(f"  Cache rebuilds seen live: {watch.rebuilds:,}{cause}")
    lines.append("  /compact nudge: not available (Hermes's hooks do not show what a compaction would leave)")
    return lines


def _part(row: SessionRow, category: str) -> float | None:
    context = row["context_tokens"]
    return row["billed_tokens"][category] / context if context else None


def command(raw_args: str = "") -> str:
    """The `/xshare` slash command; an argument names another session."""
    session_id = (raw_args or "").strip() or current_session_id()
    if not session_id:
        return "xshare: no session is active yet."
    try:
        row, problems = measure_session(session_id)
    except Exception as error:  # a slash command must never break the session
        return f"xshare: could not measure this session ({error.__class__.__name__}: {printable(error)})"
    text = describe(row, _live.get(session_id), session_id)
    for kind in sorted(problems):
        text += f"\n  ({printable(kind)})"
    return text


# --- hermes xshare ------------------------------------------------------------------------------------


def _setup_cli(parser) -> None:
    import argparse

    parser.add_argument("xshare_args", nargs=argparse.REMAINDER, metavar="ARGS",
                        help="arguments for xshare (default: report)")


def _run_cli(args, run_cli) -> int:
    argv = list(getattr(args, "xshare_args", None) or []) or ["report"]
    code = run_cli(argv)
    sys.stdout.flush()
    if code:
        raise SystemExit(code)  # Hermes ignores a handler's return value
    return code
