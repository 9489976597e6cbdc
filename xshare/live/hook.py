"""The Claude Code hook (`xshare hook`, after every tool batch and at a session's start and end).

The tokenizer (about 0.4 s to load) is loaded only when there are new bytes to count, and then once per
idle period: a call with new bytes hands the paths to a warm worker (live/worker.py) that runs the same
update (live/session_state.py) with the tokenizer already loaded; a call with nothing new returns after
two stats and a small JSON read. The hook is registered async, so Claude Code never waits for it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from xshare.agents.claude_code.live_state import live_row
from xshare.live.log import log_exception
from xshare.live.session_state import is_current, update
from xshare.state.private import writable

# the hook's own imports stay light, as an idle call must be cheap: what only some calls need is imported
# inside the function that needs it


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
        if starting and not _start_plugin_env():
            _start_background()  # not beside an env build: one heavy thing at a time, the pass waits a session
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
            _remember(stale, payload.get("cwd"))
    except Exception:  # the hook must exit 0 whatever happens; the log says what went wrong
        log_exception()


def _remember(paths: list[Path], cwd: object = None) -> None:
    """At a turn's end: the sessions' rows, as the live ledger has them, go into xshare's history (which
    outlives the transcripts); the update itself may have run in the worker."""
    from xshare.agents.claude_code.transcript import describe
    from xshare.report.history import remember  # only a turn's end needs the history

    rows = [row for path in paths if path.is_file() and (row := live_row(describe(path).session_id))]
    if rows:
        remember(rows)
        _export_if_wanted(rows, cwd if isinstance(cwd, str) else None)


# XSHARE_OTLP: off (0, false) never exports; on (1, true) exports where the standard OTEL_EXPORTER_OTLP_*
# variables say; a URL exports there. Unset, the hook exports when Claude Code itself exports metrics over OTLP
# (CLAUDE_CODE_ENABLE_TELEMETRY=1 and otlp among OTEL_METRICS_EXPORTER), to the same collector
OTLP_SETTING = "XSHARE_OTLP"


def otlp_wanted(environ) -> str | None:
    """Where the hook exports the session's counters at a turn's end: an endpoint, "" for the standard
    variables' own, or None (the default: no export)."""
    setting = environ.get(OTLP_SETTING, "").strip()
    if setting.lower() in ("off", "0", "false", "no"):
        return None
    if setting.lower() in ("on", "1", "true", "yes"):
        return ""
    if setting:
        return setting
    telemetry = environ.get("CLAUDE_CODE_ENABLE_TELEMETRY", "").strip().lower() in ("1", "true")
    exporters = {word.strip() for word in environ.get("OTEL_METRICS_EXPORTER", "").split(",")}
    return "" if telemetry and "otlp" in exporters else None


def _export_if_wanted(rows: list, cwd: str | None) -> None:
    """The turn's rows as OpenTelemetry counters (export/otlp.py, which loads the SDK: only when switched on),
    with the OTEL_* settings Claude Code exports its own metrics with (its settings files' `env`: it passes
    hooks none of them); a failure is one line in the hook's log a day, never the hook's end."""
    from xshare.agents.claude_code.telemetry import telemetry_env

    environ = {**telemetry_env(cwd), **os.environ}
    endpoint = otlp_wanted(environ)
    if endpoint is None:
        return
    os.environ.update({name: value for name, value in environ.items() if name.startswith("OTEL_")})  # the SDK's
    from xshare.export.otlp import ExportError, export  # only an export switched on loads OpenTelemetry
    from xshare.install.plugin_env import log_once

    try:
        export(rows, endpoint or None)
    except ExportError as error:
        log_once(f"xshare hook: could not export over OpenTelemetry: {error}")


def _cannot_keep_state() -> bool:
    """The state folder cannot be written: every call would read the whole transcript again for
    nothing. The status line tells the user (xshare.statusline); the log is in that folder too."""
    return writable() is not None


def _ask_worker(paths: list[Path]) -> bool:
    """The warm worker (xshare/live/worker.py) runs the same update with the tokenizer already loaded."""
    try:
        from xshare.live import worker  # only a call with new bytes talks to the worker

        return worker.ask(paths)
    except Exception:  # a worker that cannot help must not stop the hook counting itself
        log_exception()
        return False


def _start_plugin_env() -> bool:
    """Once per session: build the plugin's own env in the background if it is missing or stale; whether a
    build was started."""
    try:
        from xshare.install.plugin_env_build import start_build  # SessionStart only

        return start_build()
    except Exception:  # the session's ledger matters more than the env: log and go on
        log_exception()
        return False


def _start_background() -> None:
    """Once per session: the history measured into the report's caches by a detached, low-priority pass
    (live/background.py), unless one ran lately, runs now or is turned off."""
    try:
        from xshare.live.background import start  # SessionStart only

        start()
    except Exception:  # the first report is then merely cold
        log_exception()


def main() -> int:
    run_hook(sys.stdin.buffer.read())
    return 0
